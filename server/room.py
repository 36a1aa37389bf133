"""A room: two seats, spectators, and the games played in it.

``Room`` is a plain object in the style of a sans-I/O protocol: every method
takes the current time and returns an :class:`Outbox` with the messages to send
(addressed by member name, already in each receiver's coordinates) and the
finished game records to store. It never touches a socket or the clock itself.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from protocol.games import COORDS, Game, IllegalMove, OptionError, Outcome, get_game
from protocol.messages import ProtocolError

from .clock import Clocks, TimeControl

ILLEGAL_MOVE_POLICIES = {"reject": "the move is refused and the turn kept", "lose": "the mover loses"}
MAX_GRACE = 600.0
MAX_GAMES_PER_ROOM = 1000
MAX_CHAT = 500


@dataclass
class Outbox:
    """What a call produced: messages to members, records to store, and whether listings changed."""

    messages: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    records: list[GameRecord] = field(default_factory=list)
    listing_changed: bool = False
    vacated: list[str] = field(default_factory=list)  # members who are no longer in the room

    def send(self, name: str, msg: dict[str, Any]) -> None:
        """Queue ``msg`` for the member called ``name``."""
        self.messages.append((name, msg))

    def error(self, name: str, error: ProtocolError, room: str | None = None) -> Outbox:
        """Queue an error reply; returns self for chaining."""
        extra = {"room": room} if room is not None else {}
        self.messages.append((name, error.to_message(**extra)))
        return self

    def extend(self, other: Outbox) -> Outbox:
        """Append another outbox's contents."""
        self.messages.extend(other.messages)
        self.records.extend(other.records)
        self.listing_changed |= other.listing_changed
        self.vacated.extend(other.vacated)
        return self


@dataclass
class MoveRecord:
    """One accepted move as stored: who, what, how long it took, clocks after it."""

    seq: int
    seat: int
    notation: str
    think_ms: int
    clocks_after: list[float | None]


@dataclass
class GameRecord:
    """A finished (or aborted) game as stored."""

    id: str
    room: str
    game: str
    options: dict[str, Any]
    time_control: dict[str, Any]
    players: list[str]
    moves: list[MoveRecord]
    winner: int | None
    reason: str
    status: str  # "finished" or "aborted"
    started_at: float
    ended_at: float

    def to_json(self) -> dict[str, Any]:
        """JSON form used by the HTTP API and ``plyhall export``."""
        return {
            "id": self.id,
            "room": self.room,
            "game": self.game,
            "options": self.options,
            "time_control": self.time_control,
            "players": self.players,
            "winner": self.winner,
            "winner_name": None if self.winner is None else self.players[self.winner],
            "reason": self.reason,
            "status": self.status,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "moves": [
                {
                    "seq": m.seq,
                    "seat": m.seat,
                    "move": m.notation,
                    "think_ms": m.think_ms,
                    "clocks_after": m.clocks_after,
                }
                for m in self.moves
            ],
        }


@dataclass
class RoomSettings:
    """Validated settings of a room."""

    game: Game
    options: dict[str, Any]
    time_control: TimeControl
    illegal_move: str
    grace: float
    games: int

    @classmethod
    def parse(
        cls,
        game_id: str,
        options: Any = None,
        time_control: Any = None,
        illegal_move: str | None = None,
        grace: float | None = None,
        games: int | None = None,
        defaults: dict[str, Any] | None = None,
    ) -> RoomSettings:
        """Validate everything ``create_room`` may carry; raises ``OptionError`` with the reason."""
        defaults = defaults or {}
        try:
            game = get_game(game_id)
        except KeyError as exc:
            raise OptionError(exc.args[0]) from None
        options = {} if options is None else options
        if not isinstance(options, dict):
            raise OptionError("options must be a map of game options")
        game.initial_state(**options)  # validates the game options
        control = TimeControl.parse(time_control if time_control is not None else defaults.get(
            "time_control", {"per_move": 30}))
        policy = illegal_move if illegal_move is not None else defaults.get("illegal_move", "reject")
        if policy not in ILLEGAL_MOVE_POLICIES:
            raise OptionError(f"illegal_move must be one of {', '.join(ILLEGAL_MOVE_POLICIES)}, not {policy!r}")
        grace = float(defaults.get("grace", 30.0) if grace is None else grace)
        if not 0 <= grace <= MAX_GRACE:
            raise OptionError(f"grace must be from 0 to {MAX_GRACE:g} seconds")
        games = 1 if games is None else games
        if not 1 <= games <= MAX_GAMES_PER_ROOM:
            raise OptionError(f"games must be from 1 to {MAX_GAMES_PER_ROOM}")
        return cls(game, dict(options), control, policy, grace, games)


