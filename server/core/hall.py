"""The hall: sessions, the lobby, and dispatch of every validated request to a desk or a room.

Like :class:`server.core.room.Room`, ``Hall`` is a plain object: the WebSocket layer feeds it
connections, messages and the time, and sends what it returns (a :class:`HallOutbox`).
Messages here are addressed by connection id. One rule tags replies: the first message a
request produces for its sender that is one of the request's reply types
(``CLIENT_MESSAGES[type].replies``) or an ``error`` carries the request's ``id``.

The decisions live in desks that never call back into the hall: logins (``logins``), seeks
and the rating ladder (``seeks``), tournaments (``tournaments``), house bots (``house``), timers (``timers``) and the
room registry (``rooms``). The hall is long because it is the one place that routes: a handler a
request type, and the routing of every room outbox to connections, seats and timers; split, a
reader would chase one request across files.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import protocol
from protocol import messages as m
from protocol.games import GAMES, OptionError
from protocol.messages import CLIENT_MESSAGES, NAME_PATTERN, ErrorCode, GameStatus, RoomStatus
from protocol.ratings import anchor_level, anchor_name, rateable_name, too_short
from protocol.requests import (
    CancelSeek,
    ClientMessage,
    CreateRoom,
    Join,
    ListRooms,
    ListTournaments,
    Login,
    Ping,
    RoomRequest,
    Seek,
    TournamentControl,
    TournamentCreate,
    WatchLobby,
    WatchTournament,
)

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
from ..tournament.director import OVER, Director, TournamentStatus
from .cluster import ClusterView
from .env import Env
from .house import HOUSE_ARRIVAL, HOUSE_LEVELS, HOUSE_PREFIX, HouseDesk, HouseStart
from .identity import Claim, ClaimLookup, Holder, SecretCheck
from .ladder import Ladder, LadderConfig
from .logins import Admit, Check, LoginLimits, Logins, Lookup, Refuse, Step
from .outbox import HallOutbox, Refusal, tag_reply
from .rated import DEFAULT_BUDGET, Network, RatedPlay
from .room import Outbox, Room, RoomSettings
from .rooms import MAX_ROOM_NAME, RoomRegistry, lake_name
from .seeks import Pairing, SeekDesk
from .timers import LADDER, LOBBY, Timers
from .tournaments import GOING_ON, UNDER_WAY, TournamentDesk

log = logging.getLogger("plyhall.hall")

ROOM_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 '_.\-]{0,39}$")
NAME = re.compile(NAME_PATTERN)
ROOM_NAME_HELP = "1 to 40 letters, digits, spaces and ' _ . - (starting with a letter or digit)"
UNRATED_ROOM = "an unrated room"
"""Why a game of a room that does not rate its games is not rated."""
REPLIES = {kind: frozenset(schema.replies) | {"error"} for kind, schema in CLIENT_MESSAGES.items()}


def house_stopped(name: str) -> str:
    """The reason of a game a house bot lost because its process ended (it is never rated)."""
    return f"{name} stopped"


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
    max_ladder_names_per_address: int = 10  # names on the rating ladder (of any game) from one address
    house_idle: float = 180.0  # seconds a person playing a house bot may leave a move unplayed: then it loses
    rated_games_per_address: int = DEFAULT_BUDGET  # rated games a day the names of one address play (server.core.rated)
    rated_networks: tuple[Network, ...] = ()  # networks of many independent people: their addresses link no names
    rated_names: str = "claimed"  # "registered": only names the organiser registered (plyhall names add) are rated

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


Handler = Callable[["Hall", HallOutbox, int, Any, float], None]
"""A request's handler: it gets the request (of its ``protocol.requests`` shape) and puts the answers in the outbox."""
RoomMethod = Callable[[Room, str, Any, float], Outbox]

