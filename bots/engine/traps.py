"""Drawing traps: among moves that hold a proven draw, the one a fallible opponent most likely loses after.

Against a perfect opponent every drawing move is worth the same, but not
against one that searches a few plies and picks among the rest. The Quarto
and Magnetic Cave masters classify the opponent's replies with
:func:`solved_kind` and score their drawing moves by what the replies leave.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .search import MATE, Searcher, table_move_at

SHALLOW = 3
"""A loss that shows within this many plies after a reply is one a 4-ply search sees and avoids."""
LOST, DRAWN, QUICK, DEEP, TIME_UP = (object() for _ in range(5))
"""What :func:`solved_kind` finds: lost; drawn; won within ``SHALLOW`` plies, or later; or the
clock ran out first."""
QUICK_TIE_BREAK = 0.01
"""Between equal chances, a little for more quickly losing replies (a weaker opponent misses some)."""


def solved_kind(searcher: Searcher, position: np.ndarray, plies: int, deadline: float) -> object:
    """How a running ``position`` at most ``plies`` from the end goes for the side to move, with best play.

    ``LOST``, ``DRAWN``, ``QUICK`` (a win within ``SHALLOW`` plies) or
    ``DEEP`` (a later win); ``TIME_UP`` when the clock (or the searcher's node
    limit) ran out first. Two null-window searches answer this far quicker
    than an exact value.
    """
    value = searcher.window(position, plies, -1, 1, deadline)  # win, draw or loss?
    if value is None:
        return TIME_UP
    if value <= 0:
        return LOST if value < 0 else DRAWN
    # Mate scores are proven distances, so "at least MATE - SHALLOW" means "a win within SHALLOW plies"
    # even when the table answers from a deeper search.
    quick = searcher.window(position, min(plies, SHALLOW), MATE - SHALLOW - 1, MATE - SHALLOW, deadline)
    if quick is None:
        return TIME_UP
    return QUICK if quick >= MATE - SHALLOW else DEEP


def trap_chance(replies: int, deep: int, quick: int) -> float:
    """The chance that an opponent who avoids quick losses, and picks at random otherwise, loses.

    ``deep`` of its ``replies`` lose too late for a shallow search to see,
    ``quick`` soon enough. Ties go to more quick losses (a weaker opponent
    misses some of those).
    """
    if replies <= quick:
        return 1.0 + QUICK_TIE_BREAK  # every reply loses soon: a win, which the search finds first
    return deep / (replies - quick) + QUICK_TIE_BREAK * quick / replies


def settle(
    searcher: Searcher, position: np.ndarray, plies: int, deadline: float,
    generate_moves: Callable[[np.ndarray, np.ndarray], int], key: Callable[[np.ndarray], int], max_moves: int,
) -> tuple[int, int] | None:
    """Near the end, one null-window search to it: ``(verdict, move)``, or ``None`` if it did not finish.

    The verdict is above 0 for a win, 0 for a draw, below 0 for a loss (a
    bound, as null-window searches give); the move is the one that search
    found best at the root (its table entry), ``None`` too should the table no
    longer hold a move that ``generate_moves`` lists. "Win, draw or loss?"
    this way takes a fraction of the time of an exact value.
    """
    verdict = searcher.window(position, plies, -1, 1, deadline)
    if verdict is None:
        return None
    move = table_move_at(searcher.table, np.uint64(key(position)))
    moves = np.zeros(max_moves, np.int32)
    if move not in moves[: generate_moves(position, moves)]:
        return None
    return verdict, move
