"""Message definitions of the wire protocol, validated on decode.

Every message is a JSON-compatible map with a ``type``. Requests may carry an
``id`` (string or integer) that the reply echoes. This module knows the shape
of every message both ways; :func:`validate` checks an incoming map and returns
either the map or a :class:`ProtocolError` value naming the problem. It never
raises on bad input. docs/PROTOCOL.md is the reference for people.

The module is long because it is the protocol's one catalogue: every message's
schema and its builder, both ways, beside the checks that hold a client's
message to those schemas (split, a message's shape and its check would live apart).
"""

from __future__ import annotations

import math
import typing
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, Final, TypeVar

from .errors import ERROR_CODES as ERROR_CODES
from .errors import ErrorCode as ErrorCode
from .requests import REQUESTS, ClientMessage

MAX_SAFE_INTEGER = 2**53 - 1
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,31}$"


class RoomStatus(StrEnum):
    """The ``status`` of a room: before its first game (or between games), while one runs, after the last."""

    WAITING = "waiting"
    PLAYING = "playing"
    FINISHED = "finished"


class GameStatus(StrEnum):
    """The ``status`` of a game: running, or how it ended (``game_over.status``, the stored records)."""

    RUNNING = "running"
    FINISHED = "finished"
    FORFEIT = "forfeit"
    ABORTED = "aborted"


@dataclass(frozen=True)
class ProtocolError:
    """A message that could not be accepted: an error code and a sentence for people."""

    code: str
    message: str
    id: str | int | None = None
    room: str | None = None  # the room the refused request named, as every error about a room's request says

    def to_message(self, **extra: Any) -> dict[str, Any]:
        """The ``error`` message the server sends for this problem."""
        msg = error(self.code, self.message, **extra)
        if self.id is not None:
            msg["id"] = self.id
        if self.room is not None:
            msg["room"] = self.room
        return msg


MAX_ROOM_NAME = 40  # the longest room name (generated names stay below it too)

# Field kinds: each is (python types, description used in error messages).
STR = ((str,), "a string")
INT = ((int,), "an integer")
NUM = ((int, float), "a number")
BOOL = ((bool,), "true or false")
MAP = ((dict,), "a map")
LIST = ((list,), "a list")
ANY = ((object,), "any value")
OPT_INT = ((int, type(None)), "an integer or null")
ROOM = STR


@dataclass(frozen=True)
class Schema:
    """Required and optional fields of one message type.

    For a client request, ``replies`` names the server messages that answer it: the first of
    them (or the first ``error``) sent to the requester carries the request's ``id``.
    """

    required: dict[str, tuple[tuple[type, ...], str]]
    optional: dict[str, tuple[tuple[type, ...], str]]
    doc: str
    replies: tuple[str, ...] = ()


def _schema(doc: str, required: dict | None = None, optional: dict | None = None,
            replies: tuple[str, ...] = ()) -> Schema:
    return Schema(required or {}, optional or {}, doc, replies)


def _kind(annotation: Any) -> tuple[tuple[type, ...], str]:
    """The field kind of a request field's annotation (``protocol.requests``)."""
    origin = typing.get_origin(annotation) or annotation
    kinds = {str: STR, int: INT, float: NUM, bool: BOOL, dict: MAP, list: LIST, Any: ANY}
    return kinds[origin]


def _request_schema(request: Any, replies: tuple[str, ...]) -> Schema:  # request: a TypedDict class
    fields = {name: _kind(hint) for name, hint in typing.get_type_hints(request).items() if name not in ("type", "id")}
    return Schema({k: v for k, v in fields.items() if k in request.__required_keys__},
                  {k: v for k, v in fields.items() if k not in request.__required_keys__},
                  " ".join((request.__doc__ or "").split()), replies)


CLIENT_MESSAGES: Final[dict[str, Schema]] = {kind: _request_schema(request, replies)
                                      for kind, (request, replies) in REQUESTS.items()}
