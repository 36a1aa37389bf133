"""A room: two seats, spectators, and the games played in it.

``Room`` is a plain object in the style of a sans-I/O protocol: every method takes the current (monotonic) time
and returns an :class:`Outbox` with the messages to send (addressed by member name, already in each receiver's
coordinates), the durable writes that must be committed before those messages go out, and the membership changes.
It never touches a socket, a clock or a random source itself (ids and wall-clock time come from an
:class:`~server.core.env.Env`). Every refusal is an ``error`` message in the outbox.

Here are a room's transitions: seats taken, kept and given up, moves, resignations and draw offers, time
running out, and the games of a series started and finished. Its fields, and everything it shows or keeps
without changing (the lobby's summary, the full state a member is sent, the snapshot storage keeps and the room
restored from it), are in ``room_state`` (:class:`~server.core.room_state.RoomState`, which ``Room`` extends),
its settings in ``room_settings``, its clocks in ``clock``.
"""

from __future__ import annotations

import logging
from typing import Any

from mypy_extensions import mypyc_attr

from protocol import messages as m
from protocol.games import COORDS, IllegalMove, Outcome
from protocol.games.base import clip, first_seat_option, shown_move
from protocol.messages import ErrorCode, GameStatus, RoomStatus

from ..storage.records import GameEnded, GameStarted, MovePlayed, MoveRecord
from . import words
from .clock import Clocks
from .room_settings import RoomSettings
from .room_state import PLAYING, SILENT_GAMES, Outbox, RoomState

__all__ = ["MAX_CHAT", "MAX_REASON", "Outbox", "Room", "RoomSettings"]

log = logging.getLogger("plyhall.rooms")

MAX_REASON = 200  # characters of a rule's reason an error repeats (it may quote what the client sent)
MAX_CHAT = 500


