"""Bit tricks shared by the bitboard engines (compiled, on ``uint64`` words).

Kept apart from any one game so that each engine module holds only its own game.
"""

from __future__ import annotations

import numpy as np
from numba import njit

ONE = np.uint64(1)
ZERO = np.uint64(0)
M1 = np.uint64(0x5555555555555555)
M2 = np.uint64(0x3333333333333333)
M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
H01 = np.uint64(0x0101010101010101)
S1, S2, S4, S56 = np.uint64(1), np.uint64(2), np.uint64(4), np.uint64(56)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
S27, S30, S31 = np.uint64(27), np.uint64(30), np.uint64(31)


@njit(cache=True)
def popcount(x: np.uint64) -> int:
    """Number of set bits of a ``uint64`` (LLVM turns the pattern into one ``popcnt``)."""
    x = x - ((x >> S1) & M1)
    x = (x & M2) + ((x >> S2) & M2)
    x = (x + (x >> S4)) & M4
    return int((x * H01) >> S56)


@njit(cache=True)
def lowest_index(x: np.uint64) -> int:
    """Index of the lowest set bit of a non-zero ``uint64``."""
    return popcount((x & (~x + ONE)) - ONE)


@njit(cache=True)
def list_squares(x: np.uint64, moves: np.ndarray) -> int:
    """Write the indexes of ``x``'s set bits into ``moves``, lowest first; returns how many."""
    n = 0
    while x:
        moves[n] = lowest_index(x)
        x &= x - ONE
        n += 1
    return n


@njit(cache=True)
def mix(x: np.uint64) -> np.uint64:
    """The splitmix64 finaliser: a bijection of ``uint64`` that scatters every input bit."""
    x = (x ^ (x >> S30)) * MIX1
    x = (x ^ (x >> S27)) * MIX2
    return x ^ (x >> S31)
