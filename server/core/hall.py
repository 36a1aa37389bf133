"""The hall: the dispatch of every validated request, and of every event the I/O edge feeds in, to a desk or a room.

Like :class:`server.core.room.Room`, ``Hall`` is a plain object: the WebSocket layer feeds it
connections, messages and the time, and sends what it returns (a :class:`HallOutbox`).
Messages here are addressed by connection id. One rule tags replies: the first message a
request produces for its sender that is one of the request's reply types
(``CLIENT_MESSAGES[type].replies``) or an ``error`` carries the request's ``id``.

Here is the dispatch: a handler a request type (``HANDLERS``; the requests about one room go to the room method in
``ROOM_REQUESTS``), and the entry points the I/O edge calls (a connection, a secret checked, the time, a commit, a
house bot's end). What the hall holds, how a room's outbox reaches connections, seats and timers, and what a
restart takes back, is its floor (:class:`~server.core.floor.Floor`, which ``Hall`` extends). The decisions live
in desks that never call back into the hall: logins (``logins``), seeks (``seeks``), the rating ladder
(``ladder_desk``), rated games (``rated_games``), tournaments (``tournaments``), house bots (``house``), timers
(``timers``) and the room registry (``rooms``).

This module is long because it is the one place that dispatches: a handler for each of the protocol's request
types, each checking its request's quotas before a desk or a room acts, beside the entry points of the I/O edge.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from typing import Any, Final

import protocol
from protocol import messages as m
from protocol.games import GAMES, OptionError
from protocol.messages import CLIENT_MESSAGES, ErrorCode, RoomStatus
from protocol.ratings import anchor_name
from protocol.requests import (
    CancelSeek,
    ClientMessage,
    CreateRoom,
    Join,
    ListRooms,
    ListTournaments,
    Move,
    Ping,
    RoomRequest,
    Seek,
    TournamentControl,
    TournamentCreate,
    WatchLobby,
    WatchTournament,
)
from protocol.wording import name_refused

from ..storage.records import ClaimSaved, IdentityForgotten, IdentitySaved
from ..tournament.director import Director, TournamentStatus
from .floor import Floor, Session, room_saved
from .house import HOUSE_ARRIVAL, HOUSE_LEVELS
from .identity import Claim, ClaimLookup, Holder, SecretCheck
from .ladder import LadderConfig
from .limits import Limits
from .logins import Step
from .outbox import HallOutbox, Refusal, tag_reply
from .rated_games import house_stopped
from .room import Outbox, Room, RoomSettings
from .rooms import MAX_ROOM_NAME, normalised
from .seeks import Pairing, settings_key
from .timers import LADDER, LOBBY
from .tournaments import UNDER_WAY

__all__ = ["HANDLERS", "ROOM_REQUESTS", "Hall", "HallOutbox", "LadderConfig", "Limits"]

log = logging.getLogger("plyhall.hall")

ROOM_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 '_.\-]{0,39}$")
ROOM_NAME_HELP = "1 to 40 letters (a-z, A-Z: no accents), digits, spaces and ' _ . - (starting with a letter or digit)"
REPLIES: Final = {kind: frozenset(schema.replies) | {"error"} for kind, schema in CLIENT_MESSAGES.items()}

Handler = Callable[["Hall", HallOutbox, int, Any, float], None]
"""A request's handler: it gets the request (of its ``protocol.requests`` shape) and puts the answers in the outbox."""
RoomMethod = Callable[[Room, str, Any, float], Outbox]

# Requests about one room: the room method that answers each.
ROOM_REQUESTS: dict[str, RoomMethod] = {
    "leave": lambda room, name, msg, now: room.leave(name, now),
    "move": lambda room, name, msg, now: room.move(name, msg["move"], now, msg.get("game_no")),
    "legal_moves": lambda room, name, msg, now: room.legal_moves(name),
    "state": lambda room, name, msg, now: room.send_state(name, now),
    "resign": lambda room, name, msg, now: room.resign(name, now, msg.get("game_no")),
    "offer_draw": lambda room, name, msg, now: room.offer_draw(name, now, msg.get("game_no")),
    "chat": lambda room, name, msg, now: room.chat(name, msg["text"]),
}


