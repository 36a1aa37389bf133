"""A room's state: its fields, what it shows, and what storage keeps of it.

:class:`RoomState` holds a room's fields (seats, spectators, the running game and its clocks, the series so far) and
answers every question about them without changing them: who sits where, the lobby's summary, when time next acts,
the full state a member is sent, the record of the running game, and the snapshot storage keeps, from which
:meth:`RoomState.restore` rebuilds the room after a restart. :class:`~server.core.room.Room` extends it with the
transitions (joins, moves, time running out, results), each producing an :class:`Outbox`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Self

from mypy_extensions import mypyc_attr

from protocol import messages as m
from protocol.games import Outcome
from protocol.messages import ErrorCode, RoomStatus

from ..storage.records import GameRecord, MoveRecord, RoomSaved, Write
from . import words
from .clock import Clocks
from .env import Env
from .room_settings import RoomSettings

PLAYING: Final = RoomStatus.PLAYING
SILENT_GAMES: Final = 2
"""Games in a row lost on time by a player who made no move in them, after which a series ends (20 rooms of 1,000
games at 0.05 s a move that nobody played in recorded 3,262 games in 8 s)."""
"""A running game's room status, looked up once: ``RoomStatus.PLAYING`` costs an enum look-up each time it is read
(Python 3.11: about 0.3 µs, more than the comparison), and a move's path reads it several times."""


@dataclass(slots=True)
class Outbox:
    """What a call produced: messages to members, durable writes, membership changes, finished games."""

    messages: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    ended: list[GameRecord] = field(default_factory=list)  # games that ended (also in ``writes``)
    entered: list[str] = field(default_factory=list)  # names that became members
    vacated: list[str] = field(default_factory=list)  # names that are no longer members
    listing_changed: bool = False

    def __init__(self) -> None:  # list literals: cheaper than the generated default_factory calls (one a move)
        self.messages, self.writes, self.ended, self.entered, self.vacated = [], [], [], [], []
        self.listing_changed = False

    def send(self, name: str, msg: dict[str, Any]) -> None:
        """Queue ``msg`` for the member called ``name``."""
        self.messages.append((name, msg))

    def error(self, name: str, code: str, text: str, room: str) -> Outbox:
        """Queue an ``error`` for ``name`` about ``room``; returns self, for ``return out.error(...)``."""
        self.messages.append((name, m.error(code, text, room=room)))
        return self

    def extend(self, other: Outbox) -> Outbox:
        """Append another outbox's contents."""
        self.messages.extend(other.messages)
        self.writes.extend(other.writes)
        self.ended.extend(other.ended)
        self.entered.extend(other.entered)
        self.vacated.extend(other.vacated)
        self.listing_changed |= other.listing_changed
        return self