"""What a client may send, by type: built from the ``TypedDict`` classes of ``protocol.requests``."""

# What the server sends. Required fields are always present (some may be null, as their kind
# says); optional ones appear only in the situations their description gives. Any message that
# answers a request carries that request's ``id`` as well (see ``Schema.replies``).
# Each message's schema is declared on the function that builds it, so the two are read together.

SERVER_MESSAGES: dict[str, Schema] = {}

_GAME_FIELDS = {
    "room": ROOM,
    "game": STR,
    "game_no": INT,
    "players": LIST,
    "seat": OPT_INT,
    "status": STR,
}
_POSITION_FIELDS = {
    "state": MAP,
    "to_move": OPT_INT,
    "clocks": MAP,
    "moves": LIST,
    "options": MAP,
    "record": STR,
}

_Builder = TypeVar("_Builder", bound=Callable[..., dict[str, Any]])


def _server(kind: str, doc: str, required: dict | None = None, optional: dict | None = None
            ) -> Callable[[_Builder], _Builder]:
    """Register the schema of server message ``kind`` on the function that builds it."""

    def register(builder: _Builder) -> _Builder:
        SERVER_MESSAGES[kind] = _schema(doc, required, optional)
        return builder

    return register


FEATURES: Final[tuple[str, ...]] = ("game_no",)
"""What a client may use that an older server refuses (an unknown field is a ``bad_message``), as ``welcome.features``
names it: ``game_no`` on ``move``, ``resign`` and ``offer_draw``. A client sends such a field only to a server that
names it here."""


@_server("welcome", "Login accepted: your name and convention, the server's version, whether the name is "
         "claimed, the game ids, the rooms where you hold a seat (resumed at once), a resume token that "
         "proves this identity when you log in again, and the features a client may use (FEATURES); house: the "
         "levels of house bots the server can start.",
         {"name": STR, "coords": STR, "server": STR, "claimed": BOOL, "games": LIST, "rooms": LIST,
          "resume": STR, "features": LIST},
         {"organiser": BOOL, "house": LIST})
def welcome(name: str, coords: str, server: str, claimed: bool, games: list[str], rooms: list[str],
            resume: str, organiser: bool = False, house: list[str] | None = None) -> dict[str, Any]:
    """The reply to ``login``."""
    msg = {"type": "welcome", "name": name, "coords": coords, "server": server, "claimed": claimed,
           "games": games, "rooms": rooms, "resume": resume, "features": list(FEATURES)}
    if organiser:
        msg["organiser"] = True
    if house:
        msg["house"] = house
    return msg


@_server("rooms", "The room listing: a list of room summaries; seeks: who waits for an opponent, on which "
         "settings.", {"rooms": LIST}, {"seeks": LIST})
