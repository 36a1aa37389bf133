"""A room: two seats, spectators, and the games played in it.

``Room`` is a plain object in the style of a sans-I/O protocol: every method takes the
current (monotonic) time and returns an :class:`Outbox` with the messages to send
(addressed by member name, already in each receiver's coordinates), the durable writes
that must be committed before those messages go out, and the membership changes. It never
touches a socket, a clock or a random source itself (ids and wall-clock time come from an
:class:`~server.core.env.Env`). Every refusal is an ``error`` message in the outbox.

This module is long because a room is one state machine: seats, turns, clocks, grace periods and
series share every field, and each transition reads best beside the others (its settings are in
``room_settings``, its clocks in ``clock``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from protocol import messages as m
from protocol.games import COORDS, IllegalMove, Outcome
from protocol.games.base import clip, shown
from protocol.messages import ErrorCode, GameStatus, RoomStatus

from ..storage.records import GameEnded, GameRecord, GameStarted, MovePlayed, MoveRecord, RoomSaved, Write
from . import words
from .clock import Clocks
from .env import Env
from .room_settings import RoomSettings

log = logging.getLogger("plyhall.rooms")

MAX_REASON = 200  # characters of a rule's reason an error repeats (it may quote what the client sent)

MAX_CHAT = 500


@dataclass
class Outbox:
    """What a call produced: messages to members, durable writes, membership changes, finished games."""

    messages: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    ended: list[GameRecord] = field(default_factory=list)  # games that ended (also in ``writes``)
    entered: list[str] = field(default_factory=list)  # names that became members
    vacated: list[str] = field(default_factory=list)  # names that are no longer members
    listing_changed: bool = False

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


class Room:
    """Seats, spectators, the running game and its clocks.

    ``reserved`` seats belong to named players (tournament entrants, a house bot): nobody else
    may take them; in a tournament's room a reserved player who has not come when the grace
    period ends forfeits the game instead of merely losing the seat. ``idle`` names players who
    must not sit on a move (a person playing a house bot): one who leaves a move unplayed for
    that many seconds loses, and the room plays no more games.
    """

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
        if last is not None and self.status != RoomStatus.PLAYING:
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
        earliest = min(self.away.values()) if self.away else None
        if self.status == RoomStatus.PLAYING and self.clocks is not None:
            for deadline in (self.clocks.deadline(), self._idle_deadline()):
                if deadline is not None and (earliest is None or deadline < earliest):
                    earliest = deadline
        return earliest

    def _idle_deadline(self) -> float | None:
        """When the player to move, if ``idle`` names it, has sat on its move too long."""
        if self.idle is None or self.paused or self.clocks is None or self.clocks.running is None:
            return None
        if self.players[self.clocks.running] not in self.idle[1]:
            return None
        return self.clocks.turn_started + self.idle[0]

    def snapshot(self) -> dict[str, Any]:
        """What storage keeps of the room (with the running game's id), to restore it after a restart."""
        return {
            "name": self.name, "settings": self.settings.to_json(), "creator": self.creator, "address": self.address,
            "seats": list(self.seats), "reserved": list(self.reserved), "tournament": self.tournament,
            "tournament_game": self.tournament_game,
            "opening": list(self.opening), "status": self.status, "game_no": self.game_no,
            "record": self.record_id if self.status == RoomStatus.PLAYING else None, "points": self.points,
            "last_result": self.last_result, "created_at": self.created_at,
            "idle": None if self.idle is None else [self.idle[0], list(self.idle[1])],
        }

    # Membership ------------------------------------------------------------------------

    def join(self, name: str, coords: str, now: float, role: str = "player", seat: int | None = None) -> Outbox:
        """Take a seat (given or any free) or watch; starts the game when both seats fill."""
        out = Outbox()
        if coords not in COORDS:
            return out.error(name, ErrorCode.BAD_MESSAGE, f"unknown coords {coords!r}; accepted: {', '.join(COORDS)}",
                             self.name)
        if role not in ("player", "spectator"):
            return out.error(name, ErrorCode.BAD_MESSAGE, "role is 'player' or 'spectator'", self.name)
        if self.seat_of(name) is not None or name in self.spectators:
            return self._join_again(name, coords, now, role, seat)
        if role == "spectator":
            self.spectators.add(name)
            self.coords[name] = coords
            self._entered(out, name)
            out.send(name, m.joined(self.name, None, self.listing()))
            self._send_full_state(out, name, now)
            return out
        if self.status == RoomStatus.FINISHED:
            return out.error(name, ErrorCode.GAME_NOT_RUNNING, f"{self.name} has finished its games; "
                             "join as a spectator or create a new room", self.name)
        chosen = self._seat_for(name, seat)
        if isinstance(chosen, tuple):
            return out.error(name, *chosen, self.name)
        self.seats[chosen] = name
        self.coords[name] = coords
        self._entered(out, name)
        out.send(name, m.joined(self.name, chosen, self.listing()))
        self._broadcast_seats(out)
        self._save(out)
        if self.status == RoomStatus.WAITING and all(self.seats) and not self.away:
            out.extend(self._start_game(now))
        return out

    def _join_again(self, name: str, coords: str, now: float, role: str, seat: int | None) -> Outbox:
        """A member joins again: in the same role it is harmless (it gets the state again, in ``coords``)."""
        out = Outbox()
        current = self.seat_of(name)
        same_role = (role == "spectator" and current is None) or (
            role == "player" and current is not None and seat in (None, current))
        if not same_role:
            return out.error(name, ErrorCode.BAD_MESSAGE, "you are already in this room; leave first", self.name)
        if current is not None and current in self.away:
            return self.reconnected(name, coords, now)
        self.coords[name] = coords
        out.send(name, m.joined(self.name, current, self.listing()))
        self._send_full_state(out, name, now)
        return out

    def _seat_for(self, name: str, seat: int | None) -> int | tuple[str, str]:
        """The seat ``name`` may take (the one asked for, or the first free one), or the error code and sentence
        saying why it may not."""
        if seat is None:
            free = [s for s in (0, 1) if self.seats[s] is None and self.reserved[s] in (None, name)]
            return free[0] if free else ("room_full", f"both seats of {self.name} are taken; join as a spectator")
        if seat not in (0, 1):
            return "bad_message", "seat is 0 or 1"
        if self.seats[seat] is not None:
            return "seat_taken", f"seat {seat} is taken by {self.seats[seat]}"
        if self.reserved[seat] not in (None, name):
            return "seat_taken", f"seat {seat} is kept for {self.reserved[seat]}"
        return seat

    def hold(self, name: str, seat: int, now: float, grace: float | None = None) -> Outbox:
        """Keep ``seat`` for ``name``, who is not here yet: it has ``grace`` (the room's grace period)
        seconds to come."""
        out = Outbox()
        self.seats[seat] = name
        self.coords[name] = "algebraic"  # until the player comes and says which convention it reads
        self.away[seat] = now + (self.settings.grace if grace is None else grace)
        self._broadcast_seats(out)
        self._save(out)
        return out

    def withdraw(self, name: str, now: float, reason: str) -> Outbox:
        """A reserved player is gone for good (a house bot whose process ended): it loses a running game, its seat
        and its reservation are freed, and the room plays no more games."""
        out = Outbox()
        seat = self.seat_of(name)
        if seat is None:
            return out
        if self.status == RoomStatus.PLAYING:
            out.extend(self._finish(Outcome(1 - seat, reason), now, last=True))
        else:
            self.status = RoomStatus.FINISHED
        self.seats[seat] = None
        self.away.pop(seat, None)
        self.coords.pop(name, None)
        self.reserved = tuple(None if r == name else r for r in self.reserved)  # type: ignore[assignment]
        self._broadcast_seats(out)
        self._save(out)
        out.listing_changed = True
        out.vacated.append(name)
        return out

    def leave(self, name: str, now: float) -> Outbox:
        """Leave the room; a player leaving a running game loses it, and an entrant leaving its seat of a tournament
        game that has not started forfeits that game (the event never waits for a seat nobody will take)."""
        out = Outbox()
        seat = self.seat_of(name)
        if seat is None and name not in self.spectators:
            return out.error(name, ErrorCode.NOT_IN_ROOM, f"you are not in {self.name}", self.name)
        if seat is not None and self.status == RoomStatus.PLAYING:
            # no next game starts with a seat that is being emptied
            out.extend(self._finish(Outcome(1 - seat, words.left(self.players, seat)), now, start_next=False))
        elif seat is not None and self.tournament is not None and self.status == RoomStatus.WAITING:
            out.extend(self._forfeit([seat], now, "left the room before the game started"))
        out.send(name, m.left(self.name))
        if seat is not None:
            self.seats[seat] = None
            self.away.pop(seat, None)
            self._broadcast_seats(out)
            self._save(out)
        self.spectators.discard(name)
        self.coords.pop(name, None)
        out.listing_changed = True
        out.vacated.append(name)
        return out

    def disconnected(self, name: str, now: float) -> Outbox:
        """``name`` lost its connection: spectators go, players keep the seat for the grace period."""
        out = Outbox()
        if name in self.spectators:
            self.spectators.discard(name)
            self.coords.pop(name, None)
            out.listing_changed = True
            out.vacated.append(name)
            return out
        seat = self.seat_of(name)
        if seat is None:
            return out
        self.away[seat] = now + self.settings.grace
        msg = m.player_away(self.name, seat, name, self.settings.grace)
        for member in self.members:
            if member != name:
                out.send(member, msg)
        if self.settings.grace == 0:
            out.extend(self.tick(now))
        return out

    def reconnected(self, name: str, coords: str, now: float) -> Outbox:
        """``name`` logged back in (or came to a seat kept for it): resume the seat and send the full state."""
        out = Outbox()
        seat = self.seat_of(name)
        if seat is None:
            return out
        self.coords[name] = coords
        was_away = self.away.pop(seat, None) is not None
        self._entered(out, name)
        out.send(name, m.joined(self.name, seat, self.listing()))
        if was_away:
            msg = m.player_back(self.name, seat, name)
            for member in self.members:
                if member != name:
                    out.send(member, msg)
        if self.paused and not self.away:
            out.extend(self._resume(now))
            return out
        # the running game, else the room with its last result: a game_over sent while the player was away (or
        # lost with a server that died right after storing the result) is not missed
        self._send_full_state(out, name, now, always=self.last_result is not None)
        if self.status == RoomStatus.WAITING and all(self.seats) and not self.away:
            out.extend(self._start_game(now))
        return out

    # Play -------------------------------------------------------------------------------

    def move(self, name: str, obj: Any, now: float) -> Outbox:
        """A player sends a move: check turn, parse in the sender's coordinates, validate, relay."""
        out = self.tick(now)
        seat = self.seat_of(name)
        if seat is None:
            kind = "not_a_player" if name in self.spectators else "not_in_room"
            return out.error(name, kind, f"you hold no seat in {self.name}", self.name)
        if self.status != RoomStatus.PLAYING:
            return out.error(name, ErrorCode.GAME_NOT_RUNNING, f"no game is running in {self.name}", self.name)
        if self.paused:
            return out.error(name, ErrorCode.GAME_NOT_RUNNING, f"the game in {self.name} is paused until both players "
                             "are back after the server restarted; a game_start follows when it resumes", self.name)
        to_move = self.game.to_move(self.state)
        if seat != to_move:
            return out.error(name, ErrorCode.NOT_YOUR_TURN, words.not_your_turn(self.players, to_move), self.name)
        try:
            move = self.game.parse_move(obj, self.state, self.coords[name])
            new_state = self.game.apply(self.state, move)
        except IllegalMove as exc:
            text, reason = shown(obj), clip(exc.reason, MAX_REASON)
            out.error(name, ErrorCode.ILLEGAL_MOVE, f"{text}: {reason}", self.name)
            if self.settings.illegal_move == "lose":
                out.extend(self._finish(Outcome(1 - seat, words.illegal_move(self.players, seat, text, reason)), now))
            return out
        self._play(out, seat, move, new_state, now)
        return out

    def _play(self, out: Outbox, seat: int, move: Any, new_state: Any, now: float) -> None:
        """Record an accepted move, tell everybody (in their coordinates), and end the game if it is over."""
        self.state = new_state
        outcome = self.game.outcome(new_state)
        next_seat = None if outcome is not None else self.game.to_move(new_state)
        assert self.clocks is not None
        elapsed = self.clocks.switch(now, next_seat)
        clocks = self.clocks.snapshot(now)
        notation = self.game.notation(move)
        record = MoveRecord(len(self.moves) + 1, seat, notation, int(elapsed * 1000), clocks["left"])
        self.moves.append(record)
        self.notations.append(notation)
        self.last_move = move
        out.writes.append(MovePlayed(self.record_id, record))
        if self.draw_offer is not None and self.draw_offer != seat:
            self.draw_offer = None  # moving declines the opponent's offer
        sent: dict[str, dict[str, Any]] = {}  # one message per coordinate convention, shared by its members
        for member in self.members:
            coords = self.coords[member]
            msg = sent.get(coords)
            if msg is None:
                form = self.game.format_move(move, coords)
                msg = sent[coords] = m.moved(self.name, record.seq, seat, form, notation, clocks, next_seat)
            out.send(member, msg)
        if outcome is not None:
            out.extend(self._finish(Outcome(outcome.winner, words.rule_reason(outcome.reason, outcome.winner,
                                                                               self.players)), now))

    def legal_moves(self, name: str) -> Outbox:
        """The legal moves of the seat to move, in the asker's coordinates."""
        out = Outbox()
        if name not in self.coords:
            return out.error(name, ErrorCode.NOT_IN_ROOM, f"you are not in {self.name}", self.name)
        if self.status != RoomStatus.PLAYING:
            return out.error(name, ErrorCode.GAME_NOT_RUNNING, f"no game is running in {self.name}", self.name)
        coords = self.coords[name]
        out.send(name, m.legal_moves(self.name, [self.game.format_move(mv, coords)
                                                 for mv in self.game.legal_moves(self.state)]))
        return out

    def send_state(self, name: str, now: float) -> Outbox:
        """The full state for a member who asks."""
        out = Outbox()
        if name not in self.coords:
            return out.error(name, ErrorCode.NOT_IN_ROOM, f"you are not in {self.name}", self.name)
        self._send_full_state(out, name, now, always=True)
        return out

    def resign(self, name: str, now: float) -> Outbox:
        """A player resigns the running game."""
        out = self.tick(now)
        seat = self._player_in_game(out, name)
        if seat is None:
            return out
        return out.extend(self._finish(Outcome(1 - seat, words.resigned(self.players, seat)), now))

    def offer_draw(self, name: str, now: float) -> Outbox:
        """Offer a draw; if the opponent already offers one, the game is drawn by agreement."""
        out = self.tick(now)
        seat = self._player_in_game(out, name)
        if seat is None:
            return out
        if self.draw_offer == 1 - seat:
            return out.extend(self._finish(Outcome(None, "draw agreed"), now))
        self.draw_offer = seat
        msg = m.draw_offered(self.name, seat)
        for member in self.members:
            out.send(member, msg)
        return out

    def chat(self, name: str, text: str) -> Outbox:
        """Relay a chat line to everybody in the room."""
        out = Outbox()
        if name not in self.coords:
            return out.error(name, ErrorCode.NOT_IN_ROOM, f"you are not in {self.name}", self.name)
        text = text.strip()
        if not text or len(text) > MAX_CHAT or any(ord(ch) < 32 and ch not in "\t" for ch in text):
            return out.error(name, ErrorCode.BAD_MESSAGE, f"chat text must be 1 to {MAX_CHAT} printable characters",
                             self.name)
        msg = m.chat(self.name, name, text)
        for member in self.members:
            out.send(member, msg)
        return out

    def tick(self, now: float) -> Outbox:
        """Apply what time decides: a flag fall, or a grace period that ran out."""
        out = Outbox()
        if self.status == RoomStatus.PLAYING and self.clocks is not None and self.clocks.flagged(now):
            seat = self.clocks.running
            assert seat is not None
            out.extend(self._finish(Outcome(1 - seat, words.ran_out_of_time(self.players, seat)), now))
        idle = self._idle_deadline() if self.status == RoomStatus.PLAYING else None
        if idle is not None and now >= idle and self.idle is not None and self.clocks is not None:
            seat = self.clocks.running
            assert seat is not None
            out.extend(self._finish(Outcome(1 - seat, words.idle(self.players, seat, self.idle[0])), now,
                                    last=True))
        if not self.away:  # nobody is away (every move but a few): no grace period to run out
            return out
        expired = [seat for seat, deadline in sorted(self.away.items()) if now >= deadline]
        if not expired:
            return out
        if self.status == RoomStatus.PLAYING:
            seat = expired[0]
            if len(expired) == 2:
                out.extend(self._finish(Outcome(None, "neither player came back"), now, status=GameStatus.ABORTED))
            else:
                out.extend(self._finish(Outcome(1 - seat, words.disconnected(self.players, seat)), now))
        elif self.status == RoomStatus.WAITING and self.tournament is not None:  # its one game has no result yet
            out.extend(self._forfeit(expired, now))
        for seat in expired:
            if seat in self.away and now >= self.away[seat]:
                # nobody came back in time: the seat is free again
                del self.away[seat]
                name = self.seats[seat]
                self.seats[seat] = None
                if name is not None:
                    self.coords.pop(name, None)
                    out.vacated.append(name)
                self._broadcast_seats(out)
                self._save(out)
                out.listing_changed = True
        return out

    def dissolve(self, now: float, reason: str) -> Outbox:
        """Close the room for good (its tournament was cancelled): a running game is aborted, everybody
        leaves, and the room is finished."""
        out = self.abort(now, reason)
        for name in self.members:
            if self.seat_of(name) is not None and name in self.coords:
                out.send(name, m.left(self.name))
            out.vacated.append(name)
        self.seats = [None, None]
        self.spectators.clear()
        self.coords.clear()
        self.away.clear()
        self.status = RoomStatus.FINISHED
        self._save(out)
        out.listing_changed = True
        return out

    def abort(self, now: float, reason: str = "server shut down") -> Outbox:
        """End a running game without a result (the server is stopping)."""
        if self.status != RoomStatus.PLAYING:
            return Outbox()
        return self._finish(Outcome(None, reason), now, status=GameStatus.ABORTED)

    # Restoring after a restart ----------------------------------------------------------

    @classmethod
    def restore(cls, snapshot: dict[str, Any], running: GameRecord | None, env: Env, now: float) -> Room:
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
        room.status = snapshot["status"]
        room.ever_entered = True
        for seat, name in enumerate(snapshot["seats"]):
            if name is not None:
                room.seats[seat] = name
                room.coords[name] = "algebraic"  # until the player logs in again
                room.away[seat] = now + settings.grace
        if room.status == RoomStatus.PLAYING:
            if running is None:
                room.status = RoomStatus.WAITING  # its game could not be found: treat the room as between games
            else:
                room._restore_game(running, now)
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

    def _resume(self, now: float) -> Outbox:
        """Both players are back after a restart: the clock of the seat to move starts now."""
        out = Outbox()
        self.paused = False
        assert self.clocks is not None
        self.clocks.start(self.game.to_move(self.state), now)
        for member in self.members:
            self._send_full_state(out, member, now)
        out.listing_changed = True
        return out

    # Internals --------------------------------------------------------------------------

    def _entered(self, out: Outbox, name: str) -> None:
        self.ever_entered = True
        out.entered.append(name)
        out.listing_changed = True

    def _save(self, out: Outbox) -> None:
        out.writes.append(RoomSaved(self.snapshot()))

    def _player_in_game(self, out: Outbox, name: str) -> int | None:
        seat = self.seat_of(name)
        if seat is None:
            out.error(name, ErrorCode.NOT_A_PLAYER, f"you hold no seat in {self.name}", self.name)
            return None
        if self.status != RoomStatus.PLAYING:
            out.error(name, ErrorCode.GAME_NOT_RUNNING, f"no game is running in {self.name}", self.name)
            return None
        return seat

    def _broadcast_seats(self, out: Outbox) -> None:
        msg = m.seated(self.name, list(self.seats))
        for member in self.members:
            if member in self.coords:
                out.send(member, msg)

    def _start_game(self, now: float) -> Outbox:
        out = Outbox()
        options = dict(self.settings.options)
        # alternate who moves first from one game of the room to the next
        first = self.game.to_move(self.game.initial_state(**options))
        if self.game_no % 2 == 1:
            first = 1 - first
        options["first"] = first
        self.state = self.game.initial_state(**options)
        self.game_no += 1
        self.status = RoomStatus.PLAYING
        self.players = [n or "" for n in self.seats]
        self.moves = []
        self.notations = []
        self.last_move = None
        self.draw_offer = None
        self.record_id = self.env.new_id()
        self.started_at = self.env.wall_clock()
        self.game_options = options
        self.clocks = Clocks(self.settings.time_control, self.game.to_move(self.state), now)
        out.writes.append(GameStarted(self._record(None, "", GameStatus.RUNNING, None)))
        self._save(out)
        log.info("game %s started in %s: %s (%s) vs %s, game %d of %d", self.record_id, self.name,
                 self.players[0], self.game.id, self.players[1], self.game_no, self.settings.games)
        for notation in self.opening:
            # a tournament opening: its moves are played (and recorded) before anyone moves
            move = self.game.parse_move(notation, self.state)
            self._play(Outbox(), self.game.to_move(self.state), move, self.game.apply(self.state, move), now)
            out.writes.append(MovePlayed(self.record_id, self.moves[-1]))
        for member in self.members:
            self._send_full_state(out, member, now)
        out.listing_changed = True
        return out

    def _record(self, winner: int | None, reason: str, status: str, ended_at: float | None) -> GameRecord:
        return GameRecord(
            id=self.record_id, room=self.name, game=self.game.id, options=self.game_options,
            time_control=self.settings.time_control.to_json(), players=list(self.players),
            moves=list(self.moves), winner=winner, reason=reason, status=status,
            started_at=self.started_at, ended_at=ended_at, tournament=self.tournament,
            tournament_game=self.tournament_game,
        )

    def _send_full_state(self, out: Outbox, name: str, now: float, always: bool = False) -> None:
        if self.status != RoomStatus.PLAYING and not always:
            return
        coords = self.coords[name]
        fields: dict[str, Any] = {
            "room": self.name,
            "game": self.game.id,
            "game_no": self.game_no,
            "players": list(self.players if self.status == RoomStatus.PLAYING else self.seats),
            "seat": self.seat_of(name),
            "status": self.status,
        }
        if self.state is not None and self.clocks is not None:
            fields.update({
                "state": self.game.encode_state(self.state, coords),
                "to_move": None if self.game.outcome(self.state) else self.game.to_move(self.state),
                "clocks": self.clocks.snapshot(now),
                "moves": list(self.notations),
                "options": self.game_options,
                "record": self.record_id,
            })
        if self.status == RoomStatus.PLAYING:
            if self.paused:
                fields["paused"] = True
            if self.last_move is not None and self.moves:
                # what a bot seated mid-game needs to answer, as the moved message it missed gave it
                last = self.moves[-1]
                fields["last_move"] = {"seq": last.seq, "seat": last.seat, "notation": last.notation,
                                       "move": self.game.format_move(self.last_move, coords)}
            out.send(name, m.game_start(**fields))
            return
        if self.last_result is not None:
            fields["last_result"] = self.last_result
        out.send(name, m.room_state(**fields))

    def _forfeit(self, absent: list[int], now: float, why: str = "did not come") -> Outbox:
        """A kept seat's player never came (or left before the game started): the game is recorded as a forfeit by
        ``absent``, not as a played game, with ``why`` in its reason."""
        self.record_id = self.env.new_id()
        self.players = [n or "" for n in self.seats]
        self.game_no = 1
        self.started_at = self.env.wall_clock()
        self.game_options = dict(self.settings.options)
        self.state = None
        self.clocks = Clocks(self.settings.time_control, 0, now)
        outcome = Outcome(1 - absent[0] if len(absent) == 1 else None, words.absent(self.players, absent, why))
        self.status = RoomStatus.PLAYING
        return self._finish(outcome, now, status=GameStatus.FORFEIT)

    def _finish(self, outcome: Outcome, now: float, status: GameStatus = GameStatus.FINISHED, start_next: bool = True,
                last: bool = False) -> Outbox:
        """End the running game (``last``: and the series with it)."""
        out = Outbox()
        assert self.clocks is not None
        self.clocks.stop(now)
        self.paused = False
        clocks = self.clocks.snapshot(now)
        record = self._record(outcome.winner, outcome.reason, status, self.env.wall_clock())
        out.writes.append(GameEnded(record))
        out.ended.append(record)
        winner_name = None if outcome.winner is None else self.players[outcome.winner]
        for name in self.players:
            self.points.setdefault(name, 0.0)
        if winner_name is not None:
            self.points[winner_name] += 1.0
        elif status == GameStatus.FINISHED:
            for name in self.players:
                self.points[name] += 0.5
        more = status == GameStatus.FINISHED and self.game_no < self.settings.games and not last
        self.status = RoomStatus.WAITING if more else RoomStatus.FINISHED
        self.last_result = {"winner": outcome.winner, "reason": outcome.reason, "record": self.record_id,
                            "status": status, "players": list(self.players)}
        self._save(out)
        log.info("game %s in %s ended (%s): %s", self.record_id, self.name, status,
                 f"{winner_name} won" if winner_name else "no winner" if status != GameStatus.FINISHED else "draw")
        msg = m.game_over(self.name, outcome.winner, outcome.reason, status, list(self.players), self.record_id,
                          clocks, more, self.game_no)
        for member in self.members:
            if member in self.coords:
                out.send(member, msg)
        out.listing_changed = True
        if more and start_next and all(self.seats) and not self.away:
            out.extend(self._start_game(now))
        return out