@mypyc_attr(allow_interpreted_subclasses=True)
class RoomState:
    """Seats, spectators, the running game and its clocks, and the series so far.

    ``reserved`` seats belong to named players (tournament entrants, a house bot): nobody else
    may take them; in a tournament's room a reserved player who has not come when the grace
    period ends forfeits the game instead of merely losing the seat. ``idle`` names players who
    must not sit on a move (a person playing a house bot): one who leaves a move unplayed for
    that many seconds loses, and the room plays no more games.
    """

    __slots__ = ("name", "settings", "game", "env", "creator", "address", "reserved", "tournament", "tournament_game",
                 "opening", "idle", "created_at", "seats", "spectators", "coords", "away", "status", "paused",
                 "game_no", "state", "clocks", "moves", "notations", "last_move", "record_id", "started_at", "players",
                 "game_options", "draw_offer", "last_result", "points", "ever_entered", "legal_cache", "silent")

    def __init__(
        self,
        name: str,
        settings: RoomSettings,
        env: Env,
        creator: str | None = None,
        *,
        reserved: tuple[str | None, str | None] = (None, None),
        tournament: str | None = None,
        tournament_game: int | None = None,
        opening: tuple[str, ...] = (),
        idle: tuple[float, tuple[str, ...]] | None = None,
        address: str = "",
    ) -> None:
        self.name = name
        self.settings = settings
        self.game = settings.game
        self.env = env
        self.creator = creator
        self.address = address  # where its creator connected from: what the room counts against (hall quotas)
        self.reserved = reserved
        self.tournament = tournament
        self.tournament_game = tournament_game
        self.opening = opening
        self.idle = idle  # (seconds, names): these players lose, and the room ends, if they leave a move that long
        self.created_at = env.wall_clock()
        self.seats: list[str | None] = [None, None]
        self.spectators: set[str] = set()
        self.coords: dict[str, str] = {}
        self.away: dict[int, float] = {}  # seat -> deadline of its grace period
        self.status = RoomStatus.WAITING
        self.paused = False  # a game restored after a restart waits for both players before its clock runs
        self.game_no = 0  # games started so far
        self.state: Any = None
        self.clocks: Clocks | None = None
        self.moves: list[MoveRecord] = []
        self.notations: list[str] = []
        self.last_move: Any = None  # the running game's last move (sent to a player seated mid-game, in its coords)
        self.record_id = ""
        self.started_at = 0.0
        self.players: list[str] = []
        self.game_options: dict[str, Any] = {}
        self.draw_offer: int | None = None
        self.last_result: dict[str, Any] | None = None
        self.points: dict[str, float] = {}  # the series so far: 1 a win, ½ a draw; aborted and forfeits count no draw
        self.ever_entered = False
        # the last legal_moves answer: (game, moves played, coordinates) and its moves, formatted once for every
        # member who asks about that position in those coordinates (an Amazons answer is 2,176 moves)
        self.legal_cache: tuple[tuple[str, int, str], list[Any]] | None = None
        self.silent = (0, 0)  # games in a row lost on time by a player who made no move in them, and the last one's

    # Queries ----------------------------------------------------------------------------

    @property
    def members(self) -> list[str]:
        """Everybody in the room: seated players, then spectators."""
        seated = [n for n in self.seats if n is not None]
        return seated + sorted(self.spectators) if self.spectators else seated

    def seat_of(self, name: str) -> int | None:
        """The seat ``name`` holds, or None."""
        for seat, holder in enumerate(self.seats):
            if holder == name:
                return seat
        return None

    def is_empty(self) -> bool:
        """True when no player and no spectator is in the room."""
        return not any(self.seats) and not self.spectators

    def listing(self) -> dict[str, Any]:
        """The room's public summary for the lobby."""
        summary = {
            "name": self.name,
            "game": self.game.id,
            "status": self.status,
            "seats": list(self.seats),
            "spectators": len(self.spectators),
            "game_no": self.game_no,
            "games": self.settings.games,
            "options": self.settings.options,
            "time_control": self.settings.time_control.to_json(),
            "illegal_move": self.settings.illegal_move,
            "grace": self.settings.grace,
            "rated": self.settings.rated,
        }
        last = self.last_result
        players = self.players or (last or {}).get("players") or []
        if players:  # who plays (or played) the room's current or last game, whoever holds the seats now
            summary["players"] = list(players)
        if last is not None and self.status != PLAYING:
            winner, named = last.get("winner"), last.get("players") or players
            summary["result"] = {"winner": named[winner] if winner is not None and winner < len(named) else None,
                                 "status": last.get("status", ""), "reason": last.get("reason", "")}
        if self.settings.games > 1:
            summary["score"] = dict(self.points)
        if self.tournament is not None:
            summary["tournament"] = self.tournament
        return summary

    def next_deadline(self) -> float | None:
        """The earliest time at which :meth:`tick` has something to do."""
        if not self.away and self.idle is None:  # most rooms (and every move's): the clock's deadline, if any
            return self.clocks.deadline() if self.status == PLAYING and self.clocks is not None else None
        earliest = min(self.away.values()) if self.away else None
        if self.status == PLAYING and self.clocks is not None:
            clock = self.clocks.deadline()
            for deadline in (clock,) if self.idle is None else (clock, self._idle_deadline()):
                if deadline is not None and (earliest is None or deadline < earliest):
                    earliest = deadline
        return earliest

    def _mover(self, name: str, now: float) -> int | None:
        """The seat ``name`` moves from when nothing but its move is left to check (a move's common case): a running
        game, not paused, nobody away, no idle limit, time deciding nothing at ``now`` (``tick`` would do nothing),
        and ``name`` the player to move. None otherwise (the general path then says what it is)."""
        clocks = self.clocks
        if self.status != PLAYING or clocks is None or self.paused or self.away or self.idle is not None:
            return None
        deadline = clocks.deadline()
        seat = self.game.to_move(self.state)
        if (deadline is None or now < deadline) and self.seats[seat] == name and self.seats[1 - seat] != name:
            return seat
        return None

    def _both_gone(self) -> bool:
        """Both players are away: time decides nothing between them (the game is aborted; a tournament plays it
        again), where a flag or a grace would give one of two absent players a win (the one who left second, rated:
        +162 for a bot that was gone)."""
        return len(self.away) == 2

    def _not_running(self, out: Outbox, name: str, game_no: int | None) -> bool:
        """Refuse (True) when no game runs, or game ``game_no`` is not the one running: a move or resignation sent as
        its game ended (a flag fell, the opponent resigned) is refused rather than played in the room's next game."""
        if self.status == PLAYING and game_no in (None, self.game_no):
            return False
        which = "no game is running" if game_no is None else f"game {game_no} is not running"
        out.error(name, ErrorCode.GAME_NOT_RUNNING, f"{which} in {self.name}", self.name)
        return True

    def _flag_outcome(self, seat: int) -> Outcome:
        """The result of ``seat``'s flag fall, which counts in :attr:`silent` when it made no move in the game (what
        an opening played for it is not its); after :data:`SILENT_GAMES` such games in a row, the reason says the
        series ends (:meth:`Room.tick` ends it)."""
        reason = words.ran_out_of_time(self.players, seat)
        if any(record.seat == seat for record in self.moves[len(self.opening):]):
            return Outcome(1 - seat, reason)
        count, last = self.silent
        self.silent = (count + 1 if last == self.game_no - 1 else 1, self.game_no)
        if self.silent[0] >= SILENT_GAMES and self.game_no < self.settings.games:
            reason += f"; {self.silent[0]} games in a row were lost on time without a move, so the series ends"
        return Outcome(1 - seat, reason)

    def _idle_deadline(self) -> float | None:
        """When the player to move, if ``idle`` names it, has sat on its move too long."""
        if self.idle is None or self.paused or self.clocks is None or self.clocks.running is None:
            return None
        if self.players[self.clocks.running] not in self.idle[1]:
            return None
        return self.clocks.turn_started + self.idle[0]

    # What a member is told, and the record of the running game ---------------------------

    def legal_moves(self, name: str) -> Outbox:
        """The legal moves of the seat to move, in the asker's coordinates."""
        out = Outbox()
        if name not in self.coords:
            return out.error(name, ErrorCode.NOT_IN_ROOM, f"you are not in {self.name}", self.name)
        if self.status != PLAYING:
            return out.error(name, ErrorCode.GAME_NOT_RUNNING, f"no game is running in {self.name}", self.name)
        key = (self.record_id, len(self.moves), self.coords[name])
        cached = self.legal_cache
        if cached is None or cached[0] != key:
            cached = self.legal_cache = (key, [self.game.format_move(mv, key[2])
                                               for mv in self.game.legal_moves(self.state)])
        out.send(name, m.legal_moves(self.name, cached[1]))
        return out

    def send_state(self, name: str, now: float) -> Outbox:
        """The full state for a member who asks."""
        out = Outbox()
        if name not in self.coords:
            return out.error(name, ErrorCode.NOT_IN_ROOM, f"you are not in {self.name}", self.name)
        self._send_full_state(out, name, now, always=True)
        return out


    def _send_full_state(self, out: Outbox, name: str, now: float, always: bool = False,
                         shared: dict[str, dict[str, Any]] | None = None) -> None:
        """Send ``name`` the full state (while a game runs, or ``always``); ``shared``: the game's part of it for
        each coordinate convention, made for the first member in it and shared by the others (a game's start)."""
        if self.status != PLAYING and not always:
            return
        coords = self.coords[name]
        fields: dict[str, Any] = {
            "room": self.name,
            "game": self.game.id,
            "game_no": self.game_no,
            "players": list(self.players if self.status == PLAYING else self.seats),
            "seat": self.seat_of(name),
            "status": self.status,
        }
        if self.state is not None and self.clocks is not None:
            game = None if shared is None else shared.get(coords)
            if game is None:
                game = {
                    "state": self.game.encode_state(self.state, coords),
                    "to_move": None if self.game.outcome(self.state) else self.game.to_move(self.state),
                    "clocks": self.clocks.snapshot(now),
                    "moves": list(self.notations),
                    "options": self.game_options,
                    "record": self.record_id,
                }
                if shared is not None:
                    shared[coords] = game
            fields.update(game)
        if self.status == PLAYING:
            if self.paused:
                fields["paused"] = True
            if self.idle is not None and name in self.idle[1]:  # a person playing a house bot: how long a move may wait
                fields["idle"] = self.idle[0]
                deadline = self._idle_deadline()
                if deadline is not None:
                    fields["idle_left"] = max(0.0, deadline - now)
            if self.last_move is not None and self.moves:
                # what a bot seated mid-game needs to answer, as the moved message it missed gave it
                last = self.moves[-1]
                fields["last_move"] = {"seq": last.seq, "seat": last.seat, "notation": last.notation,
                                       "move": self.game.format_move(self.last_move, coords)}
            out.send(name, m.game_start(**fields))
            if self.draw_offer is not None and not self.paused:  # an offer made before a restart (or a reconnect)
                out.send(name, m.draw_offered(self.name, self.draw_offer))
            return
        if self.last_result is not None:
            fields["last_result"] = self.last_result
        out.send(name, m.room_state(**fields))

    def _record(self, winner: int | None, reason: str, status: str, ended_at: float | None) -> GameRecord:
        return GameRecord(
            id=self.record_id, room=self.name, game=self.game.id, options=self.game_options,
            time_control=self.settings.time_control.to_json(), players=list(self.players),
            moves=list(self.moves), winner=winner, reason=reason, status=status,
            started_at=self.started_at, ended_at=ended_at, tournament=self.tournament,
            tournament_game=self.tournament_game,
        )

    def _broadcast_seats(self, out: Outbox) -> None:
        """Tell every member who sits where now."""
        msg = m.seated(self.name, list(self.seats))
        for member in self.members:
            if member in self.coords:
                out.send(member, msg)

    # What storage keeps, and the room rebuilt from it after a restart --------------------

    def _save(self, out: Outbox) -> None:
        """Store the room as it is now (its snapshot)."""
        out.writes.append(RoomSaved(self.snapshot()))

    def snapshot(self) -> dict[str, Any]:
        """What storage keeps of the room (with the running game's id), to restore it after a restart."""
        return {
            "name": self.name, "settings": self.settings.to_json(), "creator": self.creator, "address": self.address,
            "seats": list(self.seats), "reserved": list(self.reserved), "tournament": self.tournament,
            "tournament_game": self.tournament_game,
            "opening": list(self.opening), "status": self.status, "game_no": self.game_no,
            "record": self.record_id if self.status == PLAYING else None, "points": self.points,
            "last_result": self.last_result, "created_at": self.created_at,
            "idle": None if self.idle is None else [self.idle[0], list(self.idle[1])],
            # a draw offer stands across a restart (until the opponent moves): its seat and the moves before it
            "draw_offer": None if self.draw_offer is None or self.status != PLAYING else [self.draw_offer,
                                                                                        len(self.moves)],
        }

    @classmethod
    def restore(cls, snapshot: dict[str, Any], running: GameRecord | None, env: Env, now: float) -> Self:
        """Rebuild a room from storage: seats wait for their players for the grace period, and a running
        game continues from its last stored move with the clocks as they were then (the time the server
        was down is charged to nobody) once both players are back."""
        settings = RoomSettings.from_json(snapshot["settings"])
        room = cls(snapshot["name"], settings, env, snapshot.get("creator"),
                   reserved=tuple(snapshot.get("reserved") or (None, None)),  # type: ignore[arg-type]
                   tournament=snapshot.get("tournament"), tournament_game=snapshot.get("tournament_game"),
                   opening=tuple(snapshot.get("opening") or ()),
                   idle=(float(snapshot["idle"][0]), tuple(snapshot["idle"][1])) if snapshot.get("idle") else None,
                   address=snapshot.get("address") or "")
        room.created_at = snapshot.get("created_at", room.created_at)
        room.game_no = snapshot["game_no"]
        room.points = dict(snapshot.get("points") or {})
        room.last_result = snapshot.get("last_result")
        room.status = RoomStatus(snapshot["status"])
        room.ever_entered = True
        for seat, name in enumerate(snapshot["seats"]):
            if name is not None:
                room.seats[seat] = name
                room.coords[name] = "algebraic"  # until the player logs in again
                room.away[seat] = now + settings.grace
        if room.status == PLAYING:
            if running is None:
                room.status = RoomStatus.WAITING  # its game could not be found: treat the room as between games
            else:
                room._restore_game(running, now)
                offer = snapshot.get("draw_offer")
                if offer and all(move.seat == offer[0] for move in room.moves[offer[1]:]):  # none by the opponent
                    room.draw_offer = offer[0]
        return room

    def _restore_game(self, record: GameRecord, now: float) -> None:
        self.record_id = record.id
        self.players = list(record.players)
        self.started_at = record.started_at
        self.game_options = dict(record.options)
        state = self.game.initial_state(**self.game_options)
        for move in record.moves:
            self.last_move = self.game.parse_move(move.notation, state)
            state = self.game.apply(state, self.last_move)
            self.notations.append(move.notation)
        self.state = state
        self.moves = list(record.moves)
        left = record.moves[-1].clocks_after if record.moves else None
        self.clocks = Clocks.restored(self.settings.time_control, left)
        self.paused = True
