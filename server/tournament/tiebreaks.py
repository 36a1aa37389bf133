"""Tie-breaks: how the standings order entrants equal on points.

The usual ones of the FIDE Handbook's tie-break regulations (``TIEBREAKS``),
computed from final points:

``sonneborn-berger``
    the sum, over the entrant's games, of its score in the game times the
    opponent's points: beating strong entrants counts more (round robins).
``buchholz``
    the sum of the opponents' points, one term per meeting (a round's
    pairing, or each game when results carry no round) (Swiss).
``median-buchholz``
    Buchholz without its highest and lowest terms (when there are at least 3).

Forfeited games count in the tie-breaks as their result; a bye has no
opponent and adds nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .results import ScoredGame

TIEBREAKS: dict[str, str] = {
    "sonneborn-berger": "sum of (score x opponent's points) over the games",
    "buchholz": "sum of the opponents' points",
    "median-buchholz": "Buchholz without the highest and lowest opponent",
    "none": "no tie-break: equal points share a rank",
}
"""Tie-break name -> description."""

TIEBREAK_LABELS = {"sonneborn-berger": "SB", "buchholz": "Buch", "median-buchholz": "MBuch", "none": "-"}
"""Tie-break name -> its column heading in the standings table."""


def default_tiebreak(format: str) -> str:
    """The usual tie-break of a tournament format: Buchholz for swiss, Sonneborn-Berger otherwise."""
    return "buchholz" if format == "swiss" else "sonneborn-berger"


def tiebreak_value(kind: str, name: str, results: Sequence[ScoredGame], points: dict[str, float]) -> float:
    """``name``'s tie-break ``kind`` (one of ``TIEBREAKS``) over ``results``, given every entrant's final points."""
    if kind == "none":
        return 0.0
    if kind == "sonneborn-berger":
        # Sonneborn-Berger (FIDE Handbook, tie-break regulations): sum of (result x opponent's final score)
        return sum(r.score(name) * points[str(r.opponent(name))]
                   for r in results if name in r.players and not r.is_bye)
    meetings: dict[Any, float] = {}
    for k, r in enumerate(results):
        if name in r.players and not r.is_bye:
            opponent = str(r.opponent(name))
            meetings[(r.round, opponent) if r.round is not None else k] = points[opponent]
    terms = sorted(meetings.values())
    if kind == "median-buchholz" and len(terms) >= 3:
        terms = terms[1:-1]  # Median Buchholz (FIDE Handbook, tie-break regulations): cut the best and worst
    return float(sum(terms))
