"""How long a compiled engine may think about one move, given the bot's :class:`~bots.base.TimeBudget`."""

from __future__ import annotations

from bots.base import MIN_THINK_SECONDS, TimeBudget

MARGIN = 0.15
"""Seconds kept back from a clock or per-move limit, to stop the search and send the move."""
MARGIN_SHARE = 0.25
"""With a short per-move limit, keep back this share of it instead (0.05 s of 0.2 s)."""


def thinking_seconds(budget: TimeBudget | None, default: float, overshoot: float = 0.0) -> float:
    """Seconds to search: ``budget`` less a margin, or ``default`` when nothing limits the move.

    The margin is :data:`MARGIN`, or a quarter of a short per-move limit, so
    that a 0.2 s move still gets 0.15 s of search rather than the bare minimum.
    ``overshoot`` is how long the engine may go on past its deadline (work it
    cannot interrupt, the nodes between two looks at the clock): it comes off
    too, down to the least time a move is ever given.
    """
    if budget is None:
        return default
    margin = MARGIN
    if budget.per_move is not None:
        margin = min(margin, MARGIN_SHARE * budget.per_move)
    seconds = budget.move_deadline_seconds(margin)
    if seconds is None:
        return default
    return max(seconds - overshoot, min(seconds, MIN_THINK_SECONDS))
