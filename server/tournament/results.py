"""A tournament game's result as the tournament mathematics reads it.

A :class:`ScoredGame` is what the director hands back to the scheduling,
standings and rating functions once a game is over: who sat in seat 0
(``white``) and seat 1 (``black``), the result in the usual ``"1-0"`` notation,
the round, and whether it was decided without being played:

* a **forfeit** (``forfeit=True``): one entrant did not play (absent, failed to
  connect, withdrew). The result names the present entrant as the winner; it
  scores like a win and a loss but is not a played game, so Elo and SPRT ignore
  it. ``"0-0"`` with ``forfeit=True`` is a double forfeit: both lose.
* a **bye** (``black=None``): a Swiss round with an odd number of entrants
  leaves one entrant without an opponent; each bye game slot scores as a win
  (1 point) and is not a played game either.

Results are plain values; ``to_json``/``from_json`` give the JSON form the
director stores.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

RESULTS: dict[str, tuple[float, float]] = {
    "1-0": (1.0, 0.0),
    "0-1": (0.0, 1.0),
    "1/2-1/2": (0.5, 0.5),
    "0-0": (0.0, 0.0),
}
"""Result notation -> (white's points, black's points). ``"0-0"`` only as a double forfeit."""

_ALIASES = {"½-½": "1/2-1/2", "draw": "1/2-1/2", "=": "1/2-1/2"}


def normalise_result(text: str) -> str:
    """The canonical notation of a result (``"½-½"`` -> ``"1/2-1/2"``); ``ValueError`` on anything else."""
    if isinstance(text, str):
        key = text.strip()
        key = _ALIASES.get(key.lower(), key)
        if key in RESULTS:
            return key
    raise ValueError(f"{text!r} is not a game result; results are 1-0, 0-1, 1/2-1/2 (or 0-0 for a double forfeit)")


@dataclass(frozen=True)
class ScoredGame:
    """One finished (or forfeited, or bye) game of a tournament.

    ``white`` is seat 0 and ``black`` seat 1 whatever the game calls its sides;
    ``black`` is ``None`` for a bye. ``round`` is the schedule's round number
    (1-based; Swiss pairing needs it). ``duration`` is the game's length in
    seconds, used only to estimate the time left.
    """

    white: str
    black: str | None
    result: str
    round: int | None = None
    forfeit: bool = False
    duration: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.white, str) or not self.white:
            raise ValueError(f"a game result needs the white entrant's name, not {self.white!r}")
        if self.black is not None and (not isinstance(self.black, str) or not self.black):
            raise ValueError(f"the black entrant's name must be a non-empty string or None (bye), not {self.black!r}")
        if self.black == self.white:
            raise ValueError(f"{self.white!r} cannot play against itself")
        object.__setattr__(self, "result", normalise_result(self.result))
        if self.black is None and self.result != "1-0":
            raise ValueError(f"a bye for {self.white!r} is recorded as 1-0, not {self.result}")
        if self.result == "0-0" and not self.forfeit:
            raise ValueError("0-0 is only a double forfeit: set forfeit=True")
        if self.round is not None and (isinstance(self.round, bool) or not isinstance(self.round, int)
                                       or self.round < 1):
            raise ValueError(f"round must be a positive integer, not {self.round!r}")
        if self.duration is not None and not (isinstance(self.duration, (int, float)) and self.duration >= 0):
            raise ValueError(f"duration must be a number of seconds >= 0, not {self.duration!r}")

    @classmethod
    def bye(cls, entrant: str, round: int | None = None) -> ScoredGame:
        """A bye game slot for ``entrant``: scores 1 point, not a played game."""
        return cls(entrant, None, "1-0", round=round)

    @property
    def is_bye(self) -> bool:
        """True for a bye (no opponent)."""
        return self.black is None

    @property
    def is_played(self) -> bool:
        """True when the game was actually played: neither a forfeit nor a bye (what Elo and SPRT count)."""
        return not self.forfeit and self.black is not None

    @property
    def players(self) -> tuple[str, ...]:
        """The entrants in the game: ``(white, black)``, or ``(white,)`` for a bye."""
        return (self.white,) if self.black is None else (self.white, self.black)

    def score(self, entrant: str) -> float:
        """Points ``entrant`` scored in this game; ``KeyError`` if it did not take part."""
        white_points, black_points = RESULTS[self.result]
        if entrant == self.white:
            return white_points
        if entrant == self.black:
            return black_points
        raise KeyError(f"{entrant!r} did not play {self.white} - {self.black}")

    def opponent(self, entrant: str) -> str | None:
        """The other entrant (``None`` for a bye); ``KeyError`` if ``entrant`` did not take part."""
        if entrant == self.white:
            return self.black
        if entrant == self.black:
            return self.white
        raise KeyError(f"{entrant!r} did not play {self.white} - {self.black}")

    def to_json(self) -> dict[str, Any]:
        """A JSON-compatible dict; ``from_json`` reads it back."""
        return {"white": self.white, "black": self.black, "result": self.result, "round": self.round,
                "forfeit": self.forfeit, "duration": self.duration}

    @classmethod
    def from_json(cls, obj: Any) -> ScoredGame:
        """A result from ``to_json``'s form; ``ValueError`` naming what is wrong."""
        if not isinstance(obj, dict) or "white" not in obj or "result" not in obj:
            raise ValueError("a game result is an object with white, black, result (and round, forfeit, duration)")
        unknown = set(obj) - {"white", "black", "result", "round", "forfeit", "duration"}
        if unknown:
            raise ValueError(f"unknown field(s) in a game result: {', '.join(sorted(unknown))}")
        return cls(obj["white"], obj.get("black"), obj["result"], round=obj.get("round"),
                   forfeit=bool(obj.get("forfeit", False)), duration=obj.get("duration"))
