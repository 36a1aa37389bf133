"""The field's 12-stone opening book: every Connect Four position of 12 stones, exact with its distance.

The book is ``book_12ply_distances.dat`` of the ``bitbully-databases`` package (Markus Thill's BitBully,
MIT licence), a declared dependency of Plyhall; this module is our own reader of it. The file is a
sorted run of 5-byte entries: a big-endian signed 32-bit key and a signed byte.

- The key is the position's Huffman code: columns left to right, each from the bottom up, ``10`` for a
  stone of the first player, ``11`` for one of the second, ``0`` closing the column; then one ``0``.
  Twelve stones make exactly 32 bits, read as a signed number (the file's sort order).
- Only one of a position and its mirror image is stored: a lookup tries both.
- Only positions where the first player is to move and cannot win at once are stored; a position
  missing from the book is one the first player wins with its next stone.
- The byte is ``0`` for a draw, else ``±(100 - plies)``: the side to move wins (``+``) or loses
  (``-``) after ``plies`` more stones with best play.

:func:`field_score` turns that into the solver's score (:mod:`~bots.engine.connect4.solver`:
22 less the winner's stones, negative for a loss). Loaded, the book takes 21 MB (keys as ``int32``,
values as ``int8``) and loads in well under a second (docs/ENGINES.md).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import NamedTuple

import numpy as np
from numba import njit

from .position import CELLS, HEIGHT, S1, WIDTH, bottom_square, column_mask, playable, winning_squares

BOOK_STONES = 12
"""The stones of every position in the book."""
NOT_IN_BOOK = -128
"""What :func:`field_score` returns for a position the book does not hold."""
ENTRY = np.dtype([("key", ">i4"), ("value", "i1")])
"""One entry of the file."""
ENTRIES = 4_200_899
"""Entries of ``book_12ply_distances.dat`` (its documentation's figure): a file of another size is refused."""


class FieldBook(NamedTuple):
    """The loaded book: sorted keys (Huffman codes) and their stored values."""

    keys: np.ndarray
    values: np.ndarray


def book_path() -> Path:
    """Where ``bitbully-databases`` installed the 12-stone book with distances."""
    try:
        from bitbully_databases import BitBullyDatabases
    except ImportError as error:  # a declared dependency, so only a broken install gets here
        raise ImportError("Connect Four's opening book comes from the package bitbully-databases, which is not "
                          "installed: pip install bitbully-databases (or reinstall plyhall)") from error

    return Path(BitBullyDatabases.get_database_path("12-ply-dist"))


def read_field_book(path: Path) -> FieldBook:
    """The book in the file at ``path``; ``ValueError`` when the file is not that book."""
    size = path.stat().st_size
    if size != ENTRIES * ENTRY.itemsize:
        raise ValueError(f"{path} has {size} bytes; the 12-stone book with distances has "
                         f"{ENTRIES * ENTRY.itemsize} ({ENTRIES} entries of {ENTRY.itemsize} bytes)")
    raw = np.fromfile(path, dtype=ENTRY)
    keys = raw["key"].astype(np.int32)
    if np.any(keys[1:] <= keys[:-1]):
        raise ValueError(f"{path}: the keys are not in ascending order, so it is not the book")
    return FieldBook(keys, raw["value"].astype(np.int8))


@cache
def field_book() -> FieldBook:
    """The installed book, read once a process (bots and analysis workers only: the server never loads it)."""
    return read_field_book(book_path())


def no_book() -> FieldBook:
    """An empty book: the solver then searches every position to the end."""
    return FieldBook(np.zeros(0, np.int32), np.zeros(0, np.int8))


@njit(cache=True)
def huffman_code(first: np.uint64, mask: np.uint64, mirrored: bool) -> int:
    """The book's key of a position of 12 stones: ``first`` holds the first player's stones; ``mirrored``
    codes the mirror image. The 32 bits come back as a signed number."""
    code = 0
    for index in range(WIDTH):
        column = WIDTH - 1 - index if mirrored else index
        for row in range(HEIGHT):
            bit = np.uint64(1) << np.uint64(7 * column + row)
            if not mask & bit:
                break
            code = (code << 2) | (2 if first & bit else 3)
        code <<= 1  # the column's end
    code <<= 1  # the final 0
    return code - (1 << 32) if code >= 1 << 31 else code


@njit(cache=True)
def find_key(keys: np.ndarray, code: int) -> int:
    """The index of ``code`` in the sorted ``keys``, or -1."""
    index = np.searchsorted(keys, np.int32(code))
    if index < len(keys) and keys[index] == code:
        return index
    return -1


@njit(cache=True)
def field_score(keys: np.ndarray, values: np.ndarray, position: np.uint64, mask: np.uint64) -> int:
    """The solver's score of a 12-stone position (the first player to move, ``position`` its stones), or
    :data:`NOT_IN_BOOK`; the caller makes sure the side to move cannot win at once (such positions are
    left out of the book)."""
    index = find_key(keys, huffman_code(position, mask, False))
    if index < 0:
        index = find_key(keys, huffman_code(position, mask, True))
        if index < 0:
            return NOT_IN_BOOK
    value = int(values[index])
    if value == 0:
        return 0
    plies = 100 - abs(value)
    empty_after = CELLS - BOOK_STONES - plies  # squares still empty once the game is over
    score = empty_after // 2 + 1  # the winner's unplayed stones, and the winning one
    return score if value > 0 else -score


@njit(cache=True)
def parent_bound(keys: np.ndarray, values: np.ndarray, position: np.uint64, mask: np.uint64) -> int:
    """A lower bound on the score of a 13-stone position (the second player to move, ``position`` its stones)
    from its parents in the book (the first player's top stone taken back): a parent is worth at least minus the
    position its move made. ``-CELLS`` when no parent says anything."""
    last = position ^ mask  # the first player's stones: it moved last
    bound = -CELLS
    for column in range(WIDTH):
        in_column = mask & column_mask(column)
        if not in_column:
            continue
        top = (in_column + bottom_square(column)) >> S1
        if not last & top:
            continue
        first, before = last ^ top, mask ^ top
        if playable(before) & winning_squares(first, before):
            continue  # the parent is won at once: not in the book, and it bounds nothing
        score = field_score(keys, values, first, before)
        if score != NOT_IN_BOOK and -score > bound:
            bound = -score
    return bound