class Room:
    """Seats, spectators, the running game and its clocks."""

    def __init__(
        self,
        name: str,
        settings: RoomSettings,
        creator: str | None = None,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.name = name
        self.settings = settings
        self.game = settings.game
        self.creator = creator
        self.wall_clock = wall_clock
        self.seats: list[str | None] = [None, None]
        self.spectators: set[str] = set()
        self.coords: dict[str, str] = {}
        self.away: dict[int, float] = {}  # seat -> deadline of its grace period
        self.status = "waiting"  # waiting, playing, finished
        self.game_no = 0  # games started so far
        self.state: Any = None
        self.clocks: Clocks | None = None
        self.moves: list[MoveRecord] = []
        self.notations: list[str] = []
        self.record_id = ""
        self.started_at = 0.0
        self.players: list[str] = []
        self.draw_offer: int | None = None
        self.last_result: dict[str, Any] | None = None

    # Queries ----------------------------------------------------------------------------

    @property
    def members(self) -> list[str]:
        """Everybody in the room: seated players, then spectators."""
        return [n for n in self.seats if n is not None] + sorted(self.spectators)

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
        return {
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
        }

    def next_deadline(self) -> float | None:
        """The earliest time at which :meth:`tick` has something to do."""
        times = list(self.away.values())
        if self.status == "playing" and self.clocks is not None:
            deadline = self.clocks.deadline()
            if deadline is not None:
                times.append(deadline)
        return min(times) if times else None

    # Membership ------------------------------------------------------------------------

    def join(self, name: str, coords: str, now: float, role: str = "player", seat: int | None = None,
             msg_id: Any = None) -> Outbox:
        """Take a seat (given or any free) or watch; starts the game when both seats fill."""
        out = Outbox()
        if coords not in COORDS:
            raise ValueError(coords)
        if role not in ("player", "spectator"):
            return out.error(name, ProtocolError("bad_message", "role is 'player' or 'spectator'", msg_id), self.name)
        current = self.seat_of(name)
        if current is not None or name in self.spectators:
            same_role = (role == "spectator" and current is None) or (
                role == "player" and current is not None and seat in (None, current))
            if same_role:
                self.coords[name] = coords
                out.send(name, self._joined(name, current, msg_id))
                self._send_full_state(out, name, now)
                return out
            already = ProtocolError("bad_message", "you are already in this room; leave first", msg_id)
            return out.error(name, already, self.name)
        if role == "spectator":
            self.spectators.add(name)
            self.coords[name] = coords
            out.send(name, self._joined(name, None, msg_id))
            self._send_full_state(out, name, now)
            out.listing_changed = True
            return out
        if self.status == "finished":
            return out.error(name, ProtocolError("game_not_running", f"{self.name} has finished its games; "
                                                  "join as a spectator or create a new room", msg_id), self.name)
        if seat is not None:
            if seat not in (0, 1):
                return out.error(name, ProtocolError("bad_message", "seat is 0 or 1", msg_id), self.name)
            if self.seats[seat] is not None:
                return out.error(name, ProtocolError("seat_taken", f"seat {seat} is taken by {self.seats[seat]}",
                                                      msg_id), self.name)
        else:
            free = [s for s in (0, 1) if self.seats[s] is None]
            if not free:
                return out.error(name, ProtocolError("room_full", f"both seats of {self.name} are taken; "
                                                      "join as a spectator", msg_id), self.name)
            seat = free[0]
        self.seats[seat] = name
        self.coords[name] = coords
        out.listing_changed = True
        out.send(name, self._joined(name, seat, msg_id))
        self._broadcast_seats(out)
        if self.status == "waiting" and all(self.seats) and not self.away:
            out.extend(self._start_game(now))
        return out

    def leave(self, name: str, now: float, msg_id: Any = None) -> Outbox:
        """Leave the room; a player leaving a running game forfeits it."""
        out = Outbox()
        seat = self.seat_of(name)
        if seat is None and name not in self.spectators:
            return out.error(name, ProtocolError("not_in_room", f"you are not in {self.name}", msg_id), self.name)
        if seat is not None and self.status == "playing":
            # no next game starts with a seat that is being emptied
            out.extend(self._finish(Outcome(1 - seat, "the opponent left"), now, start_next=False))
        out.send(name, {"type": "left", "room": self.name, **({"id": msg_id} if msg_id is not None else {})})
        if seat is not None:
            self.seats[seat] = None
            self.away.pop(seat, None)
            self._broadcast_seats(out)
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
        msg = {"type": "player_away", "room": self.name, "seat": seat, "name": name, "grace": self.settings.grace}
        for member in self.members:
            if member != name:
                out.send(member, msg)
        if self.settings.grace == 0:
            out.extend(self.tick(now))
        return out

    def reconnected(self, name: str, coords: str, now: float) -> Outbox:
        """``name`` logged back in: resume the seat and send the full state."""
        out = Outbox()
        seat = self.seat_of(name)
        if seat is None:
            return out
        self.coords[name] = coords
        was_away = self.away.pop(seat, None) is not None
        out.send(name, self._joined(name, seat, None))
        if was_away:
            msg = {"type": "player_back", "room": self.name, "seat": seat, "name": name}
            for member in self.members:
                if member != name:
                    out.send(member, msg)
        self._send_full_state(out, name, now)
        if self.status == "waiting" and all(self.seats) and not self.away:
            out.extend(self._start_game(now))
        return out

    # Play -------------------------------------------------------------------------------

    def move(self, name: str, obj: Any, now: float, msg_id: Any = None) -> Outbox:
        """A player sends a move: check turn, parse in the sender's coordinates, validate, relay."""
        out = self.tick(now)
        seat = self.seat_of(name)
        if seat is None:
            kind = "not_a_player" if name in self.spectators else "not_in_room"
            return out.error(name, ProtocolError(kind, f"you hold no seat in {self.name}", msg_id), self.name)
        if self.status != "playing":
            return out.error(name, ProtocolError("game_not_running", f"no game is running in {self.name}", msg_id),
                             self.name)
        to_move = self.game.to_move(self.state)
        if seat != to_move:
            return out.error(name, ProtocolError("not_your_turn", f"it is seat {to_move}'s turn, not yours", msg_id),
                             self.name)
        try:
            move = self.game.parse_move(obj, self.state, self.coords[name])
            new_state = self.game.apply(self.state, move)
        except IllegalMove as exc:
            text = _short(obj)
            out.error(name, ProtocolError("illegal_move", f"{text}: {exc.reason}", msg_id), self.name)
            if self.settings.illegal_move == "lose":
                out.extend(self._finish(Outcome(1 - seat, f"illegal move by seat {seat} ({text}: {exc.reason})"),
                                        now))
            return out
        self.state = new_state
        outcome = self.game.outcome(new_state)
        next_seat = None if outcome is not None else self.game.to_move(new_state)
        assert self.clocks is not None
        elapsed = self.clocks.switch(now, next_seat)
        clocks = self.clocks.snapshot(now)
        notation = self.game.notation(move)
        seq = len(self.moves) + 1
        self.moves.append(MoveRecord(seq, seat, notation, int(elapsed * 1000), clocks["left"]))
        self.notations.append(notation)
        if self.draw_offer is not None and self.draw_offer != seat:
            self.draw_offer = None  # moving declines the opponent's offer
        forms: dict[str, Any] = {}
        for member in self.members:
            coords = self.coords[member]
            if coords not in forms:
                forms[coords] = self.game.format_move(move, coords)
            msg = {"type": "moved", "room": self.name, "seq": seq, "seat": seat, "move": forms[coords],
                   "notation": notation, "clocks": clocks, "to_move": next_seat}
            if member == name and msg_id is not None:
                msg["id"] = msg_id
            out.send(member, msg)
        if outcome is not None:
            out.extend(self._finish(outcome, now))
        return out

    def legal_moves(self, name: str, msg_id: Any = None) -> Outbox:
        """The legal moves of the seat to move, in the asker's coordinates."""
        out = Outbox()
        if name not in self.coords:
            return out.error(name, ProtocolError("not_in_room", f"you are not in {self.name}", msg_id), self.name)
        if self.status != "playing":
            return out.error(name, ProtocolError("game_not_running", f"no game is running in {self.name}", msg_id),
                             self.name)
        coords = self.coords[name]
        moves = [self.game.format_move(m, coords) for m in self.game.legal_moves(self.state)]
        msg = {"type": "legal_moves", "room": self.name, "moves": moves}
        if msg_id is not None:
            msg["id"] = msg_id
        out.send(name, msg)
        return out

    def send_state(self, name: str, now: float, msg_id: Any = None) -> Outbox:
        """The full state for a member who asks."""
        out = Outbox()
        if name not in self.coords:
            return out.error(name, ProtocolError("not_in_room", f"you are not in {self.name}", msg_id), self.name)
        self._send_full_state(out, name, now, msg_id, always=True)
        return out

    def resign(self, name: str, now: float, msg_id: Any = None) -> Outbox:
        """A player resigns the running game."""
        out = self.tick(now)
        seat = self._player_in_game(out, name, msg_id)
        if seat is None:
            return out
        out.extend(self._finish(Outcome(1 - seat, f"seat {seat} resigned"), now))
        return _tag_reply(out, name, msg_id)

    def offer_draw(self, name: str, now: float, msg_id: Any = None) -> Outbox:
        """Offer a draw; if the opponent already offers one, the game is drawn by agreement."""
        out = self.tick(now)
        seat = self._player_in_game(out, name, msg_id)
        if seat is None:
            return out
        if self.draw_offer == 1 - seat:
            out.extend(self._finish(Outcome(None, "draw agreed"), now))
            return _tag_reply(out, name, msg_id)
        self.draw_offer = seat
        for member in self.members:
            out.send(member, {"type": "draw_offered", "room": self.name, "seat": seat})
        return _tag_reply(out, name, msg_id)

    def chat(self, name: str, text: str, msg_id: Any = None) -> Outbox:
        """Relay a chat line to everybody in the room."""
        out = Outbox()
        if name not in self.coords:
            return out.error(name, ProtocolError("not_in_room", f"you are not in {self.name}", msg_id), self.name)
        text = text.strip()
        if not text or len(text) > MAX_CHAT or any(ord(ch) < 32 and ch not in "\t" for ch in text):
            return out.error(name, ProtocolError("bad_message", f"chat text must be 1 to {MAX_CHAT} printable "
                                                  "characters", msg_id), self.name)
        for member in self.members:
            out.send(member, {"type": "chat", "room": self.name, "from": name, "text": text})
        return _tag_reply(out, name, msg_id)

    def tick(self, now: float) -> Outbox:
        """Apply what time decides: a flag fall, or a grace period that ran out."""
        out = Outbox()
        if self.status == "playing" and self.clocks is not None and self.clocks.flagged(now):
            seat = self.clocks.running
            assert seat is not None
            out.extend(self._finish(Outcome(1 - seat, f"seat {seat} ran out of time"), now))
        for seat, deadline in sorted(self.away.items()):
            if now < deadline:
                continue
            if self.status == "playing":
                out.extend(self._finish(Outcome(1 - seat, f"seat {seat} disconnected"), now))
            if seat in self.away and now >= self.away[seat]:
                # nobody came back in time: the seat is free again
                del self.away[seat]
                name = self.seats[seat]
                self.seats[seat] = None
                if name is not None:
                    self.coords.pop(name, None)
                    out.vacated.append(name)
                self._broadcast_seats(out)
                out.listing_changed = True
        return out

    def abort(self, now: float, reason: str = "server shut down") -> Outbox:
        """End a running game without a result (the server is stopping)."""
        if self.status != "playing":
            return Outbox()
        return self._finish(Outcome(None, reason), now, status="aborted")

    # Internals --------------------------------------------------------------------------

    def _player_in_game(self, out: Outbox, name: str, msg_id: Any) -> int | None:
        seat = self.seat_of(name)
        if seat is None:
            out.error(name, ProtocolError("not_a_player", f"you hold no seat in {self.name}", msg_id), self.name)
            return None
        if self.status != "playing":
            out.error(name, ProtocolError("game_not_running", f"no game is running in {self.name}", msg_id),
                      self.name)
            return None
        return seat

    def _joined(self, name: str, seat: int | None, msg_id: Any) -> dict[str, Any]:
        msg = {"type": "joined", "room": self.name, "role": "spectator" if seat is None else "player",
               "seat": seat, "settings": self.listing()}
        if msg_id is not None:
            msg["id"] = msg_id
        return msg

    def _broadcast_seats(self, out: Outbox) -> None:
        for member in self.members:
            out.send(member, {"type": "seated", "room": self.name, "seats": list(self.seats)})

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
        self.status = "playing"
        self.players = [n or "" for n in self.seats]
        self.moves = []
        self.notations = []
        self.draw_offer = None
        self.record_id = secrets.token_hex(6)
        self.started_at = self.wall_clock()
        self.clocks = Clocks(self.settings.time_control, self.game.to_move(self.state), now)
        self.game_options = options
        for member in self.members:
            self._send_full_state(out, member, now)
        out.listing_changed = True
        return out

    def _send_full_state(self, out: Outbox, name: str, now: float, msg_id: Any = None, always: bool = False) -> None:
        if self.status != "playing" and not always:
            return
        coords = self.coords[name]
        msg: dict[str, Any] = {
            "type": "game_start" if self.status == "playing" else "room_state",
            "room": self.name,
            "game": self.game.id,
            "game_no": self.game_no,
            "players": list(self.players if self.status == "playing" else self.seats),
            "seat": self.seat_of(name),
            "status": self.status,
        }
        if self.state is not None and self.clocks is not None:
            msg.update({
                "state": self.game.encode_state(self.state, coords),
                "to_move": None if self.game.outcome(self.state) else self.game.to_move(self.state),
                "clocks": self.clocks.snapshot(now),
                "moves": list(self.notations),
                "options": self.game_options,
                "record": self.record_id,
            })
        if self.last_result is not None and self.status != "playing":
            msg["last_result"] = self.last_result
        if msg_id is not None:
            msg["id"] = msg_id
        out.send(name, msg)

    def _finish(self, outcome: Outcome, now: float, status: str = "finished", start_next: bool = True) -> Outbox:
        out = Outbox()
        assert self.clocks is not None
        self.clocks.stop(now)
        clocks = self.clocks.snapshot(now)
        record = GameRecord(
            id=self.record_id, room=self.name, game=self.game.id, options=self.game_options,
            time_control=self.settings.time_control.to_json(), players=list(self.players),
            moves=list(self.moves), winner=outcome.winner, reason=outcome.reason, status=status,
            started_at=self.started_at, ended_at=self.wall_clock(),
        )
        out.records.append(record)
        more = status == "finished" and self.game_no < self.settings.games
        self.status = "waiting" if more else "finished"
        self.last_result = {"winner": outcome.winner, "reason": outcome.reason, "record": self.record_id}
        msg = {"type": "game_over", "room": self.name, "winner": outcome.winner, "reason": outcome.reason,
               "players": list(self.players), "record": self.record_id, "clocks": clocks, "next_game": more,
               "game_no": self.game_no}
        for member in self.members:
            out.send(member, msg)
        out.listing_changed = True
        if more and start_next and all(self.seats) and not self.away:
            out.extend(self._start_game(now))
        return out


def _tag_reply(out: Outbox, name: str, msg_id: Any) -> Outbox:
    """Mark the requester's copy of the first event it caused as the reply to its request."""
    if msg_id is not None:
        for index, (member, msg) in enumerate(out.messages):
            if member == name and msg["type"] != "error":
                out.messages[index] = (member, {**msg, "id": msg_id})
                break
    return out


def _short(obj: Any) -> str:
    text = obj if isinstance(obj, str) else repr(obj)
    return text if len(text) <= 60 else text[:57] + "..."
