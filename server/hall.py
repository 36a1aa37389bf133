"""The lobby: sessions, names, the room list, and dispatch of every validated request.

Like :class:`server.room.Room`, ``Hall`` is a plain object: the WebSocket layer
feeds it connections, messages and the time, and sends what it returns.
Messages here are addressed by connection id.
"""

from __future__ import annotations

import hashlib
import heapq
import hmac
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import protocol
from protocol.games import COORDS, GAMES, OptionError
from protocol.messages import NAME_PATTERN, ProtocolError

from .room import GameRecord, Outbox, Room, RoomSettings

ROOM_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 '_.\-]{0,39}$")
MAX_ROOM_NAME = 40  # ROOM_NAME's limit; generated names stay below it too
NAME = re.compile(NAME_PATTERN)
ROOM_NAME_HELP = "1 to 40 letters, digits, spaces and ' _ . - (starting with a letter or digit)"
NAME_HELP = "1 to 32 letters, digits and _ . - (starting with a letter or digit)"
LAKES = (
    "Kalamalka Lake", "Okanagan Lake", "Wood Lake", "Skaha Lake", "Vaseux Lake", "Mabel Lake",
    "Shuswap Lake", "Kootenay Lake", "Arrow Lake", "Slocan Lake", "Moyie Lake", "Christina Lake",
)
HASH_ITERATIONS = 20_000
LOBBY_PUSH_INTERVAL = 0.5  # seconds between two pushed room listings; changes in between are coalesced
LOBBY_TIMER = ""  # timer-heap entry of the lobby push (no room has an empty name)


@dataclass
class Limits:
    """Limits that protect the server from one client."""

    max_rooms: int = 5000
    max_rooms_per_name: int = 20
    max_rooms_in_one: int = 50  # rooms one session may be in at once


@dataclass
class Session:
    """A logged-in connection."""

    conn: int
    name: str
    coords: str
    rooms: set[str] = field(default_factory=set)
    watching_lobby: bool = False


@dataclass
class Claim:
    """A stored name claim: salted hash of the secret."""

    salt: str
    digest: str

    @classmethod
    def make(cls, secret: str) -> Claim:
        """A new claim for ``secret``."""
        salt = secrets.token_hex(8)
        return cls(salt, _digest(secret, salt))

    def matches(self, secret: str) -> bool:
        """True when ``secret`` is the claimed one."""
        return hmac.compare_digest(self.digest, _digest(secret, self.salt))


def _digest(secret: str, salt: str) -> str:
    return hashlib.pbkdf2_hmac("sha256", secret.encode(), salt.encode(), HASH_ITERATIONS).hex()


@dataclass
class HallOutbox:
    """What a Hall call produced: messages by connection, connections to close, records, claims."""

    messages: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    close: list[tuple[int, str]] = field(default_factory=list)
    records: list[GameRecord] = field(default_factory=list)
    claims: list[tuple[str, Claim]] = field(default_factory=list)

    def send(self, conn: int, msg: dict[str, Any]) -> None:
        """Queue ``msg`` for connection ``conn``."""
        self.messages.append((conn, msg))


