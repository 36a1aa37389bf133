"""A pairing: two entrants meeting in a round, and the error of an event that cannot be scheduled.

Shared by the fixed formats (``schedule``) and Swiss pairing (``swiss``), which
both produce :class:`Pairing` values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class ScheduleError(ValueError):
    """A tournament that cannot be scheduled as asked (bad spec, or results that do not fit)."""


@dataclass(frozen=True)
class Pairing:
    """Two entrants meeting in a round; ``white`` takes seat 0 in the pairing's first game.

    ``black`` is ``None`` when ``white`` has no opponent this round: a bye in a
    Swiss event (it scores, see :meth:`Schedule.bye_results`), a rest in a
    round robin (it does not). ``board`` numbers the pairings of a round from 1.
    """

    round: int
    board: int
    white: str
    black: str | None

    @property
    def is_bye(self) -> bool:
        """True when the entrant has no opponent this round."""
        return self.black is None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values."""
        return {"round": self.round, "board": self.board, "white": self.white, "black": self.black}
