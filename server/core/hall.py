"""The hall: sessions, names, seeks, the room list, and dispatch of every validated request.

Like :class:`server.core.room.Room`, ``Hall`` is a plain object: the WebSocket layer feeds it
connections, messages and the time, and sends what it returns (a :class:`HallOutbox`).
Messages here are addressed by connection id. One rule tags replies: the first message a
request produces for its sender that is one of the request's reply types
(``CLIENT_MESSAGES[type].replies``) or an ``error`` carries the request's ``id``.
"""

from __future__ import annotations

import heapq
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import protocol
from protocol import messages as m
from protocol.games import GAMES, OptionError
from protocol.messages import CLIENT_MESSAGES, NAME_PATTERN

from ..storage.records import (
    ClaimSaved,
    GameRecord,
    IdentityForgotten,
    IdentitySaved,
    Restored,
    RoomRemoved,
    RoomSaved,
    TournamentSaved,
    Write,
)
from ..tournament.director import Director, TournamentError, define
from .env import Env
from .house import HOUSE_LEVEL, HOUSE_LEVELS, HOUSE_PREFIX, HouseStart
from .identity import Claim, ClaimLookup, Holder, SecretCheck
from .logins import NAME_HELP, Admit, Check, LoginLimits, Logins, Lookup, Refuse, Step
from .room import Outbox, Room, RoomSettings

log = logging.getLogger("plyhall.hall")

ROOM_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 '_.\-]{0,39}$")
MAX_ROOM_NAME = 40  # ROOM_NAME's limit; generated names stay below it too
NAME = re.compile(NAME_PATTERN)
ROOM_NAME_HELP = "1 to 40 letters, digits, spaces and ' _ . - (starting with a letter or digit)"
LAKES = (
    "Kalamalka Lake", "Okanagan Lake", "Wood Lake", "Skaha Lake", "Vaseux Lake", "Mabel Lake",
    "Shuswap Lake", "Kootenay Lake", "Arrow Lake", "Slocan Lake", "Moyie Lake", "Christina Lake",
)
LOBBY_PUSH_INTERVAL = 0.5  # seconds between two pushed room listings; changes in between are coalesced
LOBBY_TIMER = ""  # timer-heap entry of the lobby push (no room has an empty name)
TOURNAMENT_TIMER = "\x00"  # prefix of a tournament's push entry in the timer heap (no room name has it)
HOUSE_ARRIVAL = 120.0  # seconds a house bot process has to start and sit down (a master loads its engine)
HOUSE_RESTARTS = 3  # times a tournament's house entrant whose process ended is started again
HOUSE_MAX_GAMES = 10  # games in one room against a house bot
REPLIES = {kind: frozenset(schema.replies) | {"error"} for kind, schema in CLIENT_MESSAGES.items()}