def rooms(listing: list[dict[str, Any]], seeks: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The room listing (a reply, or a push to lobby watchers), with the seeks that wait when there are any."""
    msg: dict[str, Any] = {"type": "rooms", "rooms": listing}
    if seeks:
        msg["seeks"] = seeks
    return msg


@_server("room", "One room's summary (the reply to create_room).", {"room": MAP})
def room(summary: dict[str, Any]) -> dict[str, Any]:
    """The room a client created."""
    return {"type": "room", "room": summary}


@_server("joined", "You joined a room: your role, your seat (null for a spectator) and the room's summary.",
         {"room": ROOM, "role": STR, "seat": OPT_INT, "settings": MAP})
def joined(room: str, seat: int | None, settings: dict[str, Any]) -> dict[str, Any]:
    """You are in ``room``: as the player of ``seat``, or a spectator when it is None."""
    return {"type": "joined", "room": room, "role": "spectator" if seat is None else "player", "seat": seat,
            "settings": settings}


@_server("left", "You left a room.", {"room": ROOM})
def left(room: str) -> dict[str, Any]:
    """You left ``room``."""
    return {"type": "left", "room": room}


@_server("seated", "Somebody took or left a seat in a room you are in: both seats' names (null when free).",
         {"room": ROOM, "seats": LIST})
def seated(room: str, seats: list[str | None]) -> dict[str, Any]:
    """The seats of ``room`` changed."""
    return {"type": "seated", "room": room, "seats": seats}


@_server("game_start", "A game starts, or its full state on joining, resuming or asking for the state while "
         "it runs.", {**_GAME_FIELDS, **_POSITION_FIELDS}, {"paused": BOOL, "last_move": MAP, "idle": NUM,
                                                          "idle_left": NUM})
def game_start(**fields: Any) -> dict[str, Any]:
    """A running game's full state (fields as the schema lists them)."""
    return {"type": "game_start", **fields}


@_server("room_state", "The state of a room where no game runs (the reply to state): before the first game "
         "without a position; after a game with its final position and last_result.",
         _GAME_FIELDS, {**_POSITION_FIELDS, "last_result": MAP})
def room_state(**fields: Any) -> dict[str, Any]:
    """The state of a room where no game runs (fields as the schema lists them)."""
    return {"type": "room_state", **fields}


@_server("moved", "A move was accepted: in your coordinates and as notation, with both clocks and the seat to "
         "move (null when the move ended the game).",
         {"room": ROOM, "seq": INT, "seat": INT, "move": ANY, "notation": STR, "clocks": MAP, "to_move": OPT_INT})
def moved(room: str, seq: int, seat: int, move: Any, notation: str, clocks: dict[str, Any],
          to_move: int | None) -> dict[str, Any]:
    """Move number ``seq`` of the running game, by ``seat``."""
    return {"type": "moved", "room": room, "seq": seq, "seat": seat, "move": move, "notation": notation,
            "clocks": clocks, "to_move": to_move}


@_server("legal_moves", "The legal moves of the seat to move, in your coordinates.",
         {"room": ROOM, "moves": LIST})
def legal_moves(room: str, moves: list[Any]) -> dict[str, Any]:
    """The legal moves in ``room``."""
    return {"type": "legal_moves", "room": room, "moves": moves}


GAME_STATUSES = {
    GameStatus.FINISHED: "played to a result: a win or a draw (including resignations, agreed draws and flags)",
    GameStatus.FORFEIT: "not played: a player never came (a tournament game), or left before it began",
    GameStatus.ABORTED: "stopped without a result (the server was shutting down, or could not restore it)",
}
"""The ``status`` of a game that ended, in ``game_over`` and in the stored records."""


@_server("game_over", "The game ended: the winning seat (null for a draw or an aborted game), why, how "
         "(status: finished, forfeit or aborted), and whether the room plays another game. ratings (a rated "
         "result): each seat's rating after it (name, rating, deviation, change, provisional). unrated (a rated room's "
         "game that was not rated): why, e.g. it ended before both players had made two moves.",
         {"room": ROOM, "winner": OPT_INT, "reason": STR, "status": STR, "players": LIST, "record": STR,
          "clocks": MAP, "next_game": BOOL, "game_no": INT}, {"ratings": LIST, "unrated": STR})
def game_over(room: str, winner: int | None, reason: str, status: str, players: list[str], record: str,
              clocks: dict[str, Any], next_game: bool, game_no: int) -> dict[str, Any]:
    """The end of game ``game_no`` in ``room``."""
    return {"type": "game_over", "room": room, "winner": winner, "reason": reason, "status": status,
            "players": players, "record": record, "clocks": clocks, "next_game": next_game, "game_no": game_no}


@_server("player_away", "A player lost the connection and keeps the seat for grace seconds.",
         {"room": ROOM, "seat": INT, "name": STR, "grace": NUM})
def player_away(room: str, seat: int, name: str, grace: float) -> dict[str, Any]:
    """``name`` (in ``seat``) is away and has ``grace`` seconds to come back."""
    return {"type": "player_away", "room": room, "seat": seat, "name": name, "grace": grace}


@_server("player_back", "A player who was away came back.", {"room": ROOM, "seat": INT, "name": STR})
def player_back(room: str, seat: int, name: str) -> dict[str, Any]:
    """``name`` came back to ``seat``."""
    return {"type": "player_back", "room": room, "seat": seat, "name": name}


@_server("draw_offered", "A player offers a draw.", {"room": ROOM, "seat": INT})
def draw_offered(room: str, seat: int) -> dict[str, Any]:
    """``seat`` offers a draw."""
    return {"type": "draw_offered", "room": room, "seat": seat}


@_server("chat", "A chat line: plain text, never markup (show it as text).", {"room": ROOM, "from": STR, "text": STR})
def chat(room: str, sender: str, text: str) -> dict[str, Any]:
    """``sender`` said ``text`` in ``room``."""
    return {"type": "chat", "room": room, "from": sender, "text": text}


@_server("seeking", "Your seek is recorded and waits for an opponent: what it asks for. When a matching "
         "seek arrives, the server opens a room and seats you both (joined, game_start). others: seeks that wait "
         "for the same game on other settings (name, options, time_control, games), which yours will not pair "
         "with; sent again whenever such a seek arrives. ladder (a ladder seek, sent again after each of its "
         "games): your rating, deviation and whether it is provisional, and how many others wait and play.",
         {"seek": MAP}, {"others": LIST, "ladder": MAP})
def seeking(seek: dict[str, Any], others: list[dict[str, Any]] | None = None,
            ladder: dict[str, Any] | None = None) -> dict[str, Any]:
    """The seek that now waits, and the seeks it cannot pair with because their settings differ (``ladder``: a
    ladder seek's rating and the ladder around it)."""
    msg: dict[str, Any] = {"type": "seeking", "seek": seek}
    if others:
        msg["others"] = others
    if ladder is not None:
        msg["ladder"] = ladder
    return msg


@_server("seek_cancelled", "Your seek for this game no longer waits (you cancelled it).", {"game": STR})
def seek_cancelled(game: str) -> dict[str, Any]:
    """The seek for ``game`` is gone."""
    return {"type": "seek_cancelled", "game": game}


@_server("tournaments", "The tournaments of this server, each in short: id, name, game, format, status, "
         "entrants and progress.", {"tournaments": LIST})
def tournaments(listing: list[dict[str, Any]]) -> dict[str, Any]:
    """The tournament listing."""
    return {"type": "tournaments", "tournaments": listing}


@_server("tournament", "One tournament in full: status, standings with Elo, crosstable, schedule, pairings, "
         "SPRT and progress (the reply to a tournament request, and pushes to its watchers).", {"tournament": MAP})
def tournament(body: dict[str, Any]) -> dict[str, Any]:
    """A tournament's full state."""
    return {"type": "tournament", "tournament": body}


@_server("pong", "Reply to ping.")
def pong() -> dict[str, Any]:
    """The reply to ``ping``."""
    return {"type": "pong"}


@_server("error", "A request failed: an error code from ERROR_CODES and a sentence for people; room when the "
         "request named one; retry_after (seconds) when trying again later may succeed.",
         {"code": STR, "message": STR}, {"room": ROOM, "retry_after": NUM})
def error(code: str, message: str, **extra: Any) -> dict[str, Any]:
    """An ``error`` with ``code`` (from ERROR_CODES) and a sentence for people."""
    return {"type": "error", "code": code, "message": message, **extra}


def _kind_ok(value: Any, kind: tuple[tuple[type, ...], str]) -> bool:
    types = kind[0]
    if types == (object,):
        return True
    if isinstance(value, bool) and bool not in types:
        return False  # True is an int in Python, never on the wire
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_SAFE_INTEGER:
        return False
    return isinstance(value, types)


MAX_DEPTH: Final = 32  # how deep a message's maps and lists may nest


def json_compatible(value: Any, depth: int = 0) -> bool:
    """True when ``value`` is made of maps with string keys, lists, strings, safe integers,
    finite floats, booleans and null, nested at most :data:`MAX_DEPTH` deep."""
    # exact type checks: this runs on every incoming message
    if depth > MAX_DEPTH:
        return False
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER
    if kind is float:
        return math.isfinite(value)
    if kind is list:
        for item in value:
            if not json_compatible(item, depth + 1):
                return False
        return True
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or not json_compatible(item, depth + 1):
                return False
        return True
    return isinstance(value, StrEnum)  # the server's own codes and statuses: strings on the wire


# Precompiled checks: one generated function per request type, straight-line code that reads each field of the
# schema once, instead of walking the schema and the message generically for every message that arrives. A check
# only ever says "valid" (the message is returned as it is) or "not sure": everything it does not accept goes
# through the generic walk below, which finds and words the problem, so both paths give the same answers.

_MISSING = object()
_FIELD_CHECKS = {
    # each reads the field's value from ``v`` and returns False from the generated function when it is not
    # certainly of the kind and JSON-compatible (at depth 1, as json_compatible(obj) would check it)
    STR: ["if type(v) is not str: return False"],
    INT: ["if type(v) is not int or not -MAX <= v <= MAX: return False"],
    NUM: ["t = type(v)",
          "if t is int:",
          "    if not -MAX <= v <= MAX: return False",
          "elif t is not float or not isfinite(v): return False"],
    BOOL: ["if type(v) is not bool: return False"],
    MAP: ["if type(v) is not dict or not json_compatible(v, 1): return False"],
    LIST: ["if type(v) is not list or not json_compatible(v, 1): return False"],
    ANY: ["t = type(v)",
          "if t is int:",
          "    if not -MAX <= v <= MAX: return False",
          "elif t is dict:",  # a move as a map ({"column": 4}): its flat values read here, without a call each
          "    for k, w in v.items():",
          "        if type(k) is not str: return False",
          "        t = type(w)",
          "        if t is int:",
          "            if not -MAX <= w <= MAX: return False",
          "        elif t is not str and t is not bool and w is not None and not json_compatible(w, 2): return False",
          "elif t is not str and t is not bool and v is not None and not json_compatible(v, 1): return False"],
    OPT_INT: ["if v is not None and (type(v) is not int or not -MAX <= v <= MAX): return False"],
}


def _compile_check(kind: str, schema: Schema) -> Callable[[dict[str, Any]], bool]:
    """A function that is True when a map whose ``type`` is ``kind`` certainly fits ``schema`` (False: not sure)."""
    lines = ["def check(obj):",
             "    seen = 1",  # the 'type'
             "    v = obj.get('id', MISSING)",
             "    if v is not MISSING:",
             "        seen += 1",
             "        t = type(v)",
             "        if t is str:",
             "            if len(v) > 64: return False",
             "        elif t is int:",
             "            if not -MAX <= v <= MAX: return False",
             "        elif v is not None: return False"]
    for required, fields in ((True, schema.required), (False, schema.optional)):
        for name, field_kind in fields.items():
            body = _FIELD_CHECKS.get(field_kind)
            if body is None:  # a kind without a fast check: the generic walk decides every message of this type
                return lambda obj: False
            lines.append(f"    v = obj.get({name!r}, MISSING)")
            lines.append("    if v is MISSING: return False" if required else "    if v is not MISSING:")
            indent = "    " if required else "        "
            lines.extend(indent + line for line in body)
            lines.append(indent + "seen += 1")
    lines.append("    return seen == len(obj)")  # no field beyond those (every key is one of the names above)
    namespace: dict[str, Any] = {"MISSING": _MISSING, "MAX": MAX_SAFE_INTEGER, "isfinite": math.isfinite,
                                 "json_compatible": json_compatible}
    exec(compile("\n".join(lines), f"<check of {kind!r}>", "exec"), namespace)  # noqa: S102 (our own text)
    return typing.cast("Callable[[dict[str, Any]], bool]", namespace["check"])


_CLIENT_CHECKS: Final[dict[str, Callable[[dict[str, Any]], bool]]] = {
    kind: _compile_check(kind, schema) for kind, schema in CLIENT_MESSAGES.items()}


def validate_request(obj: Any) -> ClientMessage | ProtocolError:
    """:func:`validate` a client's message: a request of one of the ``protocol.requests`` shapes, or the problem."""
    if type(obj) is dict:  # the precompiled check of its type, when it has one (every message: no call more)
        kind = obj.get("type")
        if type(kind) is str:
            check = _CLIENT_CHECKS.get(kind)
            if check is not None and check(obj):
                return obj  # type: ignore[return-value]
    return _walk(obj, CLIENT_MESSAGES)  # type: ignore[return-value]


def validate(obj: Any, schemas: dict[str, Schema] = CLIENT_MESSAGES) -> dict[str, Any] | ProtocolError:
    """Check a decoded message against ``schemas``; the message, or a ProtocolError naming the problem."""
    if schemas is CLIENT_MESSAGES:
        return validate_request(obj)  # type: ignore[return-value]
    return _walk(obj, schemas)


def _walk(obj: Any, schemas: dict[str, Schema]) -> dict[str, Any] | ProtocolError:
    """The generic check of :func:`validate`: the schema's fields walked one by one, the problem worded; an error
    names the room the request named (a name a room can have)."""
    found = _walk_fields(obj, schemas)
    if isinstance(found, ProtocolError) and type(obj) is dict:
        room = obj.get("room")
        if type(room) is str and len(room) <= MAX_ROOM_NAME:
            return replace(found, room=room)
    return found


def request_id(obj: Any) -> str | int | None:
    """The ``id`` of a request ``obj`` when it is a map with a valid one (a string of at most 64 characters or an
    integer within 2^53): what an error about the request answers to. None otherwise."""
    msg_id = obj.get("id") if type(obj) is dict else None
    if (isinstance(msg_id, str) and len(msg_id) <= 64) or (
            isinstance(msg_id, int) and not isinstance(msg_id, bool) and abs(msg_id) <= MAX_SAFE_INTEGER):
        return msg_id
    return None


def _walk_fields(obj: Any, schemas: dict[str, Schema]) -> dict[str, Any] | ProtocolError:
    if not isinstance(obj, dict):
        return ProtocolError("bad_message", f"a message must be a map with a 'type', not {type(obj).__name__}")
    msg_id = obj.get("id")
    if msg_id is not None and request_id(obj) is None:
        return ProtocolError("bad_message", "'id' must be a string of at most 64 characters or an integer")
    if not json_compatible(obj):
        return ProtocolError(
            "bad_message",
            f"messages hold only maps with string keys, lists, strings, numbers below 2^53, booleans and null, "
            f"nested at most {MAX_DEPTH} deep",
            msg_id,
        )
    kind = obj.get("type")
    if not isinstance(kind, str):
        return ProtocolError("bad_message", "every message needs a 'type' string", msg_id)
    schema = schemas.get(kind)
    if schema is None:
        known = ", ".join(sorted(schemas))
        return ProtocolError("unknown_type", f"unknown message type {kind[:40]!r}; known types: {known}", msg_id)
    for name, field_kind in schema.required.items():
        if name not in obj:
            return ProtocolError("bad_message", f"'{kind}' needs the field '{name}' ({field_kind[1]})", msg_id)
    for name, value in obj.items():
        if name in ("type", "id"):
            continue
        known_kind = schema.required.get(name) or schema.optional.get(name)
        if known_kind is None:
            allowed = ", ".join(list(schema.required) + list(schema.optional)) or "none"
            return ProtocolError(
                "bad_message", f"'{kind}' has no field '{name[:40]}'; its fields: {allowed}", msg_id
            )
        if not _kind_ok(value, known_kind):
            return ProtocolError(
                "bad_message", f"field '{name}' of '{kind}' must be {known_kind[1]}", msg_id
            )
    return obj