class Hall:
    """All sessions and rooms of one server."""

    def __init__(
        self,
        claims: dict[str, Claim] | None = None,
        limits: Limits | None = None,
        room_defaults: dict[str, Any] | None = None,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.claims: dict[str, Claim] = dict(claims or {})
        self.limits = limits or Limits()
        self.room_defaults = room_defaults or {}
        self.wall_clock = wall_clock
        self.sessions: dict[int, Session] = {}  # by connection
        self.by_name: dict[str, Session] = {}
        self.rooms: dict[str, Room] = {}
        self.folded: dict[str, str] = {}  # casefolded room name -> room name: names are unique ignoring case
        self.seat_holders: dict[str, set[str]] = {}  # name -> rooms where it holds a seat (even when away)
        self.created_by: dict[str, set[str]] = {}
        self._lake = 0
        self._timers: list[tuple[float, str]] = []  # (deadline, room) heap; stale entries are harmless
        self.watchers: set[int] = set()  # connections that watch the lobby
        self._now = 0.0
        self._lobby_pushed_at = float("-inf")
        self._lobby_dirty = False

    # Connections ------------------------------------------------------------------------

    def handle(self, conn: int, msg: dict[str, Any], now: float) -> HallOutbox:
        """Dispatch one validated client message from connection ``conn``."""
        out = HallOutbox()
        self._now = now
        kind = msg["type"]
        msg_id = msg.get("id")
        session = self.sessions.get(conn)
        if kind == "login":
            self._login(out, conn, msg, now)
            return out
        if kind == "ping":
            out.send(conn, _with_id({"type": "pong"}, msg_id))
            return out
        if session is None:
            out.send(conn, ProtocolError("not_logged_in", "log in first: send {\"type\": \"login\", \"name\": ...}",
                                         msg_id).to_message())
            return out
        if kind == "list_rooms":
            out.send(conn, _with_id({"type": "rooms", "rooms": self.listing(msg.get("game"))}, msg_id))
        elif kind == "watch_lobby":
            session.watching_lobby = msg.get("on", True)
            if session.watching_lobby:
                self.watchers.add(conn)
            else:
                self.watchers.discard(conn)
            out.send(conn, _with_id({"type": "rooms", "rooms": self.listing()}, msg_id))
        elif kind == "create_room":
            self._create_room(out, session, msg, now)
        elif kind == "join":
            room = self._room(out, session, msg)
            if room is not None:
                if room.name not in session.rooms and len(session.rooms) >= self.limits.max_rooms_in_one:
                    out.send(conn, ProtocolError("too_many_rooms", f"you are in {len(session.rooms)} rooms already; "
                                                 "leave one first", msg_id).to_message())
                    return out
                role = msg.get("role", "player")
                self._apply(out, room, room.join(session.name, session.coords, now, role, msg.get("seat"), msg_id))
        else:
            room = self._room(out, session, msg)
            if room is None:
                return out
            name = session.name
            if kind == "leave":
                result = room.leave(name, now, msg_id)
            elif kind == "move":
                result = room.move(name, msg["move"], now, msg_id)
            elif kind == "legal_moves":
                result = room.legal_moves(name, msg_id)
            elif kind == "state":
                result = room.send_state(name, now, msg_id)
            elif kind == "resign":
                result = room.resign(name, now, msg_id)
            elif kind == "offer_draw":
                result = room.offer_draw(name, now, msg_id)
            elif kind == "chat":
                result = room.chat(name, msg["text"], msg_id)
            else:  # pragma: no cover - validate() only lets known types through
                raise AssertionError(kind)
            self._apply(out, room, result)
        return out

    def disconnect(self, conn: int, now: float) -> HallOutbox:
        """A connection closed: its seats enter their grace period, spectating ends."""
        out = HallOutbox()
        self._now = now
        self.watchers.discard(conn)
        session = self.sessions.pop(conn, None)
        if session is None:
            return out
        if self.by_name.get(session.name) is session:
            del self.by_name[session.name]
        for room_name in sorted(session.rooms):
            room = self.rooms.get(room_name)
            if room is not None:
                self._apply(out, room, room.disconnected(session.name, now))
        # rooms this name created and nobody ever entered go with their creator
        for room_name in sorted(self.created_by.get(session.name, set())):
            room = self.rooms.get(room_name)
            if room is not None and room.is_empty() and room.status != "playing":
                self._remove_room(room_name)
                self._lobby_changed(out)
        return out

    def tick(self, now: float) -> HallOutbox:
        """Let time act on every room whose deadline has come."""
        out = HallOutbox()
        self._now = now
        due: set[str] = set()
        while self._timers and self._timers[0][0] <= now:
            due.add(heapq.heappop(self._timers)[1])
        if due.discard(LOBBY_TIMER) is None and self._lobby_dirty:
            self._push_lobby(out)
        for name in sorted(due):
            room = self.rooms.get(name)
            if room is not None:
                self._apply(out, room, room.tick(now))
        return out

    def next_deadline(self) -> float | None:
        """The earliest time at which :meth:`tick` may have something to do."""
        return self._timers[0][0] if self._timers else None

    def shutdown(self, now: float) -> HallOutbox:
        """Abort every running game (recorded as aborted) and tell everybody."""
        out = HallOutbox()
        for room in list(self.rooms.values()):
            self._apply(out, room, room.abort(now))
        for conn in list(self.sessions):
            out.send(conn, ProtocolError("server_shutdown", "the server is shutting down").to_message())
        return out

    def listing(self, game: str | None = None) -> list[dict[str, Any]]:
        """Every room's summary, optionally for one game."""
        return [r.listing() for r in self.rooms.values() if game is None or r.game.id == game]

    # Internals --------------------------------------------------------------------------

    def _login(self, out: HallOutbox, conn: int, msg: dict[str, Any], now: float) -> None:
        msg_id = msg.get("id")
        if conn in self.sessions:
            out.send(conn, ProtocolError("already_logged_in", f"you are logged in as {self.sessions[conn].name}",
                                         msg_id).to_message())
            return
        name = msg["name"]
        coords = msg.get("coords", "algebraic")
        secret = msg.get("secret")
        if not NAME.fullmatch(name):  # fullmatch: '$' alone lets a trailing newline through ("ann\n")
            out.send(conn, ProtocolError("bad_name", f"{name[:40]!r} is not a valid name: use {NAME_HELP}",
                                         msg_id).to_message())
            return
        if coords not in COORDS:
            out.send(conn, ProtocolError("bad_message", f"unknown coords {coords[:40]!r}; accepted: "
                                         f"{', '.join(COORDS)}", msg_id).to_message())
            return
        if secret is not None and not 1 <= len(secret) <= 200:
            out.send(conn, ProtocolError("bad_message", "a secret is 1 to 200 characters", msg_id).to_message())
            return
        claim = self.claims.get(name)
        if claim is not None and (secret is None or not claim.matches(secret)):
            out.send(conn, ProtocolError("wrong_secret", f"the name {name} is claimed; log in with its secret or "
                                         "choose another name", msg_id).to_message())
            return
        previous = self.by_name.get(name)
        if previous is not None:
            if claim is None:
                out.send(conn, ProtocolError("name_in_use", f"{name} is connected already; claim a name with a "
                                             "secret to be able to take over your own session", msg_id).to_message())
                return
            # the rightful owner logs in again (a restarted bot): the old connection goes
            out.close.append((previous.conn, "logged in from another connection"))
            self.sessions.pop(previous.conn, None)
        claimed = claim is not None
        if claim is None and secret is not None:
            claim = Claim.make(secret)
            self.claims[name] = claim
            out.claims.append((name, claim))
            claimed = True
        session = Session(conn, name, coords)
        if previous is not None:
            session.rooms = set(previous.rooms)
            session.watching_lobby = previous.watching_lobby
            self.watchers.discard(previous.conn)
            if session.watching_lobby:
                self.watchers.add(conn)
        session.rooms |= self.seat_holders.get(name, set()) & set(self.rooms)
        self.sessions[conn] = session
        self.by_name[name] = session
        out.send(conn, _with_id({"type": "welcome", "name": name, "coords": coords,
                                 "server": f"plyhall {protocol.__version__}", "claimed": claimed,
                                 "games": sorted(GAMES), "rooms": sorted(session.rooms)}, msg_id))
        for room_name in sorted(session.rooms):
            room = self.rooms[room_name]
            if room.seat_of(name) is not None:
                self._apply(out, room, room.reconnected(name, coords, now))
            else:
                session.rooms.discard(room_name)

    def _create_room(self, out: HallOutbox, session: Session, msg: dict[str, Any], now: float) -> None:
        msg_id = msg.get("id")
        conn = session.conn
        if len(self.rooms) >= self.limits.max_rooms:
            out.send(conn, ProtocolError("too_many_rooms", f"the server holds {len(self.rooms)} rooms, its limit",
                                         msg_id).to_message())
            return
        mine = self.created_by.setdefault(session.name, set()) & set(self.rooms)
        self.created_by[session.name] = mine
        if len(mine) >= self.limits.max_rooms_per_name:
            out.send(conn, ProtocolError("too_many_rooms", f"you have {len(mine)} open rooms, the limit per name; "
                                         "finish or leave some first", msg_id).to_message())
            return
        name = msg.get("name")
        if name is None:
            name = self._free_room_name()
        else:
            name = " ".join(name.split())
            if not ROOM_NAME.match(name):
                out.send(conn, ProtocolError("bad_message", f"{name[:40]!r} is not a valid room name: use "
                                             f"{ROOM_NAME_HELP}", msg_id).to_message())
                return
            if name.casefold() in self.folded:
                out.send(conn, ProtocolError("room_exists", f"a room called {name} exists already", msg_id)
                         .to_message())
                return
        try:
            settings = RoomSettings.parse(
                msg["game"], msg.get("options"), msg.get("time_control"), msg.get("illegal_move"),
                msg.get("grace"), msg.get("games"), self.room_defaults)
        except OptionError as exc:
            out.send(conn, ProtocolError("bad_option", str(exc), msg_id).to_message())
            return
        room = Room(name, settings, session.name, self.wall_clock)
        self.rooms[name] = room
        self.folded[name.casefold()] = name
        mine.add(name)
        out.send(conn, _with_id({"type": "room", "room": room.listing()}, msg_id))
        self._lobby_changed(out)

    def _free_room_name(self) -> str:
        while True:
            lake = LAKES[self._lake % len(LAKES)]
            round_no = self._lake // len(LAKES)
            self._lake += 1
            name = lake if round_no == 0 else f"{lake} {round_no + 1}"
            if name.casefold() not in self.folded:
                return name

    def _remove_room(self, name: str) -> None:
        self.rooms.pop(name, None)
        self.folded.pop(name.casefold(), None)

    def _room(self, out: HallOutbox, session: Session, msg: dict[str, Any]) -> Room | None:
        name = " ".join(msg["room"].split())
        room = self.rooms.get(name)
        if room is None:
            if len(name) <= MAX_ROOM_NAME:  # a longer name names no room: don't even fold it
                room = self.rooms.get(self.folded.get(name.casefold(), ""))
                if room is not None:
                    return room
            out.send(session.conn, ProtocolError("no_such_room", f"there is no room called {name[:40]!r}",
                                                 msg.get("id")).to_message(room=name[:40]))
        return room

    def _apply(self, out: HallOutbox, room: Room, result: Outbox) -> None:
        """Route a room's outbox to connections, track membership and clean up."""
        out.records.extend(result.records)
        for name, msg in result.messages:
            session = self.by_name.get(name)
            if msg["type"] == "joined":
                if session is not None:
                    session.rooms.add(room.name)
                if msg.get("seat") is not None:
                    self.seat_holders.setdefault(name, set()).add(room.name)
            if session is not None:
                out.send(session.conn, msg)
        for name in result.vacated:
            self.seat_holders.get(name, set()).discard(room.name)
            session = self.by_name.get(name)
            if session is not None and name not in room.coords:
                session.rooms.discard(room.name)
        if room.status == "finished" and room.is_empty():
            self._remove_room(room.name)
            result.listing_changed = True
        else:
            deadline = room.next_deadline()
            if deadline is not None:
                heapq.heappush(self._timers, (deadline, room.name))
        if result.listing_changed:
            self._lobby_changed(out)

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
        listing = {"type": "rooms", "rooms": self.listing()}
        for conn in sorted(self.watchers):
            out.send(conn, listing)


def _with_id(msg: dict[str, Any], msg_id: Any) -> dict[str, Any]:
    if msg_id is not None:
        msg["id"] = msg_id
    return msg