@dataclass
class Limits:
    """Quotas that keep one address, or one name, from filling the server (docs/OPERATING.md lists each
    with the ``plyhall serve`` flag that sets it; 0 turns a per-address quota off)."""

    max_rooms: int = 5000  # rooms on the server; seeks may open SEEK_RESERVE more, so play goes on
    max_rooms_per_name: int = 10  # open rooms one name has created
    max_rooms_in_one: int = 50  # rooms one session may be in at once
    max_rooms_per_address: int = 50  # open rooms created from one address
    max_seek_games_per_name: int = 5  # rooms opened by seeks one name sits in at once
    max_connections_per_address: int = 200  # WebSocket connections open from one address (the I/O layer's)
    max_house_games_per_address: int = 2  # rooms against house bots one address has open at once
    max_house_games_per_name: int = 1  # ... one name has open at once
    house_idle: float = 180.0  # seconds a person playing a house bot may leave a move unplayed: then it loses

    @property
    def seek_rooms(self) -> int:
        """The room count past which seeks are refused too: ``max_rooms`` plus a reserve, so that rooms
        others created and left idle never stop players who want to play now."""
        return self.max_rooms + max(10, self.max_rooms // 10)


@dataclass
class Session:
    """A logged-in connection."""

    conn: int
    name: str
    coords: str
    rooms: set[str] = field(default_factory=set)
    watching_lobby: bool = False
    organiser: bool = False


@dataclass
class Seek:
    """A player waiting to be paired: for which game, on which settings."""

    name: str
    settings: RoomSettings
    key: str  # seeks with equal keys match
    since: float

    def to_json(self) -> dict[str, Any]:
        """The seek as the ``seeking`` reply shows it."""
        return {"game": self.settings.game.id, "options": self.settings.options,
                "time_control": self.settings.time_control.to_json(), "games": self.settings.games}


@dataclass
class HallOutbox:
    """What a Hall call produced: messages by connection, connections to close, durable writes,
    secret checks to run off the event loop, and the games that ended."""

    messages: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    close: list[tuple[int, str]] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    checks: list[SecretCheck] = field(default_factory=list)
    lookups: list[ClaimLookup] = field(default_factory=list)  # names to look up in a shared database
    ended: list[GameRecord] = field(default_factory=list)
    house: list[HouseStart] = field(default_factory=list)  # house bot processes to start
    house_stop: list[str] = field(default_factory=list)  # house bots no longer needed (their process ends)
    refused: list[str] = field(default_factory=list)  # why requests were refused by a quota or throttle

    def send(self, conn: int, msg: dict[str, Any]) -> None:
        """Queue ``msg`` for connection ``conn``."""
        self.messages.append((conn, msg))

    def error(self, conn: int, code: str, text: str, **extra: Any) -> None:
        """Queue an ``error`` for connection ``conn``."""
        self.messages.append((conn, m.error(code, text, **extra)))

    def extend(self, other: HallOutbox) -> HallOutbox:
        """Append another outbox's contents."""
        self.messages.extend(other.messages)
        self.close.extend(other.close)
        self.writes.extend(other.writes)
        self.checks.extend(other.checks)
        self.lookups.extend(other.lookups)
        self.ended.extend(other.ended)
        self.house.extend(other.house)
        self.house_stop.extend(other.house_stop)
        self.refused.extend(other.refused)
        return self

    def refuse(self, conn: int, reason: str, code: str, text: str, **extra: Any) -> None:
        """Queue an ``error`` for a request a quota or throttle refused; ``reason`` is counted in the metrics."""
        self.refused.append(reason)
        self.error(conn, code, text, **extra)


Handler = Callable[["Hall", HallOutbox, int, dict[str, Any], float], None]
RoomRequest = Callable[[Room, str, dict[str, Any], float], Outbox]

# Requests about one room: the room method that answers each.
ROOM_REQUESTS: dict[str, RoomRequest] = {
    "leave": lambda room, name, msg, now: room.leave(name, now),
    "move": lambda room, name, msg, now: room.move(name, msg["move"], now),
    "legal_moves": lambda room, name, msg, now: room.legal_moves(name),
    "state": lambda room, name, msg, now: room.send_state(name, now),
    "resign": lambda room, name, msg, now: room.resign(name, now),
    "offer_draw": lambda room, name, msg, now: room.offer_draw(name, now),
    "chat": lambda room, name, msg, now: room.chat(name, msg["text"]),
}


class Hall:
    """All sessions, seeks and rooms of one server."""

    def __init__(
        self,
        env: Env | None = None,
        limits: Limits | None = None,
        room_defaults: dict[str, Any] | None = None,
        organiser_secret: str | None = None,
        house_limit: int = 0,
        shared_names: bool = False,
        login_limits: LoginLimits | None = None,
    ) -> None:
        self.env = env or Env.system()
        self.limits = limits or Limits()
        self.room_defaults = room_defaults or {}
        self.house_limit = house_limit  # house bot processes that may run at once (0: none)
        self.logins = Logins(self.env, organiser_secret, shared_names, login_limits or LoginLimits())
        self.house_running: dict[str, str] = {}  # house bot name -> the room it was started for
        self.house_games: dict[str, tuple[str, str]] = {}  # house bot name -> (its opponent's name, address)
        self._house_serial = 0  # house bot names count on: a name is never handed out twice
        self._house_restarts: dict[str, int] = {}  # tournament house entrant -> times started again
        self.restarted_house: list[HouseStart] = []  # house bots of restored rooms, to start again
        self.restored_writes: list[Write] = []  # what restoring changed (rooms nobody comes back to), to store
        self.tournaments: dict[str, Director] = {}  # by id
        self.tournament_watchers: dict[str, set[int]] = {}  # tournament id -> connections watching it
        self._tournament_pushed: dict[str, float] = {}  # tournament id -> when it was last pushed
        self._tournament_dirty: set[str] = set()
        self._pending_due: set[str] = set()  # restored tournaments whose due games are opened at start
        self.sessions: dict[int, Session] = {}  # by connection
        self.by_name: dict[str, Session] = {}
        self.addresses: dict[int, str] = {}  # connection -> peer address (for logs, back-off and quotas)
        self.rooms: dict[str, Room] = {}
        self.folded: dict[str, str] = {}  # casefolded room name -> room name: names are unique ignoring case
        self.seat_holders: dict[str, set[str]] = {}  # name -> rooms where it holds a seat (even when away)
        self.created_by: dict[str, set[str]] = {}
        self.address_rooms: dict[str, set[str]] = {}  # address -> open rooms created from it
        self.room_addresses: dict[str, set[str]] = {}  # room -> the addresses it is charged to
        self.seeks: dict[str, list[Seek]] = {}  # seek key -> waiting seeks, oldest first
        self.seek_rooms: set[str] = set()  # open rooms that seeks opened
        self.first_of_pair: dict[frozenset[str], str] = {}  # who had seat 0 when two names last met by seek
        self._lake = 0
        self._timers: list[tuple[float, str]] = []  # (deadline, room) heap; stale entries are harmless
        self._scheduled: dict[str, float] = {}  # room -> the earliest deadline it has in the heap
        self.watchers: set[int] = set()  # connections that watch the lobby
        self._now = 0.0
        self._lobby_pushed_at = float("-inf")
        self._lobby_dirty = False
        self._handlers: dict[str, Handler] = {
            "login": Hall._login,
            "ping": Hall._ping,
            "list_rooms": Hall._list_rooms,
            "watch_lobby": Hall._watch_lobby,
            "create_room": Hall._create_room,
            "join": Hall._join,
            "seek": Hall._seek,
            "cancel_seek": Hall._cancel_seek,
            "list_tournaments": Hall._list_tournaments,
            "watch_tournament": Hall._watch_tournament,
            "tournament_create": Hall._tournament_create,
            "tournament_control": Hall._tournament_control,
            **{kind: Hall._room_request for kind in ROOM_REQUESTS},
        }
        missing = set(CLIENT_MESSAGES) - set(self._handlers)
        assert not missing, f"client messages without a handler: {missing}"

    # Connections ------------------------------------------------------------------------

    def connect(self, conn: int, address: str = "?") -> None:
        """A connection opened from ``address`` (a hall fed without it treats every connection as open)."""
        self.addresses[conn] = address

    def handle(self, conn: int, msg: dict[str, Any], now: float) -> HallOutbox:
        """Dispatch one validated client message from connection ``conn``."""
        out = HallOutbox()
        self._now = now
        self.addresses.setdefault(conn, "?")
        kind = msg["type"]
        if conn not in self.sessions and kind not in ("login", "ping"):
            out.error(conn, "not_logged_in", 'log in first: send {"type": "login", "name": ...}')
        else:
            self._handlers[kind](self, out, conn, msg, now)
        tag_reply(out, conn, msg.get("id"), REPLIES[kind])
        return out

    @property
    def house_secret(self) -> str:
        """What the server's own bots log in with (made at start; it reaches them through their environment)."""
        return self.logins.house_secret

    def secret_checked(self, check: SecretCheck, result: Claim | bool | None, now: float) -> HallOutbox:
        """The answer of a :class:`SecretCheck` the I/O layer ran (None: it dropped it unrun, the connection having
        closed): finish (or refuse) that login."""
        out = HallOutbox()
        self._now = now
        conn, login = check.conn, check.login
        alive = conn in self.addresses and conn not in self.sessions
        step = self.logins.checked(check, result, self._holder(login["name"], conn), now, alive)
        if alive:
            self._login_step(out, conn, login, step, now)
            tag_reply(out, conn, login.get("id"), REPLIES["login"])
        return out

    def claim_looked_up(self, lookup: ClaimLookup, found: tuple[str, str] | None, now: float) -> HallOutbox:
        """The answer of a :class:`ClaimLookup`: the name's claim in the shared database, if any; the login
        then goes on as if the claim had been known."""
        out = HallOutbox()
        self._now = now
        self.logins.looked_up(lookup.conn)
        if lookup.conn not in self.addresses:
            return out
        name = lookup.login["name"]
        if found is not None and name not in self.logins.claims:
            self.logins.claims[name] = Claim(*found)
        self._login(out, lookup.conn, lookup.login, now, looked_up=True)
        tag_reply(out, lookup.conn, lookup.login.get("id"), REPLIES["login"])
        return out

    def run_checks(self, out: HallOutbox, now: float) -> HallOutbox:
        """Run ``out``'s secret checks here and now and merge their answers (for tests and tools)."""
        while out.checks:
            check = out.checks.pop(0)
            out.extend(self.secret_checked(check, check.run(), now))
        return out

    def disconnect(self, conn: int, now: float) -> HallOutbox:
        """A connection closed: its seats enter their grace period, spectating and seeks end."""
        out = HallOutbox()
        self._now = now
        self.watchers.discard(conn)
        for watching in self.tournament_watchers.values():
            watching.discard(conn)
        self.addresses.pop(conn, None)
        self.logins.gone(conn)
        session = self.sessions.pop(conn, None)
        if session is None:
            return out
        if self.by_name.get(session.name) is session:
            del self.by_name[session.name]
            self._drop_seeks(session.name)
        for room_name in sorted(session.rooms):
            room = self.rooms.get(room_name)
            if room is not None:
                self._apply(out, room, room.disconnected(session.name, now))
        # rooms this name created and nobody ever entered go with their creator
        for room_name in sorted(self.created_by.get(session.name, set())):
            room = self.rooms.get(room_name)
            if room is not None and not room.ever_entered:
                self._remove_room(out, room)
        if self._holder(session.name) is Holder.NOBODY:
            if self.logins.forget(session.name):
                out.writes.append(IdentityForgotten(session.name))
        return out

    def tick(self, now: float) -> HallOutbox:
        """Let time act on every room whose deadline has come."""
        out = HallOutbox()
        self._now = now
        due: set[str] = set()
        while self._timers and self._timers[0][0] <= now:
            deadline, name = heapq.heappop(self._timers)
            due.add(name)
            if self._scheduled.get(name) == deadline:
                del self._scheduled[name]
        if LOBBY_TIMER in due:
            due.discard(LOBBY_TIMER)
            if self._lobby_dirty:
                self._push_lobby(out)
        for key in [k for k in due if k.startswith(TOURNAMENT_TIMER)]:
            due.discard(key)
            tid = key.removeprefix(TOURNAMENT_TIMER)
            if tid in self._tournament_dirty and tid in self.tournaments:
                self._push_tournament(out, self.tournaments[tid])
        for name in sorted(due):
            room = self.rooms.get(name)
            if room is not None:
                self._apply(out, room, room.tick(now))
        return out

    def next_deadline(self) -> float | None:
        """The earliest time at which :meth:`tick` may have something to do."""
        return self._timers[0][0] if self._timers else None

    def shutdown(self, now: float) -> HallOutbox:
        """Tell everybody the server is stopping. Running games are *not* ended: they are stored
        move by move and continue when the server starts again on the same database."""
        out = HallOutbox()
        for conn in list(self.sessions):
            out.error(conn, "server_shutdown", "the server is shutting down; running games continue when it is "
                      "back (log in again with the same name and secret or resume token)")
        return out

    def listing(self, game: str | None = None) -> list[dict[str, Any]]:
        """Every room's summary, optionally for one game."""
        return [r.listing() for r in self.rooms.values() if game is None or r.game.id == game]

    def restore(self, restored: Restored, now: float) -> tuple[int, int]:
        """Take back what storage kept: claims, resume tokens of seat holders, and every open room (a
        running game continues when both players are back). Returns (rooms, running games)."""
        self._now = now
        self.logins.claims = {name: Claim(salt, digest) for name, (salt, digest) in restored.claims.items()}
        running = 0
        for snapshot in restored.rooms:
            record = restored.running.get(snapshot.get("record") or "")
            try:
                room = Room.restore(snapshot, record, self.env, now)
            except Exception:  # a room that cannot be rebuilt must not keep the others from starting
                log.exception("could not restore room %s", snapshot.get("name"))
                continue
            if room.tournament is None and room.status != "playing" and not any(room.seats):
                # nobody sits in it and no game runs: nobody is coming back to it (its creator may open another)
                self.restored_writes.append(RoomRemoved(room.name))
                continue
            self._add_room(room)
            if room.creator is None and room.tournament is None:
                self.seek_rooms.add(room.name)
            if room.creator is not None:
                self.created_by.setdefault(room.creator, set()).add(room.name)
                if room.address:
                    self._charge(room.name, room.address)
            for name in room.seats:
                if name is None:
                    continue
                self.seat_holders.setdefault(name, set()).add(room.name)
                if name in restored.identities:
                    self.logins.identities[name] = restored.identities[name]
                if name.startswith(HOUSE_PREFIX) and room.status != "finished" and room.tournament is None:
                    # the bot's process did not outlive the old server's secret: start it again (a tournament's
                    # house entrants are started again below, for the whole event)
                    level = name.removeprefix(HOUSE_PREFIX).rsplit("-", 1)[0]
                    if HOUSE_LEVEL.fullmatch(level):
                        self.house_running[name] = room.name
                        opponent = room.seats[1 - room.seats.index(name)]
                        self.house_games[name] = (opponent or "", "?")
                        self.restarted_house.append(HouseStart(name, room.game.id, level, room.name,
                                                               room.settings.games - max(0, room.game_no - 1)))
            running += room.status == "playing"
            self._schedule(room)
        for snapshot in restored.tournaments:
            try:
                director = Director.restore(snapshot, restored.tournament_games.get(snapshot["id"], []))
            except Exception:  # one broken event must not keep the server (or the other events) from starting
                log.exception("could not restore tournament %s", snapshot.get("id"))
                continue
            self.tournaments[director.id] = director
            for number, room in list(director.open.items()):
                if room not in self.rooms:  # its room is gone: the game is played again
                    del director.open[number]
            if director.status in ("created", "running", "paused"):
                for name in director.entrants:  # an entry holds its name after a restart too
                    if name in restored.identities:
                        self.logins.identities[name] = restored.identities[name]
            if director.status in ("running", "paused"):  # an event not started yet holds no house bot
                for name, level in director.settings.local.items():
                    if name not in self.house_running:
                        self.house_running[name] = f"tournament {director.id}"
                        self.restarted_house.append(HouseStart(name, director.settings.game, level,
                                                               tournament=director.id))
            self._pending_due.add(director.id)
        if not self.logins.shared_names:  # the tokens of names nobody holds prove nothing: their rows go
            self.restored_writes += [IdentityForgotten(name) for name in restored.identities
                                     if name not in self.logins.identities]
        numbers = [int(n.rsplit("-", 1)[1]) for n in [*self.seat_holders, *(e for d in self.tournaments.values()
                                                                           for e in d.settings.local)]
                   if n.startswith(HOUSE_PREFIX) and n.rsplit("-", 1)[1].isdigit()]
        self._house_serial = max(numbers, default=0)  # new house bot names count on from the highest in use
        return len(self.rooms), running

    def resume_tournaments(self, now: float) -> HallOutbox:
        """Open the games that restored tournaments have due (after :meth:`restore`)."""
        out = HallOutbox()
        self._now = now
        for tid in sorted(self._pending_due):
            if tid in self.tournaments:
                self._open_due(out, self.tournaments[tid], now)
        self._pending_due.clear()
        return out

    # Handlers ---------------------------------------------------------------------------

    def _ping(self, out: HallOutbox, conn: int, msg: dict[str, Any], now: float) -> None:
        out.send(conn, m.pong())

    def _list_rooms(self, out: HallOutbox, conn: int, msg: dict[str, Any], now: float) -> None:
        out.send(conn, m.rooms(self.listing(msg.get("game"))))

    def _watch_lobby(self, out: HallOutbox, conn: int, msg: dict[str, Any], now: float) -> None:
        session = self.sessions[conn]
        session.watching_lobby = msg.get("on", True)
        if session.watching_lobby:
            self.watchers.add(conn)
        else:
            self.watchers.discard(conn)
        out.send(conn, m.rooms(self.listing()))

    def _login(self, out: HallOutbox, conn: int, msg: dict[str, Any], now: float, looked_up: bool = False) -> None:
        if conn in self.sessions:
            out.error(conn, "already_logged_in", f"you are logged in as {self.sessions[conn].name}")
            return
        if conn in self.logins.checking:
            out.error(conn, "already_logged_in", "a login on this connection is being checked; wait for its answer")
            return
        address = self.addresses.get(conn, "?")
        step = self.logins.start(conn, msg, address, self._holder(msg["name"], conn), now, looked_up)
        self._login_step(out, conn, msg, step, now)

    def _login_step(self, out: HallOutbox, conn: int, msg: dict[str, Any], step: Step, now: float) -> None:
        """Carry out what the login desk decided."""
        if isinstance(step, Refuse):
            extra = {} if step.retry_after is None else {"retry_after": step.retry_after}
            if step.code in ("throttled", "busy"):
                out.refuse(conn, f"login_{step.code}", step.code, step.text, **extra)
            else:
                out.error(conn, step.code, step.text, **extra)
        elif isinstance(step, Check):
            out.checks.append(step.check)
        elif isinstance(step, Lookup):
            out.lookups.append(step.lookup)
        elif isinstance(step, Admit):
            if step.claim is not None:
                out.writes.append(ClaimSaved(msg["name"], step.claim.salt, step.claim.digest))
            self._admit(out, conn, msg, now, step.proven)

    def _holder(self, name: str, conn: int | None = None) -> Holder:
        """Who holds ``name`` now (``conn``: a login whose own claim of the name does not count)."""
        if name in self.by_name:
            return Holder.SESSION
        if self.logins.known(name):
            if self.seat_holders.get(name):
                return Holder.SEAT
            if self._entrant(name):
                return Holder.ENTRY
        if self.logins.claiming.get(name, conn) != conn:
            return Holder.CLAIMING
        return Holder.NOBODY

    def _entrant(self, name: str) -> Director | None:
        """The tournament not over yet that ``name`` is an entrant of, if any."""
        for director in self.tournaments.values():
            if director.status in ("created", "running", "paused") and name in director.entrants:
                return director
        return None

    def _create_room(self, out: HallOutbox, conn: int, msg: dict[str, Any], now: float) -> None:
        session = self.sessions[conn]
        address = self.addresses.get(conn, "?")
        if not self._room_quota(out, conn, address, len(self.rooms) >= self.limits.max_rooms):
            return
        mine = self.created_by.get(session.name, set())
        if len(mine) >= self.limits.max_rooms_per_name:
            out.refuse(conn, "rooms_per_name", "too_many_rooms", f"you have {len(mine)} open rooms, the limit per "
                       "name; finish or leave some first")
            return
        name = msg.get("name")
        if name is None:
            name = self._free_room_name()
        else:
            name = " ".join(name.split())
            if not ROOM_NAME.match(name):
                out.error(conn, "bad_message", f"{name[:40]!r} is not a valid room name: use {ROOM_NAME_HELP}")
                return
            if name.casefold() in self.folded:
                out.error(conn, "room_exists", f"a room called {name} exists already")
                return
        try:
            settings = RoomSettings.parse(
                msg["game"], msg.get("options"), msg.get("time_control"), msg.get("illegal_move"),
                msg.get("grace"), msg.get("games"), self.room_defaults)
        except OptionError as exc:
            out.error(conn, "bad_option", str(exc))
            return
        opponent = msg.get("opponent")
        house = None
        if opponent is not None:
            house = self._house_bot(out, conn, opponent, settings)
            if house is None:
                return
        room = Room(name, settings, self.env, session.name, reserved=(session.name, house) if house else (None, None),
                    idle=(self.limits.house_idle, (session.name,)) if house else None)
        room.address = address
        self._add_room(room)
        self._charge(room.name, address)
        self.created_by.setdefault(session.name, set()).add(name)
        out.writes.append(_room_saved(room))
        out.send(conn, m.room(room.listing()))
        log.info("room %s opened by %s (%s, %d game%s%s)", name, session.name, settings.game.id, settings.games,
                 "" if settings.games == 1 else "s", f", against house bot {house}" if house else "")
        if house is not None:
            # the creator sits down at once; the other seat waits for the bot process to start
            self._apply(out, room, room.join(session.name, session.coords, now, "player", 0))
            self._apply(out, room, room.hold(house, 1, now, max(HOUSE_ARRIVAL, settings.grace)))
            self.seat_holders.setdefault(house, set()).add(room.name)
            self.house_running[house] = room.name
            self.house_games[house] = (session.name, address)
            out.house.append(HouseStart(house, settings.game.id, opponent, room.name, settings.games))
        self._lobby_changed(out)

    def _room_quota(self, out: HallOutbox, conn: int, address: str, server_full: bool) -> bool:
        """True when ``address`` may open one more room (``server_full``: the server-wide limit is reached)."""
        if server_full:
            out.refuse(conn, "rooms_server", "too_many_rooms", f"the server holds {len(self.rooms)} rooms, its "
                       "limit; try again when some games end")
            return False
        limit = self.limits.max_rooms_per_address
        charged = self.address_rooms.get(address, ())
        if limit and len(charged) >= limit:
            out.refuse(conn, "rooms_per_address", "too_many_rooms", f"{len(charged)} open rooms were created "
                       f"from your address, its limit ({limit}); finish or leave some first")
            return False
        return True

    def _charge(self, room: str, address: str) -> None:
        """Count ``room`` against ``address`` (until it is removed)."""
        self.address_rooms.setdefault(address, set()).add(room)
        self.room_addresses.setdefault(room, set()).add(address)

    def _house_bot(self, out: HallOutbox, conn: int, level: str, settings: RoomSettings) -> str | None:
        """A name for a new house bot of ``level``, or None (and an error) when none can start."""
        if not self.house_limit:
            out.error(conn, "bad_option", "this server starts no house bots (the organiser can allow them with "
                      "plyhall serve --house-bots N)")
            return None
        if not HOUSE_LEVEL.fullmatch(level):
            out.error(conn, "bad_option", f"unknown bot level {level[:40]!r}; levels: {', '.join(HOUSE_LEVELS)}")
            return None
        if not settings.time_control.timed:
            out.error(conn, "bad_option", "a game against a house bot must be timed: give time_control per_move or "
                      "initial (an untimed game would keep the bot for ever)")
            return None
        if settings.games > HOUSE_MAX_GAMES:
            out.error(conn, "bad_option", f"a room against a house bot plays at most {HOUSE_MAX_GAMES} games")
            return None
        session = self.sessions[conn]
        address = self.addresses.get(conn, "?")
        by_name = sum(opponent == session.name for opponent, _ in self.house_games.values())
        if by_name >= self.limits.max_house_games_per_name:
            out.refuse(conn, "house_per_name", "busy", f"you are playing {by_name} house bot game"
                       f"{'' if by_name == 1 else 's'} already, the limit per name; finish it first")
            return None
        by_address = sum(where == address for _, where in self.house_games.values())
        limit = self.limits.max_house_games_per_address
        if limit and by_address >= limit:
            out.refuse(conn, "house_per_address", "busy", f"{by_address} house bot games are being played from "
                       "your address, its limit; try again when one ends")
            return None
        if len(self.house_running) >= self.house_limit:
            out.refuse(conn, "house_busy", "busy", f"all {self.house_limit} house bots of this server are playing; "
                       "try again when a game ends")
            return None
        return self._house_name(level)

    def _house_name(self, level: str) -> str:
        """A house bot name never used before by this server, and held by nobody (a seat, a session, an entry)."""
        while True:
            self._house_serial += 1
            name = f"{HOUSE_PREFIX}{level}-{self._house_serial}"
            if name not in self.house_running and name not in self.by_name and not self.seat_holders.get(name) \
                    and self._entrant(name) is None:
                return name

    def house_exited(self, name: str, now: float) -> HallOutbox:
        """A house bot process ended (its games done, or it failed): its slot is free again, and a seat it still
        holds in a room is given up at once (a running game is lost by the bot, the room plays no more games).
        A tournament's house entrant whose event goes on is started again (a few times, not in a loop)."""
        out = HallOutbox()
        self._now = now
        self.house_running.pop(name, None)
        self.house_games.pop(name, None)
        director = self._entrant(name)
        if director is not None and director.status in ("running", "paused") and name in director.settings.local:
            restarts = self._house_restarts.get(name, 0)
            if restarts < HOUSE_RESTARTS:
                self._house_restarts[name] = restarts + 1
                log.warning("house bot %s of tournament %s ended while the event goes on: starting it again (%d of "
                            "%d)", name, director.settings.name, restarts + 1, HOUSE_RESTARTS)
                self.house_running[name] = f"tournament {director.id}"
                out.house.append(HouseStart(name, director.settings.game, director.settings.local[name],
                                            tournament=director.id))
            return out
        for room_name in sorted(self.seat_holders.get(name, set())):
            room = self.rooms.get(room_name)
            if room is not None and room.tournament is None:
                self._apply(out, room, room.withdraw(name, now, f"{name} stopped"))
        return out

    def _join(self, out: HallOutbox, conn: int, msg: dict[str, Any], now: float) -> None:
        session = self.sessions[conn]
        room = self._room(out, session, msg)
        if room is None:
            return
        wanted = msg.get("game")
        if wanted is not None and wanted != room.game.id:
            out.error(conn, "wrong_game", f"room {room.name} plays {room.game.id}, not {wanted[:40]}", room=room.name)
            return
        if room.name not in session.rooms and len(session.rooms) >= self.limits.max_rooms_in_one:
            out.refuse(conn, "rooms_per_connection", "too_many_rooms", f"you are in {len(session.rooms)} rooms "
                       "already; leave one first")
            return
        self._apply(out, room, room.join(session.name, session.coords, now, msg.get("role", "player"),
                                         msg.get("seat")))

    def _seek(self, out: HallOutbox, conn: int, msg: dict[str, Any], now: float) -> None:
        session = self.sessions[conn]
        event = self._entered_in(session.name)
        if event is not None:
            out.error(conn, "in_tournament", f"you have games to play in the tournament {event.settings.name}; the "
                      "server seats you in each of them (log in and wait)")
            return
        try:
            settings = RoomSettings.parse(msg["game"], msg.get("options"), msg.get("time_control"), None, None,
                                          msg.get("games"), self.room_defaults)
        except OptionError as exc:
            out.error(conn, "bad_option", str(exc))
            return
        if len(self.rooms) >= self.limits.seek_rooms:
            out.refuse(conn, "rooms_server", "too_many_rooms", f"the server holds {len(self.rooms)} rooms, its "
                       "limit; try again when some games end")
            return
        playing = len(self.seat_holders.get(session.name, set()) & self.seek_rooms)
        if playing >= self.limits.max_seek_games_per_name:
            out.refuse(conn, "seeks_per_name", "too_many_rooms", f"you sit in {playing} rooms that seeks opened, "
                       "the limit per name; finish a game first")
            return
        self._drop_seeks(session.name, settings.game.id)
        key = json.dumps(settings.to_json(), sort_keys=True)
        waiting = self.seeks.setdefault(key, [])
        for index, other in enumerate(waiting):
            if other.name != session.name and other.name in self.by_name:
                del waiting[index]
                self._pair(out, other, session, settings, now)
                return
        seek = Seek(session.name, settings, key, now)
        waiting.append(seek)
        out.send(conn, m.seeking(seek.to_json(), self._other_seeks(seek)))
        for other in self._other_seeks_of(seek):  # they learn that someone waits on other settings, too
            out.send(self.by_name[other.name].conn, m.seeking(other.to_json(), self._other_seeks(other)))
        log.info("%s seeks a game of %s", session.name, settings.game.id)

    def _other_seeks_of(self, seek: Seek) -> list[Seek]:
        """The waiting seeks of connected players for ``seek``'s game on other settings."""
        return [other for key, waiting in self.seeks.items() if key != seek.key for other in waiting
                if other.settings.game is seek.settings.game and other.name != seek.name and other.name in self.by_name]

    def _other_seeks(self, seek: Seek) -> list[dict[str, Any]]:
        """What the ``seeking`` reply says of the seeks that wait for the same game but cannot pair with ``seek``."""
        return [{"name": other.name, **other.to_json()} for other in self._other_seeks_of(seek)[:10]]

    def _cancel_seek(self, out: HallOutbox, conn: int, msg: dict[str, Any], now: float) -> None:
        game = msg["game"]
        if game not in GAMES:
            out.error(conn, "bad_option", f"unknown game {game[:40]!r}; games: {', '.join(GAMES)}")
            return
        self._drop_seeks(self.sessions[conn].name, game)
        out.send(conn, m.seek_cancelled(game))

    def _list_tournaments(self, out: HallOutbox, conn: int, msg: dict[str, Any], now: float) -> None:
        out.send(conn, m.tournaments([d.summary() for d in self.tournaments.values()]))

    def _watch_tournament(self, out: HallOutbox, conn: int, msg: dict[str, Any], now: float) -> None:
        director = self._tournament(out, conn, msg["tournament"])
        if director is None:
            return
        watching = self.tournament_watchers.setdefault(director.id, set())
        if msg.get("on", True):
            watching.add(conn)
        else:
            watching.discard(conn)
        out.send(conn, m.tournament(self.tournament_view(director, now)))

    def _tournament_create(self, out: HallOutbox, conn: int, msg: dict[str, Any], now: float) -> None:
        if not self._organiser(out, conn):
            return
        players = msg.get("players", [])
        local_levels = msg.get("local", [])
        bad = [p for p in players if not isinstance(p, str) or not NAME.fullmatch(p) or p.startswith(HOUSE_PREFIX)]
        if bad:
            out.error(conn, "bad_option", f"{str(bad[0])[:40]!r} is not a player name: use {NAME_HELP} (names "
                      f"starting with {HOUSE_PREFIX} are the server's own bots: list those in local)")
            return
        bad = [lv for lv in local_levels if not isinstance(lv, str) or not HOUSE_LEVEL.fullmatch(lv)]
        if bad:
            out.error(conn, "bad_option", f"unknown bot level {str(bad[0])[:40]!r} in local; levels: "
                      f"{', '.join(HOUSE_LEVELS)}")
            return
        if local_levels and not self.house_limit:
            out.error(conn, "bad_option", "this server starts no house bots: list players only, or start the "
                      "server with plyhall serve --house-bots N")
            return
        local: dict[str, str] = {level_name: level for level in local_levels
                                 for level_name in [self._house_name(level)]}
        try:
            settings = define(msg, [*players, *local], local, self.env.wall_clock())
            RoomSettings.parse(settings.game, settings.room["options"], settings.room["time_control"],
                               settings.room["illegal_move"], settings.room["grace"], 1, self.room_defaults)
        except (TournamentError, OptionError) as exc:
            out.error(conn, "bad_option", str(exc))
            return
        if settings.id in self.tournaments:
            out.error(conn, "bad_option", f"a tournament called {self.tournaments[settings.id].settings.name} exists "
                      "already; choose another name")
            return
        if msg.get("start") and not self._house_entrants_start(out, conn, settings.local):
            return
        director = Director(settings)
        self.tournaments[director.id] = director
        log.info("tournament %s created: %s %s, %d entrants, %d games", settings.name, settings.game,
                 settings.spec.format, len(director.entrants), director.schedule.total_games)
        if msg.get("start"):
            self._start_house_entrants(out, director)
            director.control("start")
        self._tournament_changed(out, director, now)
        out.send(conn, m.tournament(self.tournament_view(director, now)))

    def _house_entrants_start(self, out: HallOutbox, conn: int, local: dict[str, str]) -> bool:
        """True when the house bot entrants ``local`` can all start now (an event holds no house bot until it
        starts); else a ``busy`` error saying how many can."""
        free = max(0, self.house_limit - len(self.house_running))
        if len(local) <= free:
            return True
        out.refuse(conn, "house_busy", "busy", f"the tournament needs {len(local)} house bots to start; this server "
                   f"can start {free} more now (plyhall serve --house-bots N sets the limit; games against house "
                   "bots end first)")
        return False

    def _start_house_entrants(self, out: HallOutbox, director: Director) -> None:
        for name, level in director.settings.local.items():
            if name not in self.house_running:
                self.house_running[name] = f"tournament {director.id}"
                out.house.append(HouseStart(name, director.settings.game, level, tournament=director.id))

    def _tournament_control(self, out: HallOutbox, conn: int, msg: dict[str, Any], now: float) -> None:
        if not self._organiser(out, conn):
            return
        director = self._tournament(out, conn, msg["tournament"])
        if director is None:
            return
        if msg["action"] == "start" and director.status == "created":
            if not self._house_entrants_start(out, conn, director.settings.local):
                return
            self._start_house_entrants(out, director)
        try:
            director.control(msg["action"])
        except TournamentError as exc:
            out.error(conn, "bad_option", str(exc))
            return
        log.info("tournament %s: %s", director.settings.name, msg["action"])
        if director.status == "cancelled":
            for room_name in sorted(director.open.values()):
                room = self.rooms.get(room_name)
                if room is not None:
                    self._apply(out, room, room.dissolve(now, "the tournament was cancelled"))
            director.open.clear()
            out.house_stop.extend(name for name in director.settings.local if name in self.house_running)
        self._tournament_changed(out, director, now)
        out.send(conn, m.tournament(self.tournament_view(director, now)))

    def _room_request(self, out: HallOutbox, conn: int, msg: dict[str, Any], now: float) -> None:
        session = self.sessions[conn]
        room = self._room(out, session, msg)
        if room is not None:
            self._apply(out, room, ROOM_REQUESTS[msg["type"]](room, session.name, msg, now))

    # Logins -----------------------------------------------------------------------------

    def _admit(self, out: HallOutbox, conn: int, msg: dict[str, Any], now: float, proven: bool) -> None:
        """Open the session of a login whose identity is settled (``proven``: by secret or resume token)."""
        name = msg["name"]
        coords = msg.get("coords", "algebraic")
        previous = self.by_name.get(name)
        if previous is not None:
            if not proven:
                out.error(conn, "name_in_use", f"{name} is connected already; claim a name with a secret to be "
                          "able to take over your own session")
                return
            # the rightful owner logs in again (a restarted bot): the old connection goes
            out.close.append((previous.conn, "logged in from another connection"))
            self.sessions.pop(previous.conn, None)
            self.watchers.discard(previous.conn)
        session = Session(conn, name, coords, organiser="organiser" in msg)
        if previous is not None:
            session.rooms = set(previous.rooms)
            session.watching_lobby = previous.watching_lobby
            if session.watching_lobby:
                self.watchers.add(conn)
        session.rooms |= self.seat_holders.get(name, set()) & set(self.rooms)
        self.sessions[conn] = session
        self.by_name[name] = session
        token, digest = self.logins.issue(name)
        out.writes.append(IdentitySaved(name, digest))
        log.info("login: %s from %s%s", name, self.addresses.get(conn, "?"),
                 " (took over its earlier connection)" if previous is not None else "")
        out.send(conn, m.welcome(name, coords, f"plyhall {protocol.__version__}", name in self.logins.claims,
                                 sorted(GAMES), sorted(session.rooms), token, session.organiser,
                                 list(HOUSE_LEVELS) if self.house_limit else None))
        for room_name in sorted(session.rooms):
            room = self.rooms[room_name]
            if room.seat_of(name) is not None:
                self._apply(out, room, room.reconnected(name, coords, now))
            else:
                session.rooms.discard(room_name)

    # Tournaments ------------------------------------------------------------------------

    def _organiser(self, out: HallOutbox, conn: int) -> bool:
        if self.sessions[conn].organiser:
            return True
        out.error(conn, "not_organiser", "only the organiser runs tournaments: log in with the organiser secret "
                  "(plyhall tournament --secret, or $PLYHALL_ORGANISER_SECRET)")
        return False

    def _tournament(self, out: HallOutbox, conn: int, key: str) -> Director | None:
        from ..tournament.director import slug

        director = self.tournaments.get(key) or self.tournaments.get(slug(key))
        if director is None:
            known = ", ".join(sorted(self.tournaments)) or "none yet"
            out.error(conn, "no_such_tournament", f"there is no tournament {key[:40]!r}; tournaments: {known}")
        return director

    def _entered_in(self, name: str) -> Director | None:
        """The running tournament in which ``name`` still has games, if any."""
        for director in self.tournaments.values():
            if director.status in ("running", "paused") and director.has_games_for(name):
                return director
        return None

    def tournament_view(self, director: Director, now: float) -> dict[str, Any]:
        """A tournament's full state, with its running games as the lobby lists them."""
        rooms = {number: self.rooms[name].listing() for number, name in director.open.items() if name in self.rooms}
        return director.to_json(now, rooms)

    def _tournament_changed(self, out: HallOutbox, director: Director, now: float) -> None:
        """Store the event, open what is due, and push it to its watchers (coalesced)."""
        self._open_due(out, director, now)
        out.writes.append(TournamentSaved(director.snapshot()))
        if not self.tournament_watchers.get(director.id):
            return
        if now - self._tournament_pushed.get(director.id, float("-inf")) >= LOBBY_PUSH_INTERVAL or \
                director.status in ("finished", "cancelled"):
            self._push_tournament(out, director)
        elif director.id not in self._tournament_dirty:
            self._tournament_dirty.add(director.id)
            heapq.heappush(self._timers, (self._tournament_pushed[director.id] + LOBBY_PUSH_INTERVAL,
                                          TOURNAMENT_TIMER + director.id))

    def _push_tournament(self, out: HallOutbox, director: Director) -> None:
        self._tournament_pushed[director.id] = self._now
        self._tournament_dirty.discard(director.id)
        msg = m.tournament(self.tournament_view(director, self._now))
        for conn in sorted(self.tournament_watchers.get(director.id, ())):
            out.send(conn, msg)

    def _open_due(self, out: HallOutbox, director: Director, now: float) -> None:
        """Open a room for every game the director has due, and seat its entrants (or keep their seats)."""
        for game in director.due():
            name = f"{director.settings.name} {game.round}.{game.board}"
            if director.settings.spec.games_per_pairing > 1:
                name += f".{game.game}"
            if name.casefold() in self.folded:
                name = f"{director.settings.name} #{game.number}"
            room_cfg = director.settings.room
            settings = RoomSettings.parse(director.settings.game, room_cfg["options"], room_cfg["time_control"],
                                          room_cfg["illegal_move"], room_cfg["grace"], 1, self.room_defaults)
            room = Room(name, settings, self.env, None, reserved=(game.white, game.black), tournament=director.id,
                        tournament_game=game.number, opening=tuple(director.opening(game)))
            self._add_room(room)
            director.opened(game.number, name, now)
            out.writes.append(_room_saved(room))
            for seat, entrant in enumerate((game.white, game.black)):
                self.seat_holders.setdefault(entrant, set()).add(name)
                session = self.by_name.get(entrant)
                if session is not None:
                    self._apply(out, room, room.join(entrant, session.coords, now, "player", seat))
                elif entrant in director.settings.local:  # a house bot still starting (warming its engine up)
                    self._apply(out, room, room.hold(entrant, seat, now, max(HOUSE_ARRIVAL, room.settings.grace)))
                else:
                    self._apply(out, room, room.hold(entrant, seat, now))
        self._lobby_changed(out)

    def _tournament_ended(self, out: HallOutbox, record: GameRecord, now: float) -> None:
        director = self.tournaments.get(record.tournament or "")
        if director is None or record.tournament_game is None:
            return
        duration = None if record.ended_at is None else record.ended_at - record.started_at
        if director.ended(record.tournament_game, record.winner, record.status, record.id, duration):
            log.info("tournament %s finished%s", director.settings.name,
                     f" ({director.stopped_early})" if director.stopped_early else "")
        self._tournament_changed(out, director, now)

    # Seeks ------------------------------------------------------------------------------

    def _drop_seeks(self, name: str, game: str | None = None) -> None:
        for key, waiting in list(self.seeks.items()):
            kept = [s for s in waiting if s.name != name or (game is not None and s.settings.game.id != game)]
            if kept:
                self.seeks[key] = kept
            else:
                del self.seeks[key]

    def _pair(self, out: HallOutbox, waiting: Seek, arriving: Session, settings: RoomSettings, now: float) -> None:
        """Open a room for two matching seeks and seat both; the first move alternates between meetings."""
        pair = frozenset((waiting.name, arriving.name))
        first = waiting.name if self.first_of_pair.get(pair) != waiting.name else arriving.name
        self.first_of_pair[pair] = first
        second = arriving.name if first == waiting.name else waiting.name
        self._drop_seeks(waiting.name)
        self._drop_seeks(arriving.name)
        room = Room(self._free_room_name(), settings, self.env)
        self._add_room(room)
        self.seek_rooms.add(room.name)
        out.writes.append(_room_saved(room))
        log.info("paired %s and %s for %s in %s", first, second, settings.game.id, room.name)
        for seat, name in enumerate((first, second)):
            session = self.by_name[name]
            self._apply(out, room, room.join(name, session.coords, now, "player", seat))

    # Rooms ------------------------------------------------------------------------------

    def _add_room(self, room: Room) -> None:
        self.rooms[room.name] = room
        self.folded[room.name.casefold()] = room.name

    def _free_room_name(self) -> str:
        while True:
            lake = LAKES[self._lake % len(LAKES)]
            round_no = self._lake // len(LAKES)
            self._lake += 1
            name = lake if round_no == 0 else f"{lake} {round_no + 1}"
            if name.casefold() not in self.folded:
                return name

    def _remove_room(self, out: HallOutbox, room: Room) -> None:
        self.rooms.pop(room.name, None)
        self.seek_rooms.discard(room.name)
        created = self.created_by.get(room.creator or "")
        if created is not None:
            created.discard(room.name)
            if not created:
                del self.created_by[room.creator or ""]
        for address in self.room_addresses.pop(room.name, ()):
            charged = self.address_rooms.get(address)
            if charged is not None:
                charged.discard(room.name)
                if not charged:
                    del self.address_rooms[address]
        for bot in [bot for bot, where in self.house_running.items() if where == room.name]:
            self.house_games.pop(bot, None)  # the game is over; the bot's slot is free once its process ends
        self._scheduled.pop(room.name, None)
        self.folded.pop(room.name.casefold(), None)
        out.writes.append(RoomRemoved(room.name))
        log.info("room %s closed", room.name)
        self._lobby_changed(out)

    def _room(self, out: HallOutbox, session: Session, msg: dict[str, Any]) -> Room | None:
        name = " ".join(msg["room"].split())
        room = self.rooms.get(name)
        if room is None:
            if len(name) <= MAX_ROOM_NAME:  # a longer name names no room: don't even fold it
                room = self.rooms.get(self.folded.get(name.casefold(), ""))
                if room is not None:
                    return room
            out.error(session.conn, "no_such_room", f"there is no room called {name[:40]!r}", room=name[:40])
        return room

    def _apply(self, out: HallOutbox, room: Room, result: Outbox) -> None:
        """Route a room's outbox to connections, track membership, schedule its timer and clean up."""
        out.writes.extend(result.writes)
        out.ended.extend(result.ended)
        for name in result.entered:
            session = self.by_name.get(name)
            if session is not None:
                session.rooms.add(room.name)
            if room.seat_of(name) is not None:
                self.seat_holders.setdefault(name, set()).add(room.name)
        for name, msg in result.messages:
            session = self.by_name.get(name)
            if session is not None:
                out.send(session.conn, msg)
        for name in result.vacated:
            holders = self.seat_holders.get(name)
            if holders is not None:
                holders.discard(room.name)
                if not holders:
                    del self.seat_holders[name]
                    if self._holder(name) is Holder.NOBODY:
                        if self.logins.forget(name):  # its player is gone for good: the token proves nothing now
                            out.writes.append(IdentityForgotten(name))
            session = self.by_name.get(name)
            if session is not None and name not in room.coords:
                session.rooms.discard(room.name)
        for record in result.ended:  # after the room's own messages: game_over before the next game's start
            if record.tournament is not None:
                self._tournament_ended(out, record, self._now)
        if (room.ever_entered or room.status == "finished") and room.is_empty() and room.status != "playing":
            self._remove_room(out, room)
            return
        if room.tournament is None and room.status != "playing" and room.members and \
                all(n.startswith(HOUSE_PREFIX) for n in room.members):
            # nobody but house bots is left in a room between games: they are not needed any more
            out.house_stop.extend(n for n in room.members if n in self.house_running)
        self._schedule(room)
        if result.listing_changed:
            self._lobby_changed(out)

    def _schedule(self, room: Room) -> None:
        """Wake ``room`` at its next deadline. A deadline only ever moves later with a move, so an entry is
        pushed only when it comes earlier than the one waiting: the waiting one then finds nothing due and
        the room is scheduled again (one heap entry a room, not one a move)."""
        deadline = room.next_deadline()
        if deadline is not None and deadline < self._scheduled.get(room.name, float("inf")):
            self._scheduled[room.name] = deadline
            heapq.heappush(self._timers, (deadline, room.name))

    def _lobby_changed(self, out: HallOutbox) -> None:
        """Push the listing to lobby watchers, at most once every LOBBY_PUSH_INTERVAL."""
        if not self.watchers:
            return
        if self._now - self._lobby_pushed_at >= LOBBY_PUSH_INTERVAL:
            self._push_lobby(out)
        elif not self._lobby_dirty:
            self._lobby_dirty = True
            heapq.heappush(self._timers, (self._lobby_pushed_at + LOBBY_PUSH_INTERVAL, LOBBY_TIMER))

    def _push_lobby(self, out: HallOutbox) -> None:
        self._lobby_pushed_at = self._now
        self._lobby_dirty = False
        listing = m.rooms(self.listing())
        for conn in sorted(self.watchers):
            out.send(conn, listing)


def _room_saved(room: Room) -> Write:
    return RoomSaved(room.snapshot())


def tag_reply(out: HallOutbox, conn: int, msg_id: Any, replies: frozenset[str] = frozenset({"error"})) -> None:
    """The one rule: the first message for the requester that answers the request carries its id."""
    if msg_id is None:
        return
    for index, (target, msg) in enumerate(out.messages):
        if target == conn and msg["type"] in replies:
            out.messages[index] = (conn, {**msg, "id": msg_id})
            return
