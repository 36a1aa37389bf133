"""The hall's floor: who is here, which rooms are open, and how what a room says reaches them.

:class:`Floor` holds the state every part of the hall shares (sessions by connection and by name, the open rooms,
who holds which seat, the lobby's watchers, the timers) and the desks that decide (logins, seeks and the ladder,
rated games, tournaments, house bots), and it routes: a room's outbox to connections, seats and timers
(:meth:`Floor._apply`), the games that end to tournaments and the ladder, the rooms that pairings and tournaments
open, the lobby's pushes. It also takes back what storage kept, after a restart or from a cluster node that died
(:meth:`Floor.restore`, :meth:`Floor.adopt`). :class:`~server.core.hall.Hall` is the floor with its dispatch: a
handler a request type, and the entry points the I/O edge calls. Like a room, the floor is a plain object: it never
touches a socket or a clock.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from protocol import messages as m
from protocol.messages import RoomStatus

from ..storage.records import GameRecord, IdentityForgotten, Restored, RoomRemoved, RoomSaved, TournamentSaved, Write
from ..tournament.director import OVER, Director
from .cluster import ClusterView
from .env import Env
from .house import HOUSE_ARRIVAL, HOUSE_PREFIX, HouseDesk, HouseStart
from .identity import Holder
from .ladder import Ladder, LadderConfig
from .ladder_desk import LadderDesk
from .limits import Limits
from .logins import LoginLimits, Logins
from .outbox import HallOutbox
from .rated import RatedPlay
from .rated_games import RatedGames
from .room import Outbox, Room, RoomSettings
from .room_state import PLAYING
from .rooms import RoomRegistry, lake_name
from .seeks import Pairing, SeekDesk
from .timers import LADDER, LOBBY, Timers
from .tournaments import GOING_ON, UNDER_WAY, TournamentDesk

log = logging.getLogger("plyhall.hall")


@dataclass(slots=True)
class Session:
    """A logged-in connection."""

    conn: int
    name: str
    coords: str
    rooms: set[str] = field(default_factory=set)
    watching_lobby: bool = False
    organiser: bool = False


class Floor:
    """All sessions, seeks and rooms of one server, and the routing between them (the hall without its dispatch)."""

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
        self.logins.seat_free_in = self.seat_free_in
        self.house = HouseDesk(house_limit)
        self.rated = RatedPlay(self.limits.rated_networks, self.limits.rated_games_per_address,
                               self.limits.rated_names == "registered")
        self.seeks = SeekDesk(Ladder(ladder, self.room_defaults))
        self.ladder = LadderDesk(self.seeks, self.house)
        self.rated_games = RatedGames(self.rated, self.seeks.ladder)
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

    @property
    def tournaments(self) -> dict[str, Director]:
        """Every tournament of this server, by id (the tournament desk's)."""
        return self.events.tournaments

    @property
    def house_secret(self) -> str:
        """What the server's own bots log in with (made at start; it reaches them through their environment)."""
        return self.logins.house_secret

    def listing(self, game: str | None = None) -> list[dict[str, Any]]:
        """Every room's summary, optionally for one game (in a cluster: every node's rooms)."""
        rooms = self.local_listing(game)
        return rooms if self.cluster is None else rooms + self.cluster.listing(game)

    def local_listing(self, game: str | None = None) -> list[dict[str, Any]]:
        """The summary of every room this node owns, optionally for one game."""
        return [r.listing() for r in self.rooms.values() if game is None or r.game.id == game]

    def holder(self, name: str, conn: int | None = None) -> Holder:
        """Who holds ``name`` now, as the login rule table sees it (``conn``: a login whose claim does not count)."""
        return self._holder(name, conn)

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

    def seat_free_in(self, name: str, now: float) -> float | None:
        """Seconds until the last seat kept here for ``name``, away, is given up (and the name with it), or None."""
        deadlines = [room.away[seat] for room in (self.rooms.get(r) for r in self.seat_holders.get(name, ()))
                     if room is not None for seat, held in enumerate(room.seats) if held == name and seat in room.away]
        return max(0.0, max(deadlines) - now) if deadlines else None

    def _held(self, name: str) -> bool:
        """True when anything holds ``name``: a session, a seat, a tournament entry."""
        return name in self.by_name or bool(self.seat_holders.get(name)) or self.events.entrant(name) is not None

    def _room_taken(self, name: str) -> bool:
        """True when a room of this name (ignoring case) is open here, or on another node of the cluster."""
        return self.registry.taken(name) or (self.cluster is not None and self.cluster.taken(name))

    def _free_name(self) -> str:
        """A generated room name, unique in the cluster too: numbers in blocks no other node draws from."""
        if self.cluster is None:
            return self.registry.free_name()
        while (number := self.cluster.next_number()) is not None:
            name = lake_name(number)
            if not self._room_taken(name):
                return name
        return self.registry.free_name(self.cluster.taken, suffix=f" {self.cluster.node}")

    def _open_session(self, out: HallOutbox, conn: int, name: str, coords: str, organiser: bool,
                      previous: Session | None, now: float) -> Session:
        """Open ``conn``'s session of ``name`` (taking over ``previous``, whose connection goes), with its seats."""
        if previous is not None and previous.conn != conn:  # the owner logs in again: the old connection goes
            out.close.append((previous.conn, "logged in from another connection"))
            self.sessions.pop(previous.conn, None)
            self.watchers.discard(previous.conn)
        session = Session(conn, name, coords, organiser=organiser)
        if name in self.logins.claims:
            self.rated.seen(name, self.addresses.get(conn, "?"))
        if previous is not None:  # what it watched, it watches on
            session.rooms, session.watching_lobby = set(previous.rooms), previous.watching_lobby
            if session.watching_lobby:
                self.watchers.add(conn)
            self.events.moved(previous.conn, conn)
        session.rooms |= self.seat_holders.get(name, set()) & set(self.rooms)
        self.sessions[conn] = session
        self.by_name[name] = session
        for room_name in sorted(session.rooms):
            room = self.rooms[room_name]
            if room.seat_of(name) is not None:
                self._apply(out, room, room.reconnected(name, coords, now))
            elif name in room.spectators:  # it watches on, told so, in the coordinates it logged in with now
                self._apply(out, room, room.join(name, coords, now, "spectator"))
            else:
                session.rooms.discard(room_name)
        return session

    # Restarts ---------------------------------------------------------------------------

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

    # Tournaments ------------------------------------------------------------------------

    def tournament_view(self, director: Director, now: float) -> dict[str, Any]:
        """A tournament's full state, with its running games as the lobby lists them (kept a moment: ``view``)."""
        return self.events.view(director, now, lambda: director.to_json(now, {
            number: self.rooms[name].listing() for number, name in director.open.items() if name in self.rooms}))

    def _tournament_changed(self, out: HallOutbox, director: Director, now: float) -> None:
        """Store the event, open what is due, and push it to its watchers (coalesced)."""
        self.events.changed(director)
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
            out.writes.append(room_saved(room))
            for seat, entrant in enumerate((game.white, game.black)):
                self.seat_holders.setdefault(entrant, set()).add(name)
                session = self.by_name.get(entrant)
                if session is not None:
                    self._apply(out, room, room.join(entrant, session.coords, now, "player", seat))
                elif entrant in self.house.running:  # a house entrant still starting (warming its engine up)
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

    # Pairings ---------------------------------------------------------------------------

    def _pair(self, out: HallOutbox, pairing: Pairing, now: float) -> None:
        """Open a room for two seeks that pair and seat both."""
        room = Room(self._free_name(), pairing.settings, self.env)
        self.registry.add(room)
        self.seeks.opened(room.name, pairing.ladder)
        out.writes.append(room_saved(room))
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
        again once the result, and the ratings it makes, are stored (``Hall.committed``)."""
        for name in self.ladder.leaving(room, records):
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

    def _apply(self, out: HallOutbox, room: Room, result: Outbox) -> None:
        """Route a room's outbox to connections, track membership, schedule its timer and clean up."""
        if room.status == PLAYING and not (result.ended or result.entered or result.vacated or
                                                      result.listing_changed):
            # a game runs on and nobody came or went (a move): only its writes, its messages and its timer
            out.writes.extend(result.writes)
            self._route(out, result)
            self.timers.schedule(room.name, room.next_deadline())  # as _schedule does, one call fewer
        else:
            self._apply_general(out, room, result)

    def _apply_general(self, out: HallOutbox, room: Room, result: Outbox) -> None:
        """:meth:`_apply` for any outbox (a game's end, members coming and going, a listing that changed)."""
        # the GameEnded writes hold the ended games' very records: rated before they are stored
        self.rated_games.judge(room.settings.rated, result, self.logins.claims, self._now)
        out.writes.extend(result.writes)
        out.ended.extend(result.ended)
        for name in result.entered:
            self._entered(room, name)
        self._route(out, result)
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

    def _route(self, out: HallOutbox, result: Outbox) -> None:
        """The room's messages to the connections of their members (a member not connected now gets nothing)."""
        by_name, messages = self.by_name, out.messages
        for name, msg in result.messages:
            session = by_name.get(name)
            if session is not None:
                messages.append((session.conn, msg))

    def _games_ended(self, out: HallOutbox, room: Room, records: list[GameRecord]) -> bool:
        """Tell tournaments and the ladder that games of ``room`` ended (after the room's own messages: game_over
        before the next game's start); True when the room is gone with them (a ladder or tournament room)."""
        for record in records:
            if record.tournament is not None:
                self._tournament_ended(out, record, self._now)
        if room.name in self.seeks.ladder_rooms:
            self._ladder_over(out, room, records)
        elif room.tournament is not None and room.status == RoomStatus.FINISHED:  # its entrants leave (§15): none
            for name in [seated for seated in room.seats if seated is not None]:  # is told of its opponent's drop
                self._apply(out, room, room.leave(name, self._now))  # in a room whose game is over
        return room.name not in self.rooms

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


def room_saved(room: Room) -> Write:
    """The write that stores ``room`` as it is now."""
    return RoomSaved(room.snapshot())