# Requests about one room: the room method that answers each.
ROOM_REQUESTS: dict[str, RoomMethod] = {
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
        ladder: LadderConfig | None = None,
    ) -> None:
        self.env = env or Env.system()
        self.limits = limits or Limits()
        self.room_defaults = room_defaults or {}
        self.logins = Logins(self.env, organiser_secret, shared_names, login_limits or LoginLimits())
        self.house = HouseDesk(house_limit)
        self.rated = RatedPlay(self.limits.rated_networks, self.limits.rated_games_per_address,
                               self.limits.rated_names == "registered")
        self.seeks = SeekDesk(Ladder(ladder, self.room_defaults))
        self.timers = Timers()
        # house bots to start with the server: the ladder's anchors, and the bots of restored rooms
        self.restarted_house: list[HouseStart] = [self.house.anchor(game, level)
                                                  for game, level in (ladder.anchors if ladder else ())]
        self.restored_writes: list[Write] = []  # what restoring changed (rooms nobody comes back to), to store
        self.events = TournamentDesk(self.room_defaults)
        self.sessions: dict[int, Session] = {}  # by connection
        self.by_name: dict[str, Session] = {}
        self.addresses: dict[int, str] = {}  # connection -> peer address (for logs, back-off and quotas)
        self.registry = RoomRegistry()
        self.rooms = self.registry.rooms  # every open room, by name (the registry's: read here, changed there)
        self.seat_holders: dict[str, set[str]] = {}  # name -> rooms where it holds a seat (even when away)
        self.watchers: set[int] = set()  # connections that watch the lobby
        self.cluster: ClusterView | None = None  # the other nodes, when this hall is one node of a cluster
        self.listing_version = 0  # counts changes of this node's listing (a cluster node publishes each)
        self.held_changed: set[str] = set()  # names whose seats or entries here changed (a cluster node publishes)
        self._now = 0.0
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

    def handle(self, conn: int, msg: ClientMessage, now: float) -> HallOutbox:
        """Dispatch one validated client message from connection ``conn``."""
        out = HallOutbox()
        self._now = now
        self.addresses.setdefault(conn, "?")
        kind = msg["type"]
        if conn not in self.sessions and kind not in ("login", "ping"):
            out.error(conn, ErrorCode.NOT_LOGGED_IN, 'log in first: send {"type": "login", "name": ...}')
        else:
            self._handlers[kind](self, out, conn, msg, now)
        tag_reply(out, conn, msg.get("id"), REPLIES[kind])
        return out

    @property
    def tournaments(self) -> dict[str, Director]:
        """Every tournament of this server, by id (the tournament desk's)."""
        return self.events.tournaments

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
        if found is not None:
            self.logins.learn_claim(name, Claim(*found))
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
        self.events.gone(conn)
        self.addresses.pop(conn, None)
        self.logins.gone(conn)
        session = self.sessions.pop(conn, None)
        if session is None:
            return out
        if self.by_name.get(session.name) is session:
            del self.by_name[session.name]
            if self.seeks.seeking(session.name):
                self._lobby_changed(out)  # the lobby stops listing the seek (it lists connected players' only)
            self.seeks.drop(session.name, keep_ladder=True)
            self.seeks.ladder.leave_waiting(session.name)  # a ladder game it plays stays its own, back in time
        for room_name in sorted(session.rooms):
            room = self.rooms.get(room_name)
            if room is not None:
                self._apply(out, room, room.disconnected(session.name, now))
        # rooms this name created and nobody ever entered go with their creator
        for room_name in sorted(self.registry.created(session.name)):
            room = self.rooms.get(room_name)
            if room is not None and not room.ever_entered:
                self._remove_room(out, room)
        if self._holder(session.name) is Holder.NOBODY:
            if self.logins.forget(session.name) and self.cluster is None:  # (in a cluster, another node may hold it)
                out.writes.append(IdentityForgotten(session.name))
        return out

    def tick(self, now: float) -> HallOutbox:
        """Let time act on every room whose deadline has come."""
        out = HallOutbox()
        self._now = now
        due = self.timers.due(now)
        for key in sorted(due.pushes):
            if key == LOBBY:
                self._push_lobby(out)
            elif key in self.events.tournaments:
                self._push_tournament(out, self.events.tournaments[key])
        for name in sorted(due.rooms):
            if name == LADDER:
                self._ladder_pair(out, now)
                continue
            room = self.rooms.get(name)
            if room is not None:
                self._apply(out, room, room.tick(now))
        return out

    def committed(self, out: HallOutbox, now: float) -> HallOutbox:
        """``out``'s writes are committed and its messages about to be sent: the ratings its rated results made
        (storage put them on the records) go into their ``game_over`` messages and into the ladder's pairing, and
        the players of its ladder games wait on the ladder again. Returns what that produced (pairings)."""
        after = HallOutbox()
        if not out.ended:
            return after
        self._now = now
        back = []
        crashed = set()  # anchors whose process ended mid-game: that game is no game played (restarts stay capped)
        for record in out.ended:
            crashed.update(name for name in record.players if record.reason == house_stopped(name))
            if record.ratings is not None:
                self.seeks.ladder.learn(record.game, record.players, record.ratings)
                self.rated.moved(record.players, [r["change"] for r in record.ratings],
                                 [anchor_level(name, record.game) is not None for name in record.players], now)
            _tell_rating(out, record)
            back += self.seeks.ladder.stored(record.id, now)
        for rung in back:
            if rung.name in self.house.anchors and rung.name not in crashed:
                self.house.anchor_played(rung.name)
            if rung.name not in self.by_name:  # it did not come back before its game ended: off the ladder
                self.seeks.ladder.leave(rung.name, rung.game)
        rungs = self.seeks.ladder.rungs  # a ladder bot that played another game (one resumed after a restart) is free
        if back or any((record.game, name) in rungs for record in out.ended for name in record.players):
            self._ladder_pair(after, now)
        for rung in back:
            session = self.by_name.get(rung.name)
            if session is not None and rung.since is not None:  # not paired at once: it waits
                after.send(session.conn, m.seeking(self.seeks.ladder.seek_json(rung.game),
                                                   ladder=self.seeks.ladder.describe(rung)))
        return after

    def next_deadline(self) -> float | None:
        """The earliest time at which :meth:`tick` may have something to do."""
        return self.timers.next_deadline()

    def shutdown(self, now: float) -> HallOutbox:
        """Tell everybody the server is stopping. Running games are *not* ended: they are stored
        move by move and continue when the server starts again on the same database."""
        out = HallOutbox()
        for conn in list(self.sessions):
            out.error(conn, ErrorCode.SERVER_SHUTDOWN, "the server is shutting down; running games continue when it is "
                      "back (log in again with the same name and secret or resume token)")
        return out

    def listing(self, game: str | None = None) -> list[dict[str, Any]]:
        """Every room's summary, optionally for one game (in a cluster: every node's rooms)."""
        rooms = self.local_listing(game)
        return rooms if self.cluster is None else rooms + self.cluster.listing(game)

    def local_listing(self, game: str | None = None) -> list[dict[str, Any]]:
        """The summary of every room this node owns, optionally for one game."""
        return [r.listing() for r in self.rooms.values() if game is None or r.game.id == game]

    def lobby_changed_elsewhere(self, now: float) -> HallOutbox:
        """Another node's listing changed: the lobby's watchers here see it too (coalesced like local changes)."""
        out = HallOutbox()
        self._now = now
        if self.watchers and self.timers.changed(LOBBY, now):
            self._push_lobby(out)
        return out

    def attach(self, conn: int, name: str, coords: str, address: str, organiser: bool, now: float,
               resume: bool = False) -> HallOutbox:
        """A session that another node of the cluster admitted reaches this node (``conn`` stands for its
        connection there): it takes over any earlier session of the name here and resumes its seats here,
        as a login does, without a welcome (the other node gave it). Attached again with ``resume``, its
        seats' state is sent anew."""
        out = HallOutbox()
        self._now = now
        self.addresses[conn] = address
        previous = self.by_name.get(name)
        if previous is not None and previous.conn == conn and not resume:
            return out
        self._open_session(out, conn, name, coords, organiser, previous, now)
        return out

    def holder(self, name: str, conn: int | None = None) -> Holder:
        """Who holds ``name`` now, as the login rule table sees it (``conn``: a login whose own claim of the
        name does not count)."""
        return self._holder(name, conn)

    def restore(self, restored: Restored, now: float) -> tuple[int, int]:
        """Take back what storage kept: claims, resume tokens of seat holders and entrants, every open room (a
        running game continues when both players are back) and every tournament. Returns (rooms, running
        games). What must be started (house bots) and stored (rooms nobody comes back to) waits in
        ``restarted_house`` and ``restored_writes``."""
        self._now = now
        self.logins.restore(restored.claims)
        self.rated.restore(restored.claimed_from, restored.registered)
        running = sum(self._restore_room(snapshot, restored, now) for snapshot in restored.rooms)
        for snapshot in restored.tournaments:
            self._restore_tournament(snapshot, restored)
        if not self.logins.shared_names:  # the tokens of names nobody holds prove nothing: their rows go
            self.restored_writes += [IdentityForgotten(name) for name in restored.identities
                                     if name not in self.logins.identities]
        entrants = [name for director in self.events.tournaments.values() for name in director.settings.local]
        self.house.count_on_from([*self.seat_holders, *entrants])
        return len(self.rooms), running

    def _restore_room(self, snapshot: dict[str, Any], restored: Restored, now: float) -> bool:
        """Take one room back; True when its game is running."""
        try:
            room = Room.restore(snapshot, restored.running.get(snapshot.get("record") or ""), self.env, now)
        except Exception:  # a room that cannot be rebuilt must not keep the others from starting
            log.exception("could not restore room %s", snapshot.get("name"))
            return False
        if room.tournament is None and room.status != RoomStatus.PLAYING and not any(room.seats):
            # nobody sits in it and no game runs: nobody is coming back to it (its creator may open another)
            self.restored_writes.append(RoomRemoved(room.name))
            return False
        self.registry.add(room)
        if room.creator is None and room.tournament is None:
            self.seeks.opened(room.name)
        for seat, name in enumerate(room.seats):
            if name is None:
                continue
            self.seat_holders.setdefault(name, set()).add(room.name)
            self.logins.take_back(name, restored.identities)
            if name.startswith(HOUSE_PREFIX) and room.status != RoomStatus.FINISHED and room.tournament is None:
                # the bot's process did not outlive the old server's secret: start it again (a tournament's
                # house entrants are started again with their event, in _restore_tournament)
                start = self.house.restored_room(name, room.name, room.game.id,
                                                 room.settings.games - max(0, room.game_no - 1), room.seats[1 - seat])
                if start is not None:
                    self.restarted_house.append(start)
        self._schedule(room)
        return room.status == RoomStatus.PLAYING

    def _restore_tournament(self, snapshot: dict[str, Any], restored: Restored) -> None:
        director = self.events.restore(snapshot, restored.tournament_games.get(snapshot["id"], []))
        if director is None:
            return
        director.rooms_lost(self.rooms)  # a game whose room is gone is played again
        if director.status in GOING_ON:
            for name in director.entrants:  # an entry holds its name after a restart too
                self.logins.take_back(name, restored.identities)
        if director.status in UNDER_WAY:  # an event not started yet holds no house bot
            self.restarted_house += self.house.start_entrants(director.id, director.settings.game,
                                                              director.settings.local)

    def adopt(self, restored: Restored, now: float) -> tuple[HallOutbox, list[str]]:
        """Take over the rooms and tournaments of a cluster node that died, as a restart takes back its own: the
        running games continue from their last stored move (the outage charged to nobody) once their players are
        back. Returns what to carry out, and the names that hold seats in the adopted rooms (their sessions on
        other nodes are attached here again)."""
        self._now = now
        before = set(self.rooms)
        self.restore(restored, now)
        out = HallOutbox(writes=self.restored_writes, house=self.restarted_house)
        self.restored_writes, self.restarted_house = [], []
        out.extend(self.resume_tournaments(now))
        names: set[str] = set()
        for room_name in sorted(set(self.rooms) - before):
            room = self.rooms[room_name]
            for name in room.seats:
                if name is None:
                    continue
                names.add(name)
                session = self.by_name.get(name)
                if session is not None:  # already here: back in its seat at once
                    session.rooms.add(room_name)
                    self._apply(out, room, room.reconnected(name, session.coords, now))
        self._lobby_changed(out)
        return out, sorted(names)

    def resume_tournaments(self, now: float) -> HallOutbox:
        """Open the games that restored tournaments have due (after :meth:`restore`)."""
        out = HallOutbox()
        self._now = now
        for director in self.events.restored():
            self._open_due(out, director, now)
        return out

    # Handlers ---------------------------------------------------------------------------

    def _ping(self, out: HallOutbox, conn: int, msg: Ping, now: float) -> None:
        out.send(conn, m.pong())

    def _list_rooms(self, out: HallOutbox, conn: int, msg: ListRooms, now: float) -> None:
        out.send(conn, m.rooms(self.listing(msg.get("game")), self.seeks.listed(self.by_name)))

    def _watch_lobby(self, out: HallOutbox, conn: int, msg: WatchLobby, now: float) -> None:
        session = self.sessions[conn]
        session.watching_lobby = msg.get("on", True)
        if session.watching_lobby:
            self.watchers.add(conn)
        else:
            self.watchers.discard(conn)
        out.send(conn, m.rooms(self.listing(), self.seeks.listed(self.by_name)))

    def _login(self, out: HallOutbox, conn: int, msg: Login, now: float, looked_up: bool = False) -> None:
        if conn in self.sessions:
            out.error(conn, ErrorCode.ALREADY_LOGGED_IN, f"you are logged in as {self.sessions[conn].name}")
            return
        if conn in self.logins.checking:
            out.error(conn, ErrorCode.ALREADY_LOGGED_IN, "a login on this connection is being checked; wait for its "
                      "answer")
            return
        address = self.addresses.get(conn, "?")
        step = self.logins.start(conn, msg, address, self._holder(msg["name"], conn), now, looked_up)
        self._login_step(out, conn, msg, step, now)

    def _login_step(self, out: HallOutbox, conn: int, msg: dict[str, Any], step: Step, now: float) -> None:
        """Carry out what the login desk decided."""
        if isinstance(step, Refuse):
            extra = {} if step.retry_after is None else {"retry_after": step.retry_after}
            if step.code in ("throttled", "busy"):
                out.refuse(conn, Refusal(f"login_{step.code}"), step.code, step.text, **extra)
            else:
                out.error(conn, step.code, step.text, **extra)
        elif isinstance(step, Check):
            out.checks.append(step.check)
        elif isinstance(step, Lookup):
            out.lookups.append(step.lookup)
        elif isinstance(step, Admit):
            if step.claim is not None:
                address = self.addresses.get(conn, "?")
                out.writes.append(ClaimSaved(msg["name"], step.claim.salt, step.claim.digest, address))
                self.rated.claimed(msg["name"], address)
            self._admit(out, conn, msg, now, step.proven)

    def _holder(self, name: str, conn: int | None = None) -> Holder:
        """Who holds ``name`` now (``conn``: a login whose own claim of the name does not count; in a cluster,
        holders on other nodes count as the last look-up for a login found them)."""
        if name in self.by_name:
            return Holder.SESSION
        if self.logins.known(name):
            if self.seat_holders.get(name):
                return Holder.SEAT
            if self.events.entrant(name):
                return Holder.ENTRY
        if self.logins.claiming.get(name, conn) != conn:
            return Holder.CLAIMING
        if self.cluster is None:
            return Holder.NOBODY
        holder = self.cluster.holder(name)  # a claimed name is never being claimed: its secret is checked
        return Holder.NOBODY if holder is Holder.CLAIMING and name in self.logins.claims else holder

    def _room_taken(self, name: str) -> bool:
        """True when a room of this name (ignoring case) is open here, or on another node of the cluster."""
        return self.registry.taken(name) or (self.cluster is not None and self.cluster.taken(name))

    def _free_name(self) -> str:
        """A generated room name, unique in the cluster too: its numbers come in blocks no other node draws from
        (and should they run out, the name says this node's)."""
        if self.cluster is None:
            return self.registry.free_name()
        while (number := self.cluster.next_number()) is not None:
            name = lake_name(number)
            if not self._room_taken(name):
                return name
        return self.registry.free_name(self.cluster.taken, suffix=f" {self.cluster.node}")

    def _create_room(self, out: HallOutbox, conn: int, msg: CreateRoom, now: float) -> None:
        session = self.sessions[conn]
        address = self.addresses.get(conn, "?")
        if not self._room_quota(out, conn, address, len(self.rooms) >= self.limits.max_rooms):
            return
        mine = self.registry.created(session.name)
        if len(mine) >= self.limits.max_rooms_per_name:
            out.refuse(conn, Refusal.ROOMS_PER_NAME, ErrorCode.TOO_MANY_ROOMS, f"you have {len(mine)} open rooms, the "
                       "limit per name; finish or leave some first")
            return
        name = msg.get("name")
        if name is None:
            name = self._free_name()
        else:
            name = " ".join(name.split())
            if not ROOM_NAME.match(name):
                out.error(conn, ErrorCode.BAD_MESSAGE, f"{name[:40]!r} is not a valid room name: use {ROOM_NAME_HELP}")
                return
            if self._room_taken(name):
                out.error(conn, ErrorCode.ROOM_EXISTS, f"a room called {name} exists already")
                return
        try:
            settings = RoomSettings.parse(
                msg["game"], msg.get("options"), msg.get("time_control"), msg.get("illegal_move"),
                msg.get("grace"), msg.get("games"), self.room_defaults, msg.get("rated"))
        except OptionError as exc:
            out.error(conn, ErrorCode.BAD_OPTION, str(exc))
            return
        opponent = msg.get("opponent")
        if opponent is not None and self._house_refused(out, conn, opponent, settings, session.name, address):
            return
        start = None if opponent is None else self.house.room_bot(
            opponent, settings.game.id, name, settings.games, session.name, address, self._held,
            anchor_name(opponent, settings.game.id) if settings.rated else None)
        room = Room(name, settings, self.env, session.name, address=address,
                    reserved=(session.name, start.name) if start else (None, None),
                    idle=(self.limits.house_idle, (session.name,)) if start else None)
        self.registry.add(room)
        if start is not None:
            out.house.append(start)
        out.writes.append(_room_saved(room))
        out.send(conn, m.room(room.listing()))
        log.info("room %s opened by %s (%s, %d game%s%s)", name, session.name, settings.game.id, settings.games,
                 "" if settings.games == 1 else "s", f", against house bot {start.name}" if start else "")
        if start is not None:
            # the creator sits down at once; the other seat waits for the bot process to start
            self._apply(out, room, room.join(session.name, session.coords, now, "player", 0))
            self._apply(out, room, room.hold(start.name, 1, now, max(HOUSE_ARRIVAL, settings.grace)))
            self.seat_holders.setdefault(start.name, set()).add(room.name)
        self._lobby_changed(out)

    def _house_refused(self, out: HallOutbox, conn: int, level: str, settings: RoomSettings, name: str,
                       address: str) -> bool:
        """Refuse (True) a room against a house bot of ``level`` that ``name`` cannot have now. A rated one is
        played by the level's ladder anchor (house bots are rated only as anchors), which must be free."""
        refusal = self.house.refusal(level, settings.time_control.timed, settings.games, name, address,
                                     self.limits.max_house_games_per_name, self.limits.max_house_games_per_address)
        if refusal is None and settings.rated:
            refusal = self.house.anchor_refusal(level, settings.game.id, self._held)
        if refusal is None:
            return False
        if refusal.reason is not None:
            out.refuse(conn, refusal.reason, refusal.code, refusal.text)
        else:
            out.error(conn, refusal.code, refusal.text)
        return True

    def _held(self, name: str) -> bool:
        """True when anything holds ``name``: a session, a seat, a tournament entry."""
        return name in self.by_name or bool(self.seat_holders.get(name)) or self.events.entrant(name) is not None

    def _room_quota(self, out: HallOutbox, conn: int, address: str, server_full: bool) -> bool:
        """True when ``address`` may open one more room (``server_full``: the server-wide limit is reached)."""
        if server_full:
            out.refuse(conn, Refusal.ROOMS_SERVER, ErrorCode.TOO_MANY_ROOMS, f"the server holds {len(self.rooms)} "
                       "rooms, its limit; try again when some games end")
            return False
        limit = self.limits.max_rooms_per_address
        charged = self.registry.from_address(address)
        if limit and len(charged) >= limit:
            out.refuse(conn, Refusal.ROOMS_PER_ADDRESS, ErrorCode.TOO_MANY_ROOMS, f"{len(charged)} open rooms were "
                       f"created from your address, its limit ({limit}); finish or leave some first")
            return False
        return True

    def house_exited(self, name: str, now: float) -> HallOutbox:
        """A house bot process ended (its games done, or it failed): its slot is free again, and a seat it still
        holds in a room is given up at once (a running game is lost by the bot, the room plays no more games).
        A tournament's house entrant whose event goes on is started again (a few times, not in a loop)."""
        out = HallOutbox()
        self._now = now
        self.house.exited(name)
        director = self.events.entrant(name)
        if director is not None and director.status in UNDER_WAY and name in director.settings.local:
            start = self.house.restart(name, director.id, director.settings.game, director.settings.local[name])
            if start is not None:
                out.house.append(start)
            return out
        for room_name in sorted(self.seat_holders.get(name, set())):
            room = self.rooms.get(room_name)
            if room is not None and room.tournament is None:
                self._apply(out, room, room.withdraw(name, now, house_stopped(name)))
        if name in self.house.anchors:  # the ladder needs its anchors: started again (a few times, not in a loop)
            out.house.extend(start for start in [self.house.restart_anchor(name)] if start is not None)
        return out

    def _join(self, out: HallOutbox, conn: int, msg: Join, now: float) -> None:
        session = self.sessions[conn]
        room = self._room(out, session, msg)
        if room is None:
            return
        wanted = msg.get("game")
        if wanted is not None and wanted != room.game.id:
            out.error(conn, ErrorCode.WRONG_GAME, f"room {room.name} plays {room.game.id}, not {wanted[:40]}",
                      room=room.name)
            return
        if room.name not in session.rooms and len(session.rooms) >= self.limits.max_rooms_in_one:
            out.refuse(conn, Refusal.ROOMS_PER_CONNECTION, ErrorCode.TOO_MANY_ROOMS, f"you are in "
                       f"{len(session.rooms)} rooms already; leave one first")
            return
        self._apply(out, room, room.join(session.name, session.coords, now, msg.get("role", "player"),
                                         msg.get("seat")))

    def _seek(self, out: HallOutbox, conn: int, msg: Seek, now: float) -> None:
        session = self.sessions[conn]
        refusal = self.events.seek_refusal(session.name)
        if refusal is not None:
            out.error(conn, ErrorCode.IN_TOURNAMENT, refusal)
            return
        if msg.get("ladder"):
            self._ladder_seek(out, conn, msg, now)
            return
        try:
            settings = RoomSettings.parse(msg["game"], msg.get("options"), msg.get("time_control"), None, None,
                                          msg.get("games"), self.room_defaults, msg.get("rated", True))
        except OptionError as exc:
            out.error(conn, ErrorCode.BAD_OPTION, str(exc))
            return
        if len(self.rooms) >= self.limits.seek_rooms:
            out.refuse(conn, Refusal.ROOMS_SERVER, ErrorCode.TOO_MANY_ROOMS, f"the server holds {len(self.rooms)} "
                       "rooms, its limit; try again when some games end")
            return
        playing = sum(1 for name in self.seat_holders.get(session.name, set()) & self.seeks.rooms
                      if self.rooms[name].status != RoomStatus.FINISHED)  # a finished room left unattended is free
        if playing >= self.limits.max_seek_games_per_name:
            out.refuse(conn, Refusal.SEEKS_PER_NAME, ErrorCode.TOO_MANY_ROOMS, f"you play {playing} game"
                       f"{'' if playing == 1 else 's'} that seeks opened, the limit per name; finish one first")
            return
        found = self.seeks.seek(session.name, settings, now, self.by_name)
        if isinstance(found, Pairing):
            self._pair(out, found, now)
            return
        out.send(conn, m.seeking(found.to_json(), self.seeks.describe_others(found, self.by_name)))
        self._lobby_changed(out)  # the lobby lists who seeks
        for other in self.seeks.others(found, self.by_name):  # they learn that someone waits on other settings too
            out.send(self.by_name[other.name].conn, m.seeking(other.to_json(),
                                                              self.seeks.describe_others(other, self.by_name)))

    def _ladder_seek(self, out: HallOutbox, conn: int, msg: Seek, now: float) -> None:
        """A seek with ``ladder: true``: a place on the ladder of its game, paired by rating (docs/RATINGS.md)."""
        name = self.sessions[conn].name
        problem = self.seeks.ladder.refusal(name, msg, name in self.logins.claims)
        if problem is not None:
            out.error(conn, ErrorCode.BAD_OPTION, problem)
            return
        address = self.addresses.get(conn, "?")
        problem = self.seeks.ladder.address_refusal(name, address, self.limits.max_ladder_names_per_address)
        if problem is not None:
            out.refuse(conn, Refusal.LADDER_PER_ADDRESS, ErrorCode.BUSY, problem)
            return
        rung = self.seeks.ladder_seek(name, msg["game"], now, address)
        waiting = rung.since is not None  # not playing a ladder game now (a bot may seek again after a reconnect)
        self._ladder_pair(out, now)
        if not (waiting and rung.since is None):  # not paired at once: the reply says it waits (joined, else)
            out.send(conn, m.seeking(self.seeks.ladder.seek_json(rung.game), ladder=self.seeks.ladder.describe(rung)))

    def _cancel_seek(self, out: HallOutbox, conn: int, msg: CancelSeek, now: float) -> None:
        game = msg["game"]
        if game not in GAMES:
            out.error(conn, ErrorCode.BAD_OPTION, f"unknown game {game[:40]!r}; games: {', '.join(GAMES)}")
            return
        self.seeks.drop(self.sessions[conn].name, game)
        out.send(conn, m.seek_cancelled(game))
        self._lobby_changed(out)

    def _list_tournaments(self, out: HallOutbox, conn: int, msg: ListTournaments, now: float) -> None:
        elsewhere = [] if self.cluster is None else self.cluster.tournaments()
        out.send(conn, m.tournaments(self.events.summaries() + elsewhere))

    def _watch_tournament(self, out: HallOutbox, conn: int, msg: WatchTournament, now: float) -> None:
        director = self.events.find(out, conn, msg["tournament"])
        if director is not None:
            self.events.watch(conn, director, msg.get("on", True))
            out.send(conn, m.tournament(self.tournament_view(director, now)))

    def _tournament_create(self, out: HallOutbox, conn: int, msg: TournamentCreate, now: float) -> None:
        if self._organiser(out, conn):
            director = self.events.create(out, conn, msg, self.house, self._held, self.env.wall_clock())
            if director is not None:
                self._withdraw_seeks(out, director)
                self._tournament_changed(out, director, now)
                out.send(conn, m.tournament(self.tournament_view(director, now)))

    def _withdraw_seeks(self, out: HallOutbox, director: Director) -> None:
        """The entrants of a new event are not paired in the lobby any more: the seeks they left waiting are withdrawn
        (their ladder places stay), and each connected one is told why."""
        for name in director.entrants:
            games = sorted({seek.settings.game.id for waiting in self.seeks.seeks.values() for seek in waiting
                            if seek.name == name})
            for game in games:
                self.seeks.drop(name, game, keep_ladder=True)
            refusal = self.events.seek_refusal(name)
            session = self.by_name.get(name)
            if games and session is not None and refusal is not None:
                out.error(session.conn, ErrorCode.IN_TOURNAMENT, f"your seek for {', '.join(games)} is withdrawn: "
                          f"{refusal}")

    def _tournament_control(self, out: HallOutbox, conn: int, msg: TournamentControl, now: float) -> None:
        if not self._organiser(out, conn):
            return
        director = self.events.control(out, conn, msg, self.house)
        if director is None:
            return
        if director.status == TournamentStatus.CANCELLED:
            for room_name in director.close_rooms():
                room = self.rooms.get(room_name)
                if room is not None:
                    self._apply(out, room, room.dissolve(now, "the tournament was cancelled"))
        self._tournament_changed(out, director, now)
        out.send(conn, m.tournament(self.tournament_view(director, now)))

    def _room_request(self, out: HallOutbox, conn: int, msg: RoomRequest, now: float) -> None:
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
        if previous is not None and not proven:
            out.error(conn, ErrorCode.NAME_IN_USE, f"{name} is connected already; claim a name with a secret to be "
                      "able to take over your own session")
            return
        token, digest = self.logins.issue(name)
        out.writes.append(IdentitySaved(name, digest))
        log.info("login: %s from %s%s", name, self.addresses.get(conn, "?"),
                 " (took over its earlier connection)" if previous is not None else "")
        elsewhere = [] if self.cluster is None else self.cluster.seats.get(name, [])
        welcome = m.welcome(name, coords, f"plyhall {protocol.__version__}", name in self.logins.claims, sorted(GAMES),
                            [], token, "organiser" in msg, list(HOUSE_LEVELS) if self.house.for_players else None)
        out.send(conn, welcome)
        session = self._open_session(out, conn, name, coords, "organiser" in msg, previous, now)
        welcome["rooms"] = sorted(session.rooms | set(elsewhere))

    def _open_session(self, out: HallOutbox, conn: int, name: str, coords: str, organiser: bool,
                      previous: Session | None, now: float) -> Session:
        """Open ``conn``'s session of ``name`` (taking over ``previous``, whose connection goes) and resume the
        seats the name holds."""
        if previous is not None and previous.conn != conn:
            # the rightful owner logs in again (a restarted bot): the old connection goes
            out.close.append((previous.conn, "logged in from another connection"))
            self.sessions.pop(previous.conn, None)
            self.watchers.discard(previous.conn)
        session = Session(conn, name, coords, organiser=organiser)
        if name in self.logins.claims:
            self.rated.seen(name, self.addresses.get(conn, "?"))
        if previous is not None:
            session.rooms = set(previous.rooms)
            session.watching_lobby = previous.watching_lobby
            if session.watching_lobby:
                self.watchers.add(conn)
        session.rooms |= self.seat_holders.get(name, set()) & set(self.rooms)
        self.sessions[conn] = session
        self.by_name[name] = session
        for room_name in sorted(session.rooms):
            room = self.rooms[room_name]
            if room.seat_of(name) is not None:
                self._apply(out, room, room.reconnected(name, coords, now))
            else:
                session.rooms.discard(room_name)
        return session

    # Tournaments ------------------------------------------------------------------------

    def _organiser(self, out: HallOutbox, conn: int) -> bool:
        if self.sessions[conn].organiser:
            return True
        out.error(conn, ErrorCode.NOT_ORGANISER, "only the organiser runs tournaments: log in with the organiser "
                  "secret (plyhall tournament --secret, or $PLYHALL_ORGANISER_SECRET)")
        return False

    def tournament_view(self, director: Director, now: float) -> dict[str, Any]:
        """A tournament's full state, with its running games as the lobby lists them."""
        rooms = {number: self.rooms[name].listing() for number, name in director.open.items() if name in self.rooms}
        return director.to_json(now, rooms)

    def _tournament_changed(self, out: HallOutbox, director: Director, now: float) -> None:
        """Store the event, open what is due, and push it to its watchers (coalesced)."""
        self._open_due(out, director, now)
        self.held_changed.update(director.entrants)
        out.writes.append(TournamentSaved(director.snapshot()))
        if not self.events.watching(director.id):
            return
        if self.timers.changed(director.id, now) or director.status in OVER:
            self._push_tournament(out, director)

    def _push_tournament(self, out: HallOutbox, director: Director) -> None:
        self.timers.pushed(director.id, self._now)
        msg = m.tournament(self.tournament_view(director, self._now))
        for conn in self.events.watching(director.id):
            out.send(conn, msg)

    def _open_due(self, out: HallOutbox, director: Director, now: float) -> None:
        """Open a room for every game the director has due, and seat its entrants (or keep their seats)."""
        for game in director.due():
            name = f"{director.settings.name} {game.round}.{game.board}"
            if director.settings.spec.games_per_pairing > 1:
                name += f".{game.game}"
            if self._room_taken(name):
                name = f"{director.settings.name} #{game.number}"
            room_cfg = director.settings.room
            settings = RoomSettings.parse(director.settings.game, room_cfg["options"], room_cfg["time_control"],
                                          room_cfg["illegal_move"], room_cfg["grace"], 1, self.room_defaults)
            room = Room(name, settings, self.env, None, reserved=(game.white, game.black), tournament=director.id,
                        tournament_game=game.number, opening=tuple(director.opening(game)))
            self.registry.add(room)
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
        director = self.events.tournaments.get(record.tournament or "")
        if director is None or record.tournament_game is None:
            return
        duration = None if record.ended_at is None else record.ended_at - record.started_at
        if director.ended(record.tournament_game, record.winner, record.status, record.id, duration, record.reason):
            log.info("tournament %s finished%s", director.settings.name,
                     f" ({director.stopped_early})" if director.stopped_early else "")
        self._tournament_changed(out, director, now)

    # Seeks ------------------------------------------------------------------------------

    def _pair(self, out: HallOutbox, pairing: Pairing, now: float) -> None:
        """Open a room for two seeks that pair and seat both."""
        room = Room(self._free_name(), pairing.settings, self.env)
        self.registry.add(room)
        self.seeks.opened(room.name, pairing.ladder)
        out.writes.append(_room_saved(room))
        log.info("paired %s and %s for %s in %s%s", pairing.first, pairing.second, pairing.settings.game.id,
                 room.name, " (ladder)" if pairing.ladder else "")
        for seat, name in enumerate((pairing.first, pairing.second)):
            session = self.by_name[name]
            self._apply(out, room, room.join(name, session.coords, now, "player", seat))

    def _ladder_pair(self, out: HallOutbox, now: float) -> None:
        """Open a room for every pair the ladder makes now, and wake the hall when a widening window makes the next."""
        if len(self.rooms) >= self.limits.seek_rooms:
            return  # the server is full: the ladder pairs again when a game ends or a seek comes
        for game in self.seeks.ladder.games():  # a bounded number of pairs each (the rest on the next turn)
            for pairing in self.seeks.ladder_pairings(game, now, self._ready):
                self._pair(out, pairing, now)
        self.timers.schedule(LADDER, self.seeks.ladder.next_time(now, self._ready))

    def _ready(self, name: str) -> bool:
        """True when ``name`` may be paired on the ladder now: connected, holding no seat in a room that plays on."""
        return name in self.by_name and not self._busy(name)

    def _busy(self, name: str) -> bool:
        """True when ``name`` holds a seat in a room whose games are not all played."""
        return any(self.rooms[room].status != RoomStatus.FINISHED for room in self.seat_holders.get(name, ())
                   if room in self.rooms)

    def _ladder_over(self, out: HallOutbox, room: Room, records: list[GameRecord]) -> None:
        """A ladder room's game ended: its players leave the room at once (the room goes), and wait on the ladder
        again once the result, and the ratings it makes, are stored (:meth:`committed`)."""
        for record in records:
            self.seeks.ladder.ended(record.id, record.game, record.players)
        # an anchor leaves first: a house bot left alone in a room between games would be stopped (see _apply)
        seated = [name for name in room.seats if name is not None]
        for name in sorted(seated, key=lambda name: name not in self.house.anchors):
            self._apply(out, room, room.leave(name, self._now))

    # Rooms ------------------------------------------------------------------------------

    def _remove_room(self, out: HallOutbox, room: Room) -> None:
        self.registry.remove(room)
        self.seeks.closed(room.name)
        self.house.room_over(room.name)  # the game is over; the bot's slot is free once its process ends
        self.timers.forget(room.name)
        out.writes.append(RoomRemoved(room.name))
        log.info("room %s closed", room.name)
        self._lobby_changed(out)
        director = None if room.tournament is None else self.events.room_closed(room.tournament, room.name)
        if director is not None:  # its game has no result: it is opened again (never "playing" with no room)
            self._tournament_changed(out, director, self._now)

    def _room(self, out: HallOutbox, session: Session, msg: RoomRequest | Join) -> Room | None:
        room = self.registry.find(msg["room"])
        if room is None:
            name = " ".join(msg["room"].split())[:MAX_ROOM_NAME]
            out.error(session.conn, ErrorCode.NO_SUCH_ROOM, f"there is no room called {name!r}", room=name)
        return room

    def _apply(self, out: HallOutbox, room: Room, result: Outbox) -> None:
        """Route a room's outbox to connections, track membership, schedule its timer and clean up."""
        for record in result.ended:  # the GameEnded writes hold these very records: rated before they are stored
            record.unrated = self._unrated(room, record)
            record.rated = record.unrated is None
        out.writes.extend(result.writes)
        out.ended.extend(result.ended)
        for name in result.entered:
            self._entered(room, name)
        for name, msg in result.messages:
            session = self.by_name.get(name)
            if session is not None:
                out.send(session.conn, msg)
        for name in result.vacated:
            self._vacated(out, room, name)
        if result.ended and self._games_ended(out, room, result.ended):  # after the room's own messages
            return
        ended = room.ever_entered or room.status == RoomStatus.FINISHED
        if ended and room.is_empty() and room.status != RoomStatus.PLAYING:
            self._remove_room(out, room)
            return
        if room.tournament is None and room.status != RoomStatus.PLAYING and room.members and \
                all(n.startswith(HOUSE_PREFIX) for n in room.members):
            # nobody but house bots is left in a room between games: they are not needed any more (a ladder
            # anchor is: it plays on, and it is alone for a moment in every ladder room it is seated in first)
            out.house_stop.extend(n for n in room.members if n in self.house.running and n not in self.house.anchors)
        self._schedule(room)
        if result.listing_changed:
            self.registry.listing_changed(room.name)
            self._lobby_changed(out)

    def _games_ended(self, out: HallOutbox, room: Room, records: list[GameRecord]) -> bool:
        """Tell tournaments and the ladder that games of ``room`` ended (after the room's own messages: game_over
        before the next game's start); True when the room is gone with them (a ladder room)."""
        for record in records:
            if record.tournament is not None:
                self._tournament_ended(out, record, self._now)
        if room.name in self.seeks.ladder_rooms:
            self._ladder_over(out, room, records)
        return room.name not in self.rooms

    def _unrated(self, room: Room, record: GameRecord) -> str | None:
        """Why ``record``, a game that just ended in ``room``, is not a rated result, or None when it is: the room's
        games are rated, it ended by play or on time after both players really played (``protocol.ratings``), both
        players may be rated (claimed names, or ladder anchors), and they are different people (``self.rated``)."""
        names = record.players
        if not room.settings.rated:
            return UNRATED_ROOM
        if record.tournament is not None:
            return "a tournament game (tournaments rate their own entrants)"
        if record.status != GameStatus.FINISHED or record.reason in (house_stopped(name) for name in names):
            return f"{record.status}: {record.reason}"  # a house bot's process ended mid-game: nobody's result
        if names[0] == names[1]:
            return "one name on both seats"
        for name in names:
            if not rateable_name(name, record.game, name in self.logins.claims):
                return f"{name} is not a claimed name" if not name.startswith(HOUSE_PREFIX) else \
                    f"{name} is a house bot but not a ladder anchor"
        short = too_short(record.game, len(record.moves))
        if short is not None:
            return short
        anchors = [anchor_level(name, record.game) is not None for name in names]
        known = [self.seeks.ladder.rating(record.game, name) for name in names]  # the stored ratings, as the ladder's
        reason = self.rated.reason(names, anchors, self._now, known)
        if reason is None:
            record.rating_weight = self.rated.weight(names, anchors, self._now, known)
            self.rated.rated(names, anchors, self._now)
        return reason

    def _entered(self, room: Room, name: str) -> None:
        """``name`` became a member of ``room``."""
        session = self.by_name.get(name)
        if session is not None:
            session.rooms.add(room.name)
        if room.seat_of(name) is not None:
            self.seat_holders.setdefault(name, set()).add(room.name)
            self.held_changed.add(name)

    def _vacated(self, out: HallOutbox, room: Room, name: str) -> None:
        """``name`` is no longer a member of ``room`` (nor holds its seat)."""
        holders = self.seat_holders.get(name)
        self.held_changed.add(name)
        if holders is not None:
            holders.discard(room.name)
            if not holders:
                del self.seat_holders[name]
                if self._holder(name) is Holder.NOBODY and self.logins.forget(name) and self.cluster is None:
                    out.writes.append(IdentityForgotten(name))  # its player is gone for good: the token proves nothing
        session = self.by_name.get(name)
        if session is not None and name not in room.coords:
            session.rooms.discard(room.name)

    def _schedule(self, room: Room) -> None:
        """Wake ``room`` at its next deadline."""
        self.timers.schedule(room.name, room.next_deadline())

    def _lobby_changed(self, out: HallOutbox) -> None:
        """Push the listing to lobby watchers (at most once every push interval)."""
        self.listing_version += 1
        if self.watchers and self.timers.changed(LOBBY, self._now):
            self._push_lobby(out)

    def _push_lobby(self, out: HallOutbox) -> None:
        self.timers.pushed(LOBBY, self._now)
        listing = m.rooms(self.listing(), self.seeks.listed(self.by_name))
        for conn in sorted(self.watchers):
            out.send(conn, listing)


def _tell_rating(out: HallOutbox, record: GameRecord) -> None:
    """Put in ``record``'s ``game_over`` messages the ratings it made, or why a rated room's game was not rated."""
    for _, msg in out.messages:
        if msg["type"] == "game_over" and msg["record"] == record.id:
            if record.ratings is not None:
                msg["ratings"] = record.ratings
            elif record.unrated not in (None, UNRATED_ROOM):
                msg["unrated"] = record.unrated


def _room_saved(room: Room) -> Write:
    return RoomSaved(room.snapshot())