class Hall(Floor):
    """All sessions, seeks and rooms of one server, and the dispatch of what reaches them (constructed as its
    :class:`~server.core.floor.Floor`)."""

    # Events from the I/O edge -----------------------------------------------------------

    def connect(self, conn: int, address: str = "?") -> None:
        """A connection opened from ``address`` (a hall fed without it treats every connection as open)."""
        self.addresses[conn] = address

    def handle(self, conn: int, msg: ClientMessage, now: float) -> HallOutbox:
        """Dispatch one validated client message from connection ``conn``."""
        kind = msg["type"]
        out = HallOutbox()
        self._now = now
        self.addresses.setdefault(conn, "?")
        if conn not in self.sessions and kind not in ("login", "ping"):
            out.error(conn, ErrorCode.NOT_LOGGED_IN, 'log in first: send {"type": "login", "name": ...}')
        elif kind == "move":  # most requests: straight to the room, without the handler and room-method tables
            self._move_request(out, conn, msg, now)  # type: ignore[arg-type]
        else:
            HANDLERS[kind](self, out, conn, msg, now)
        msg_id = msg.get("id")
        if msg_id is not None:  # most requests carry none: no call
            tag_reply(out, conn, msg_id, REPLIES[kind])
        return out

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

    def claim_looked_up(self, lookup: ClaimLookup, found: tuple[str, str] | None, now: float,
                        registered: bool = False) -> HallOutbox:
        """The answer of a :class:`ClaimLookup`: the name's claim in the shared database, if any (``registered``: the
        organiser registered it, with ``plyhall names add``); the login then goes on as if the claim had been known."""
        out = HallOutbox()
        self._now = now
        self.logins.looked_up(lookup.conn)
        if lookup.conn not in self.addresses:
            return out
        name = lookup.login["name"]
        if found is not None:
            self.logins.learn_claim(name, Claim(*found))
            if registered:
                self.rated.registered.add(name)
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
        crashed = self.rated_games.learned(out, now)
        back, pair = self.ladder.stored(out.ended, crashed, now, self.by_name)
        if pair:
            self._ladder_pair(after, now)
        for rung in back:
            session = self.by_name.get(rung.name)
            if session is not None and rung.since is not None:  # not paired at once: it waits
                self.ladder.tell_waiting(after, session.conn, rung)
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

    # Handlers ---------------------------------------------------------------------------

    def _ping(self, out: HallOutbox, conn: int, msg: Ping, now: float) -> None:
        out.send(conn, m.pong())

    def _list_rooms(self, out: HallOutbox, conn: int, msg: ListRooms, now: float) -> None:
        game = msg.get("game")
        if game is None or _known_game(out, conn, game):  # a misspelt game is said, not answered with no rooms
            out.send(conn, m.rooms(self.listing(game), self.seeks.listed(self.by_name)))

    def _watch_lobby(self, out: HallOutbox, conn: int, msg: WatchLobby, now: float) -> None:
        session = self.sessions[conn]
        session.watching_lobby = msg.get("on", True)
        if session.watching_lobby:
            self.watchers.add(conn)
        else:
            self.watchers.discard(conn)
        out.send(conn, m.rooms(self.listing(), self.seeks.listed(self.by_name)))

    def _login(self, out: HallOutbox, conn: int, msg: Mapping[str, Any], now: float, looked_up: bool = False) -> None:
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

    def _login_step(self, out: HallOutbox, conn: int, msg: Mapping[str, Any], step: Step, now: float) -> None:
        """Carry out what the login desk decided: an admission opens the session (a new claim is stored)."""
        admit = self.logins.answer(out, conn, step)
        if admit is None:
            return
        if admit.claim is not None:
            address = self.addresses.get(conn, "?")
            out.writes.append(ClaimSaved(msg["name"], admit.claim.salt, admit.claim.digest, address))
            self.rated.claimed(msg["name"], address)
        self._admit(out, conn, msg, now, admit.proven)

    def _admit(self, out: HallOutbox, conn: int, msg: Mapping[str, Any], now: float, proven: bool) -> None:
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
        seated = {r for r in session.rooms if self.rooms[r].seat_of(name) is not None}  # not those it watches on
        welcome["rooms"] = sorted(seated | set(elsewhere))

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
            name = normalised(name)
            if not ROOM_NAME.match(name):
                out.error(conn, ErrorCode.BAD_MESSAGE, name_refused(name, "room name", 40, ROOM_NAME_HELP))
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
        out.writes.append(room_saved(room))
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
                                          msg.get("games"), {**self.room_defaults, "rated": True}, msg.get("rated"))
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
        waiting = self.seeks.again(session.name, settings_key(settings))
        found = self.seeks.seek(session.name, settings, now, self.by_name)
        if isinstance(found, Pairing):
            self._pair(out, found, now)
            return
        out.send(conn, m.seeking(found.to_json(), self.seeks.describe_others(found, self.by_name)))
        if found is waiting:  # sent again: nothing changed for the lobby or the others (a loop of it held the server)
            return
        self._lobby_changed(out)  # the lobby lists who seeks
        for other in self.seeks.shown_to(found, self.by_name):  # they learn that someone waits on other settings too
            out.send(self.by_name[other.name].conn, m.seeking(other.to_json(),
                                                              self.seeks.describe_others(other, self.by_name)))

    def _ladder_seek(self, out: HallOutbox, conn: int, msg: Seek, now: float) -> None:
        """A seek with ``ladder: true``: a place on the ladder of its game, paired by rating (docs/RATINGS.md)."""
        name = self.sessions[conn].name
        rung = self.ladder.seek(out, conn, name, msg, name in self.logins.claims, self.addresses.get(conn, "?"),
                                self.limits.max_ladder_names_per_address, now)
        if rung is None:
            return
        waiting = rung.since is not None  # not playing a ladder game now (a bot may seek again after a reconnect)
        self._ladder_pair(out, now)
        if not (waiting and rung.since is None):  # not paired at once: the reply says it waits (joined, else)
            self.ladder.tell_waiting(out, conn, rung)

    def _cancel_seek(self, out: HallOutbox, conn: int, msg: CancelSeek, now: float) -> None:
        game = msg["game"]
        if not _known_game(out, conn, game):
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

    def _organiser(self, out: HallOutbox, conn: int) -> bool:
        if self.sessions[conn].organiser:
            return True
        out.error(conn, ErrorCode.NOT_ORGANISER, "only the organiser runs tournaments: log in with the organiser "
                  "secret (plyhall tournament --secret, or $PLYHALL_ORGANISER_SECRET)")
        return False

    def _room_request(self, out: HallOutbox, conn: int, msg: RoomRequest, now: float) -> None:
        session = self.sessions[conn]
        room = self._room(out, session, msg)
        if room is not None:
            self._apply(out, room, ROOM_REQUESTS[msg["type"]](room, session.name, msg, now))

    def _move_request(self, out: HallOutbox, conn: int, msg: Move, now: float) -> None:
        """:meth:`_room_request` for a move, in fewer calls; a room not found by its name as sent goes there."""
        room = self.registry.find(msg["room"])
        if room is None:
            self._room_request(out, conn, msg, now)  # which refuses it, as for any room request
        else:
            self._apply(out, room, room.move(self.sessions[conn].name, msg["move"], now, msg.get("game_no")))

    def _room(self, out: HallOutbox, session: Session, msg: RoomRequest | Join) -> Room | None:
        room = self.registry.find(msg["room"])
        if room is None:
            name = normalised(msg["room"])[:MAX_ROOM_NAME]
            out.error(session.conn, ErrorCode.NO_SUCH_ROOM, f"there is no room called {name!r}", room=name)
        return room


def _known_game(out: HallOutbox, conn: int, game: str) -> bool:
    """Whether ``game`` is a game's id; if not, ``conn`` is told which are."""
    if game in GAMES:
        return True
    out.error(conn, ErrorCode.BAD_OPTION, f"unknown game {game[:40]!r}; games: {', '.join(GAMES)}")
    return False


HANDLERS: Final[dict[str, Handler]] = {
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

missing = set(CLIENT_MESSAGES) - set(HANDLERS)
assert not missing, f"client messages without a handler: {missing}"
