"""Square geometry shared by the engines on square boards (Santorini, Amazons).

Squares are ``row * size + col`` with row 0 at the bottom, as in the reference rules.
"""

from __future__ import annotations

import numpy as np

DIRECTIONS = ((-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1))
"""``(dcol, drow)`` per direction; direction ``7 - d`` is the opposite of ``d``."""


def neighbour_table(size: int) -> np.ndarray:
    """``table[square, d]``: the square next to ``square`` in direction ``d``, or -1 off the board."""
    table = np.full((size * size, 8), -1, np.int64)
    for square in range(size * size):
        row, col = divmod(square, size)
        for d, (dc, dr) in enumerate(DIRECTIONS):
            if 0 <= col + dc < size and 0 <= row + dr < size:
                table[square, d] = (row + dr) * size + col + dc
    return table
