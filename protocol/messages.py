"""Message definitions of the wire protocol, validated on decode.

Every message is a JSON-compatible map with a ``type``. Requests may carry an
``id`` (string or integer) that the reply echoes. This module knows the shape
of every message both ways; :func:`validate` checks an incoming map and returns
either the map or a :class:`ProtocolError` value naming the problem. It never
raises on bad input. docs/PROTOCOL.md is the reference for people.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

MAX_SAFE_INTEGER = 2**53 - 1
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,31}$"

# Error codes, each with the sentence the docs give for it.
ERROR_CODES: dict[str, str] = {
    "bad_message": "the message is not a map with a known shape (field missing or of the wrong type)",
    "bad_encoding": "the bytes are not valid JSON or msgpack for the chosen subprotocol",
    "too_large": "the message is larger than the server accepts",
    "unknown_type": "the message type is not one the server knows",
    "not_logged_in": "log in first",
    "already_logged_in": "this connection is already logged in",
    "bad_name": "the name is not acceptable",
    "wrong_secret": "the name is claimed and the secret does not match",
    "name_in_use": "somebody is connected under that name",
    "bad_option": "a room or game option is unknown or out of range",
    "no_such_room": "there is no room by that name",
    "room_exists": "a room by that name exists already",
    "room_full": "both seats are taken",
    "seat_taken": "that seat is taken",
    "not_in_room": "you are not in that room",
    "not_a_player": "only a seated player may do that",
    "game_not_running": "no game is running in that room",
    "not_your_turn": "it is the other seat's turn",
    "illegal_move": "the move is not legal, or not a move",
    "rate_limited": "too many messages; slow down",
    "too_many_rooms": "a limit on rooms was reached",
    "server_shutdown": "the server is shutting down",
}


@dataclass(frozen=True)
class ProtocolError:
    """A message that could not be accepted: an error code and a sentence for people."""

    code: str
    message: str
    id: str | int | None = None

    def to_message(self, **extra: Any) -> dict[str, Any]:
        """The ``error`` message the server sends for this problem."""
        msg: dict[str, Any] = {"type": "error", "code": self.code, "message": self.message}
        if self.id is not None:
            msg["id"] = self.id
        msg.update(extra)
        return msg


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
    """Required and optional fields of one message type."""

    required: dict[str, tuple[tuple[type, ...], str]]
    optional: dict[str, tuple[tuple[type, ...], str]]
    doc: str


def _schema(doc: str, required: dict | None = None, optional: dict | None = None) -> Schema:
    return Schema(required or {}, optional or {}, doc)


CLIENT_MESSAGES: dict[str, Schema] = {
    "login": _schema(
        "Log in under a name, claiming it with a secret the first time.",
        {"name": STR},
        {"secret": STR, "coords": STR, "client": STR},
    ),
    "list_rooms": _schema("Ask for the room listing.", optional={"game": STR}),
    "watch_lobby": _schema("Receive a `rooms` push whenever the listing changes.", optional={"on": BOOL}),
    "create_room": _schema(
        "Create a room.",
        {"game": STR},
        {"name": STR, "options": MAP, "time_control": MAP, "illegal_move": STR, "grace": NUM, "games": INT},
    ),
    "join": _schema(
        "Take a seat (a given one or any free one) or watch as a spectator.",
        {"room": ROOM},
        {"seat": INT, "role": STR},
    ),
    "leave": _schema("Leave a room (a seated player in a running game forfeits).", {"room": ROOM}),
    "move": _schema(
        "Play a move: notation text or the structured form in your coordinates.",
        {"room": ROOM, "move": ANY},
    ),
    "legal_moves": _schema("Ask for the legal moves of the seat to move.", {"room": ROOM}),
    "state": _schema("Ask for the full current state of a room.", {"room": ROOM}),
    "resign": _schema("Resign the running game.", {"room": ROOM}),
    "offer_draw": _schema("Offer a draw, or accept the opponent's standing offer.", {"room": ROOM}),
    "chat": _schema("Say something in a room.", {"room": ROOM, "text": STR}),
    "ping": _schema("Ask for a pong (application-level liveness check)."),
}

# What the server sends. Required fields are always present (some may be null, as their kind
# says); optional ones appear only in the situations their description gives. Any message that
# answers a request carries that request's ``id`` as well.
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

SERVER_MESSAGES: dict[str, Schema] = {
    "welcome": _schema(
        "Login accepted: your name and convention, the server's version, whether the name is claimed, "
        "the game ids, and the rooms where you hold a seat (resumed at once).",
        {"name": STR, "coords": STR, "server": STR, "claimed": BOOL, "games": LIST, "rooms": LIST},
    ),
    "rooms": _schema("The room listing: a list of room summaries.", {"rooms": LIST}),
    "room": _schema("One room's summary (the reply to create_room).", {"room": MAP}),
    "joined": _schema(
        "You joined a room: your role, your seat (null for a spectator) and the room's summary.",
        {"room": ROOM, "role": STR, "seat": OPT_INT, "settings": MAP},
    ),
    "left": _schema("You left a room.", {"room": ROOM}),
    "seated": _schema(
        "Somebody took or left a seat in a room you are in: both seats' names (null when free).",
        {"room": ROOM, "seats": LIST},
    ),
    "game_start": _schema(
        "A game starts, or its full state on joining, resuming or asking for the state while it runs.",
        {**_GAME_FIELDS, **_POSITION_FIELDS},
    ),
    "room_state": _schema(
        "The state of a room where no game runs (the reply to state): before the first game without a "
        "position; after a game with its final position and last_result.",
        _GAME_FIELDS,
        {**_POSITION_FIELDS, "last_result": MAP},
    ),
    "moved": _schema(
        "A move was accepted: in your coordinates and as notation, with both clocks and the seat to move "
        "(null when the move ended the game).",
        {
            "room": ROOM,
            "seq": INT,
            "seat": INT,
            "move": ANY,
            "notation": STR,
            "clocks": MAP,
            "to_move": OPT_INT,
        },
    ),
    "legal_moves": _schema("The legal moves of the seat to move, in your coordinates.", {"room": ROOM, "moves": LIST}),
    "game_over": _schema(
        "The game ended: the winning seat (null for a draw or an aborted game), why, and whether the room "
        "plays another game.",
        {
            "room": ROOM,
            "winner": OPT_INT,
            "reason": STR,
            "players": LIST,
            "record": STR,
            "clocks": MAP,
            "next_game": BOOL,
            "game_no": INT,
        },
    ),
    "player_away": _schema(
        "A player lost the connection and keeps the seat for grace seconds.",
        {"room": ROOM, "seat": INT, "name": STR, "grace": NUM},
    ),
    "player_back": _schema("A player who was away came back.", {"room": ROOM, "seat": INT, "name": STR}),
    "draw_offered": _schema("A player offers a draw.", {"room": ROOM, "seat": INT}),
    "chat": _schema("A chat line.", {"room": ROOM, "from": STR, "text": STR}),
    "pong": _schema("Reply to ping."),
    "error": _schema(
        "A request failed: an error code from ERROR_CODES and a sentence for people; room when the request "
        "named one.",
        {"code": STR, "message": STR},
        {"room": ROOM},
    ),
}


def _kind_ok(value: Any, kind: tuple[tuple[type, ...], str]) -> bool:
    types = kind[0]
    if types == (object,):
        return True
    if isinstance(value, bool) and bool not in types:
        return False  # True is an int in Python, never on the wire
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_SAFE_INTEGER:
        return False
    return isinstance(value, types)


def json_compatible(value: Any, depth: int = 0) -> bool:
    """True when ``value`` is made of maps with string keys, lists, strings, safe integers,
    finite floats, booleans and null, nested at most 32 deep."""
    # exact type checks: this runs on every incoming message
    if depth > 32:
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
    return False


def validate(obj: Any, schemas: dict[str, Schema] = CLIENT_MESSAGES) -> dict[str, Any] | ProtocolError:
    """Check a decoded message against ``schemas``; the message, or a ProtocolError naming the problem."""
    if not isinstance(obj, dict):
        return ProtocolError("bad_message", f"a message must be a map with a 'type', not {type(obj).__name__}")
    msg_id = obj.get("id")
    if msg_id is not None and not (
        (isinstance(msg_id, str) and len(msg_id) <= 64)
        or (isinstance(msg_id, int) and not isinstance(msg_id, bool) and abs(msg_id) <= MAX_SAFE_INTEGER)
    ):
        return ProtocolError("bad_message", "'id' must be a string of at most 64 characters or an integer")
    if not json_compatible(obj):
        return ProtocolError(
            "bad_message",
            "messages hold only maps with string keys, lists, strings, numbers below 2^53, booleans and null",
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
        field_kind = schema.required.get(name) or schema.optional.get(name)
        if field_kind is None:
            allowed = ", ".join(list(schema.required) + list(schema.optional)) or "none"
            return ProtocolError(
                "bad_message", f"'{kind}' has no field '{name[:40]}'; its fields: {allowed}", msg_id
            )
        if not _kind_ok(value, field_kind):
            return ProtocolError(
                "bad_message", f"field '{name}' of '{kind}' must be {field_kind[1]}", msg_id
            )
    return obj


def message(kind: str, **fields: Any) -> dict[str, Any]:
    """Build a message map: ``message("join", room="Kalamalka Lake")``."""
    msg = {"type": kind}
    msg.update({k: v for k, v in fields.items() if v is not None or k in _NULLABLE})
    return msg


# Fields that keep an explicit null (winner of a draw, seat of a spectator, ...).
_NULLABLE = {"winner", "seat", "to_move"}
