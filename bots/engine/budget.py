"""How long a compiled engine may think about one move, given the bot's :class:`~bots.base.TimeBudget`."""

from __future__ import annotations

from bots.base import TimeBudget

MARGIN = 0.15
"""Seconds kept back from a clock or per-move limit, to stop the search and send the move."""
MARGIN_SHARE = 0.25
"""With a short per-move limit, keep back this share of it instead (0.05 s of 0.2 s)."""


def thinking_seconds(budget: TimeBudget | None, default: float) -> float:
    """Seconds to search: ``budget`` less a margin, or ``default`` when nothing limits the move.

    The margin is :data:`MARGIN`, or a quarter of a short per-move limit, so
    that a 0.2 s move still gets 0.15 s of search rather than the bare minimum.
    """
    if budget is None:
        return default
    margin = MARGIN
    if budget.per_move is not None:
        margin = min(margin, MARGIN_SHARE * budget.per_move)
    seconds = budget.move_deadline_seconds(margin)
    return default if seconds is None else seconds
