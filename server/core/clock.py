"""Clocks kept by the server: a fixed time per move, or a game clock with increment, and a time margin.

A plain object driven by the time it is given (``now``, monotonic seconds), so
it is tested without waiting.

The margin is cutechess-cli's ``timemargin``: a move that arrives less than ``margin`` seconds after the mover's
clock ran out still counts (the flag falls only when the margin is spent too). What the move overran is charged as
cutechess charges it: a per-move clock starts full again at the next move; a game clock is left that far below zero
(the overrun is paid back out of the next increments, and the margin is not a fresh allowance at every move). The
clocks sent to players never show less than zero.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from protocol.games import OptionError

MAX_SECONDS = 24 * 3600.0
MAX_MARGIN = 60.0  # seconds: a margin is for the lag of a loaded machine or a bot's fixed budget, not a second clock


def _seconds(obj: dict[str, Any], key: str, low: float, high: float = MAX_SECONDS) -> float:
    value = obj[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise OptionError(f"time_control.{key} must be a number of seconds from {low:g} to {high:g}")
    return float(value)


@dataclass(frozen=True)
class TimeControl:
    """How much time a player has: ``per_move`` seconds for every move, or ``initial``
    seconds for the game plus ``increment`` after each move; neither means untimed. ``margin``: seconds a move
    may arrive after the clock ran out without losing (cutechess-cli's ``timemargin``; see the module's text)."""

    per_move: float | None = None
    initial: float | None = None
    increment: float = 0.0
    margin: float = 0.0

    @classmethod
    def parse(cls, obj: Any) -> TimeControl:
        """Validate a ``time_control`` option: ``{"per_move": 30}``,
        ``{"initial": 300, "increment": 2}`` or ``{"untimed": true}``; a timed one may add ``"margin": S``."""
        accepted = ('time_control is {"per_move": S}, {"initial": S, "increment": S} or {"untimed": true}, and a '
                    f'timed one may add "margin": S (0 to {MAX_MARGIN:g} seconds)')
        if not isinstance(obj, dict):
            raise OptionError(accepted)
        keys = set(obj) - {"margin"}
        if keys == {"untimed"} and obj["untimed"] is True:
            if "margin" in obj:
                raise OptionError("time_control.margin needs a clock: an untimed game has no time to run out")
            return cls()
        margin = _seconds(obj, "margin", 0.0, MAX_MARGIN) if "margin" in obj else 0.0
        if keys == {"per_move"}:
            return cls(per_move=_seconds(obj, "per_move", 0.05), margin=margin)
        if keys in ({"initial"}, {"initial", "increment"}):
            increment = _seconds(obj, "increment", 0.0, 3600.0) if "increment" in obj else 0.0
            return cls(initial=_seconds(obj, "initial", 0.1), increment=increment, margin=margin)
        raise OptionError(accepted)

    @property
    def timed(self) -> bool:
        """True when a clock can run out."""
        return self.per_move is not None or self.initial is not None

    def to_json(self) -> dict[str, Any]:
        """The wire form (the same shapes ``parse`` accepts; ``margin`` only when there is one)."""
        margin = {"margin": self.margin} if self.margin else {}
        if self.per_move is not None:
            return {"per_move": self.per_move, **margin}
        if self.initial is not None:
            return {"initial": self.initial, "increment": self.increment, **margin}
        return {"untimed": True}

    @functools.cached_property
    def wire(self) -> dict[str, Any]:
        """:meth:`to_json`, made once (it goes into every clock snapshot; never changed by its readers)."""
        return self.to_json()

    def describe(self) -> str:
        """Short text such as ``30s/move``, ``5m+2s`` or ``30s/move, margin 3s``."""
        margin = f", margin {self.margin:g}s" if self.margin else ""
        if self.per_move is not None:
            return f"{self.per_move:g}s/move{margin}"
        if self.initial is not None:
            minutes = self.initial / 60
            base = f"{minutes:g}m" if self.initial >= 60 and self.initial % 60 == 0 else f"{self.initial:g}s"
            return f"{base}+{self.increment:g}s{margin}"
        return "untimed"


class Clocks:
    """Both seats' clocks for one game."""

    __slots__ = ("control", "remaining", "running", "turn_started", "final", "_left_after")

    def __init__(self, control: TimeControl, to_move: int | None, now: float) -> None:
        self.control = control
        self.remaining = [control.initial or 0.0, control.initial or 0.0]
        self.running: int | None = to_move
        self.turn_started = now
        self.final: list[float | None] | None = None  # what was left when the game ended
        self._left_after: dict[int | None, tuple[Any, Any]] = {}  # per-move clocks: the snapshot's left, per next seat

    @classmethod
    def restored(cls, control: TimeControl, left: list[float | None] | None) -> Clocks:
        """Stopped clocks with ``left`` seconds per seat (as stored after the last move); :meth:`start` runs them."""
        clocks = cls(control, None, 0.0)
        if left is not None and control.initial is not None:
            clocks.remaining = [float(v) if v is not None else control.initial for v in left]
        return clocks

    def start(self, seat: int, now: float) -> None:
        """Start ``seat``'s clock (its turn begins now)."""
        self.running = seat
        self.turn_started = now
        self.final = None

    def left(self, seat: int, now: float) -> float | None:
        """Seconds ``seat`` has left at ``now`` (this move's time for per-move clocks)."""
        return self.both_left(now)[seat]

    def both_left(self, now: float) -> tuple[float | None, float | None]:
        """:meth:`left` of seat 0 and of seat 1, in one call (every move's snapshot asks for both)."""
        if self.final is not None:
            return self.final[0], self.final[1]
        control, running = self.control, self.running
        if control.per_move is not None:
            full = control.per_move
            if running is None:
                return full, full
            spent = max(0.0, full - (now - self.turn_started))
            return (spent, full) if running == 0 else (full, spent)
        if control.initial is not None:
            first, second = self.remaining
            if running == 0:
                first -= now - self.turn_started
            elif running == 1:
                second -= now - self.turn_started
            return max(0.0, first), max(0.0, second)
        return None, None

    def deadline(self) -> float | None:
        """When the seat to move has run out of time, its margin included (monotonic seconds), or None."""
        if self.running is None:
            return None
        if self.control.per_move is not None:
            return self.turn_started + self.control.per_move + self.control.margin
        if self.control.initial is not None:
            return self.turn_started + self.remaining[self.running] + self.control.margin
        return None

    def flagged(self, now: float) -> bool:
        """True when the seat to move has run out of time and of its margin."""
        deadline = self.deadline()
        return deadline is not None and now >= deadline

    def switch(self, now: float, next_seat: int | None) -> float:
        """The mover has moved: charge its time (a game clock may go below zero by what the margin allowed), add the
        increment, start ``next_seat``.

        Returns the seconds the move took."""
        elapsed = now - self.turn_started
        if self.running is not None and self.control.initial is not None:
            self.remaining[self.running] = self._charged(self.remaining[self.running], elapsed)
            self.remaining[self.running] += self.control.increment
        self.running = next_seat
        self.turn_started = now
        return elapsed

    def switched(self, now: float, next_seat: int | None) -> tuple[float, dict[str, Any]]:
        """:meth:`switch`, then :meth:`snapshot` at the same ``now``, in one call (every move asks for both). A per-move
        clock's snapshot then depends on nothing but who is to move (nobody has spent anything yet): it is made once
        for each seat, as :meth:`snapshot` makes it, and copied after that."""
        control = self.control
        if control.per_move is None or control.initial is not None or self.final is not None:
            elapsed = self.switch(now, next_seat)
            return elapsed, self.snapshot(now)
        elapsed = now - self.turn_started
        self.running = next_seat
        self.turn_started = now
        left = self._left_after.get(next_seat)
        if left is None:
            snapshot = self.snapshot(now)
            self._left_after[next_seat] = tuple(snapshot["left"])  # type: ignore[assignment]
            return elapsed, snapshot
        return elapsed, {"left": list(left), "running": next_seat, "control": control.wire}

    def stop(self, now: float) -> None:
        """Stop the clocks at the end of a game, charging the mover's time; ``left`` then says what was left."""
        final = list(self.both_left(now))
        if self.running is not None and self.control.initial is not None:
            self.remaining[self.running] = self._charged(self.remaining[self.running], now - self.turn_started)
        self.running = None
        self.turn_started = now
        self.final = final

    def _charged(self, remaining: float, elapsed: float) -> float:
        """A game clock's time after a move of ``elapsed`` seconds: never below what the margin allows."""
        return max(-self.control.margin, remaining - elapsed)

    def snapshot(self, now: float) -> dict[str, Any]:
        """Wire form: seconds left per seat (rounded to ms), which is running, and the control."""
        first, second = self.both_left(now)
        # each seat's time rounded to the millisecond, inline (a snapshot is made every move); a whole number of
        # seconds, as a per-move clock not running shows, is that already: round, which is slow, is left out for it
        if first is not None and not (type(first) is float and first.is_integer()):
            first = round(first, 3)
        if second is not None and not (type(second) is float and second.is_integer()):
            second = round(second, 3)
        return {
            "left": [first, second],
            "running": self.running,
            "control": self.control.wire,
        }