@mypyc_attr(allow_interpreted_subclasses=True)
class Room(RoomState):
    """A room and its transitions, built as its :class:`~server.core.room_state.RoomState` (name, settings, seats)."""

    __slots__ = ()

    # Membership ------------------------------------------------------------------------

    def join(self, name: str, coords: str, now: float, role: str = "player", seat: int | None = None) -> Outbox:
        """Take a seat (given or any free) or watch; starts the game when both seats fill."""
        out = Outbox()
        if coords not in COORDS:
            return out.error(name, ErrorCode.BAD_MESSAGE, f"unknown coords {coords!r}; accepted: {', '.join(COORDS)}",
                             self.name)
        if role not in ("player", "spectator"):
            return out.error(name, ErrorCode.BAD_MESSAGE, "role is 'player' or 'spectator'", self.name)
        if role == "spectator" and seat is not None:  # it was ignored: the client believed it had that seat
            return out.error(name, ErrorCode.BAD_MESSAGE, "a spectator takes no seat: leave out seat", self.name)
        if self.seat_of(name) is not None or (name in self.spectators and role == "spectator"):
            return self._join_again(name, coords, now, role, seat)  # (a spectator joining as a player sits down)
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
        self.spectators.discard(name)
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
        if (role == "spectator" and current is not None) or seat not in (None, current):
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
        if self.status == PLAYING:
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
        if seat is not None and self.status == PLAYING:
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

    def move(self, name: str, obj: Any, now: float, game_no: int | None = None) -> Outbox:
        """A player sends a move (for game ``game_no``, when given): check turn, parse in the sender's coordinates,
        validate, relay. The common case (:meth:`~RoomState._mover`) goes straight to the rules' one call; anything
        else takes the general path."""
        seat = self._mover(name, now)
        if seat is not None and (game_no is None or game_no == self.game_no):
            try:
                move, new_state = self.game.checked_move(obj, self.state, self.coords[name])
            except IllegalMove:
                return self._move(name, obj, now, None)  # which refuses it, as the room's rule says
            out = Outbox()
            self._play(out, seat, move, new_state, now)
            return out
        return self._move(name, obj, now, game_no)

    def _move(self, name: str, obj: Any, now: float, game_no: int | None) -> Outbox:
        """:meth:`move`'s general path: time first, then who sends what."""
        out = self.tick(now)
        seat = self.seat_of(name)
        if seat is None:
            kind = "not_a_player" if name in self.spectators else "not_in_room"
            return out.error(name, kind, f"you hold no seat in {self.name}", self.name)
        if self._not_running(out, name, game_no):
            return out
        if self.paused:
            return out.error(name, ErrorCode.GAME_NOT_RUNNING, f"the game in {self.name} is paused until both players "
                             "are back after the server restarted; a game_start follows when it resumes", self.name)
        to_move = self.game.to_move(self.state)
        if seat != to_move:
            return out.error(name, ErrorCode.NOT_YOUR_TURN, words.not_your_turn(self.players, to_move), self.name)
        try:
            move, new_state = self.game.checked_move(obj, self.state, self.coords[name])
        except IllegalMove as exc:
            text, reason, told = shown_move(obj), clip(exc.reason, MAX_REASON), clip(  # the player's squares
                self.game.grid.named_in(exc.reason, exc.squares, self.coords[name]), MAX_REASON)
            out.error(name, ErrorCode.ILLEGAL_MOVE, f"{text}: {told}", self.name)
            if self.settings.illegal_move == "lose":
                out.extend(self._finish(Outcome(1 - seat, words.illegal_move(self.players, seat, text, reason)), now))
            return out
        self._play(out, seat, move, new_state, now)
        return out

    def _play(self, out: Outbox, seat: int, move: Any, new_state: Any, now: float) -> None:
        """Record an accepted move, tell everybody (in their coordinates), and end the game if it is over."""
        self.state = new_state
        outcome, next_seat, notation = self.game.after_move(move, new_state)
        assert self.clocks is not None
        elapsed, clocks = self.clocks.switched(now, next_seat)
        record = MoveRecord(len(self.moves) + 1, seat, notation, int(elapsed * 1000), clocks["left"])
        self.moves.append(record)
        self.notations.append(notation)
        self.last_move = move
        out.writes.append(MovePlayed(self.record_id, record))
        if self.draw_offer is not None and self.draw_offer != seat:
            self.draw_offer = None  # moving declines the opponent's offer
        sent: dict[str, dict[str, Any]] = {}  # one message per coordinate convention, shared by its members
        coords_of, messages = self.coords, out.messages
        for member in self.members if self.spectators else self.seats:  # the seats: no list made (most rooms)
            if member is None:
                continue
            coords = coords_of[member]
            msg = sent.get(coords)
            if msg is None:
                form = self.game.format_move(move, coords)
                msg = sent[coords] = m.moved(self.name, record.seq, seat, form, notation, clocks, next_seat)
            messages.append((member, msg))
        if outcome is not None:
            out.extend(self._finish(Outcome(outcome.winner, words.rule_reason(outcome.reason, outcome.winner,
                                                                               self.players)), now))

    def resign(self, name: str, now: float, game_no: int | None = None) -> Outbox:
        """A player resigns the running game (game ``game_no``, when given)."""
        out = self.tick(now)
        seat = self._player_in_game(out, name, game_no)
        if seat is None:
            return out
        return out.extend(self._finish(Outcome(1 - seat, words.resigned(self.players, seat)), now))

    def offer_draw(self, name: str, now: float, game_no: int | None = None) -> Outbox:
        """Offer a draw (in game ``game_no``, when given); if the opponent offers one, the game is drawn."""
        out = self.tick(now)
        seat = self._player_in_game(out, name, game_no)
        if seat is None:
            return out
        if self.draw_offer == 1 - seat:
            return out.extend(self._finish(Outcome(None, "draw agreed"), now))
        again = self.draw_offer == seat  # an offer made again while it stands: said to its maker only
        self.draw_offer = seat
        self._save(out)  # the offer stands across a restart
        msg = m.draw_offered(self.name, seat)
        for member in ([name] if again else self.members):
            out.send(member, msg)
        return out

    def chat(self, name: str, text: str) -> Outbox:
        """Relay a chat line to everybody in the room."""
        out = Outbox()
        if name not in self.coords:
            return out.error(name, ErrorCode.NOT_IN_ROOM, f"you are not in {self.name}", self.name)
        text = text.strip()
        if not text or len(text) > MAX_CHAT or words.unprintable(text):
            return out.error(name, ErrorCode.BAD_MESSAGE, f"chat text must be 1 to {MAX_CHAT} printable characters "
                             "(no control characters but tab, no direction overrides)", self.name)
        msg = m.chat(self.name, name, text)
        for member in self.members:
            out.send(member, msg)
        return out

    def tick(self, now: float) -> Outbox:
        """Apply what time decides: a flag fall, or a grace period that ran out."""
        out = Outbox()
        if self.status == PLAYING and self.clocks is not None and self.clocks.flagged(now):
            seat = self.clocks.running
            assert seat is not None
            out.extend(self.abort(now, "neither player was connected") if self._both_gone()  # played again later
                       else self._finish(self._flag_outcome(seat), now, last=self.silent[0] >= SILENT_GAMES))
        idle = self._idle_deadline() if self.status == PLAYING else None
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
        if self.status == PLAYING:
            seat = expired[0]
            if len(expired) == 2 or self._both_gone():  # (the other's grace not over yet: neither is back)
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
        if self.status != PLAYING:
            return Outbox()
        return self._finish(Outcome(None, reason), now, status=GameStatus.ABORTED)

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

    def _player_in_game(self, out: Outbox, name: str, game_no: int | None = None) -> int | None:
        seat = self.seat_of(name)
        if seat is None:
            out.error(name, ErrorCode.NOT_A_PLAYER, f"you hold no seat in {self.name}", self.name)
            return None
        if self._not_running(out, name, game_no):
            return None
        return seat

    def _start_game(self, now: float) -> Outbox:
        out = Outbox()
        options = dict(self.settings.options)
        # alternate who moves first from one game of the room to the next; the room's options say who does in its
        # first game (what the initial state's to_move says, without making one: every game holds to it, tested)
        first = first_seat_option(options.get("first", 0), self.game.first_colours)
        if self.game_no % 2 == 1:
            first = 1 - first
        options["first"] = first
        self.state = self.game.initial_state(**options)
        self.game_no += 1
        self.status = PLAYING
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
        log.info("game %s of %s started in %s: %s vs %s, game %d of %d", self.record_id, self.game.id, self.name,
                 self.players[0], self.players[1], self.game_no, self.settings.games)
        for notation in self.opening:
            # a tournament opening: its moves are played (and recorded) before anyone moves
            move = self.game.parse_move(notation, self.state)
            self._play(Outbox(), self.game.to_move(self.state), move, self.game.apply(self.state, move), now)
            out.writes.append(MovePlayed(self.record_id, self.moves[-1]))
        shared: dict[str, dict[str, Any]] = {}  # the game's part of the state, made once a coordinate convention
        for member in self.members:
            self._send_full_state(out, member, now, shared=shared)
        out.listing_changed = True
        return out

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
        self.status = PLAYING
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
