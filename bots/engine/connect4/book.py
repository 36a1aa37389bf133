"""Connect Four's openings: exact values from the first stone, on top of the field's 12-stone book.

Two layers make every position of fewer than 12 stones exact and cheap:

- the **field's book** (:mod:`~bots.engine.connect4.fieldbook`, from ``bitbully-databases``): every
  position of 12 stones, exact with its distance; the solver stops there, so any position of fewer
  stones is solved over the book's leaves;
- the **opening table**: the exact score of every position of up to :data:`TABLE_STONES` stones that
  no one has won, one entry for a position and its mirror image, made bottom-up once (the deepest
  layer solved over the book's leaves, every shallower position the best of its moves) and kept in
  the user's cache directory (``$XDG_CACHE_HOME/plyhall``, else ``~/.cache/plyhall``) as an ``.npz``
  of sorted keys and scores. Made on first use: a few seconds on one core (docs/ENGINES.md).

:func:`opening_move` gives a proven-optimal move (the fastest win, the slowest loss, or a draw kept) and
the exact score of any position of fewer than 12 stones: from the table while it holds every move's
position after, else from the solver over the book.
"""

from __future__ import annotations

import os
import sys
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np

from protocol.user_cache import cache_dir

from .fieldbook import BOOK_STONES, field_book
from .position import CELLS, HEIGHT, WIDTH, column_mask, playable, winning_squares
from .solver import NODES, STOPPED, SolverTables, new_solver_tables, solve, solve_column

TABLE_STONES = 5
"""The opening table holds every position of up to this many stones (2,863 up to mirror images; 2,144 of 5 stones).
Deeper positions are solved over the field's book in milliseconds (at most 3 ms of CPU from an empty table on a
sample of 5- to 7-stone positions), while the shallowest take up to 0.3 s; a table through 7 stones (38,203
positions) took four times as long to make, 11 s of CPU against 2.5 s, for nothing measurable."""
TABLE_VERSION = 1
"""Part of the table's file name: bumped whenever its content would change, so an old file is never read."""
COLUMN_BITS = 7
"""Bits a column takes in a bitboard (six squares and an empty sentinel)."""


def mirror(board: int) -> int:
    """The bitboard ``board`` reflected left to right."""
    out = 0
    for column in range(WIDTH):
        out |= ((board >> (COLUMN_BITS * column)) & 0x7F) << (COLUMN_BITS * (WIDTH - 1 - column))
    return out


def book_key(position: int, mask: int) -> int:
    """The key of a position and its mirror image: the smaller of their ``position + mask`` keys."""
    return min(position + mask, mirror(position) + mirror(mask))


def after(position: int, mask: int, column: int) -> tuple[int, int]:
    """``(position, mask)`` after the side to move drops in ``column``, ``position`` now for the opponent."""
    square = (mask + (1 << (COLUMN_BITS * column))) & int(column_mask(column))
    return position ^ mask, mask | square


def wins_at_once(position: int, mask: int, column: int) -> bool:
    """True when dropping in ``column`` completes a four for the side to move."""
    square = int(playable(np.uint64(mask))) & int(column_mask(column))
    return bool(square & int(winning_squares(np.uint64(position), np.uint64(mask))))


def open_columns(mask: int) -> list[int]:
    """The columns that are not full."""
    return [c for c in range(WIDTH) if not mask & (1 << (COLUMN_BITS * c + HEIGHT - 1))]


def layer(plies: int) -> list[tuple[int, int]]:
    """Every position of exactly ``plies`` stones that no one has won, once per mirror pair, in depth-first
    order (neighbours share most of their solving, which the solver's table keeps)."""
    seen: set[int] = set()
    found: list[tuple[int, int]] = []

    def walk(position: int, mask: int, stones: int) -> None:
        if stones == plies:
            key = book_key(position, mask)
            if key not in seen:
                seen.add(key)
                found.append((position, mask))
            return
        for column in open_columns(mask):
            if wins_at_once(position, mask, column):
                continue
            child = after(position, mask, column)
            key = book_key(*child) | (1 << 63)  # positions above the layer, visited once each
            if key in seen:
                continue
            seen.add(key)
            walk(*child, stones + 1)

    walk(0, 0, 0)
    return found


def move_score(position: int, mask: int, stones: int, column: int,
               lookup: Callable[[int], int | None]) -> int | None:
    """The exact score of dropping in ``column``, the position after it scored by ``lookup`` (a book key to
    its score, None when the table lacks it; then so is the move's)."""
    if wins_at_once(position, mask, column):
        return (CELLS + 1 - stones) // 2
    child = lookup(book_key(*after(position, mask, column)))
    return None if child is None else -child


# --- Making the table ------------------------------------------------------------------------------------


def solve_layer(plies: int, tables: SolverTables) -> dict[int, int]:
    """The exact score of every position of the layer of ``plies`` stones (fewer than 12), by the solver over
    the field's book (``tables`` must hold it)."""
    if not plies < BOOK_STONES or not len(tables.book_keys):
        raise ValueError(f"a layer is solved over the field's book: below {BOOK_STONES} stones, with the book")
    scores = {}
    for position, mask in layer(plies):
        tables.counters[NODES] = 0
        tables.counters[STOPPED] = 0
        score, solved = solve(np.uint64(position), np.uint64(mask), plies, tables, np.inf)
        if not solved:
            raise RuntimeError(f"the solver stopped on a position of {plies} stones (its node limit?)")
        scores[book_key(position, mask)] = int(score)
    return scores


def build(plies: int, scores: dict[int, int]) -> dict[int, int]:
    """Back the layer's ``scores`` up to the empty board: every position of at most ``plies`` stones."""
    book = dict(scores)
    for stones in range(plies - 1, -1, -1):
        for position, mask in layer(stones):
            values = [move_score(position, mask, stones, c, book.get) for c in open_columns(mask)]
            if None in values:
                raise ValueError(f"the layer of {plies} stones is not complete")
            book[book_key(position, mask)] = max(values)  # every position has a move: none is full this early
    return book


def write_book(book: dict[int, int], path: Path) -> None:
    """Save ``book`` as sorted keys and their scores, atomically (a reader never sees half a file)."""
    keys = np.array(sorted(book), np.uint64)
    scores = np.array([book[int(k)] for k in keys], np.int8)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            np.savez(out, keys=keys, scores=scores)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class Book:
    """A loaded table: exact scores by position, and the best move where it knows every move's score."""

    def __init__(self, keys: np.ndarray, scores: np.ndarray) -> None:
        if keys.dtype != np.uint64 or scores.dtype != np.int8 or keys.shape != scores.shape or keys.ndim != 1:
            raise ValueError("a book is a row of uint64 keys and one int8 score each")
        if np.any(keys[1:] <= keys[:-1]):
            raise ValueError("a book's keys must be sorted and unique")
        self.keys, self.scores = keys, scores

    @classmethod
    def load(cls, path: Path) -> Book:
        """The book saved at ``path`` by :func:`write_book` (``ValueError``, ``OSError`` or, for a file cut short,
        ``zipfile.BadZipFile``, ``EOFError`` or ``zlib.error`` when it is not one)."""
        with np.load(path) as data:
            return cls(data["keys"], data["scores"])

    def __len__(self) -> int:
        return len(self.keys)

    def score(self, position: int, mask: int) -> int | None:
        """The exact score of a position for the side to move, or None when the book does not hold it."""
        return self._score_of(book_key(position, mask))

    def _score_of(self, key_value: int) -> int | None:
        key = np.uint64(key_value)
        index = int(np.searchsorted(self.keys, key))
        if index < len(self.keys) and self.keys[index] == key:
            return int(self.scores[index])
        return None

    def best_move(self, position: int, mask: int, stones: int) -> tuple[int, int] | None:
        """``(column, score)`` of a proven-optimal move (centre first among equals), or None when the book lacks
        the position after some move."""
        best: tuple[int, int] | None = None
        for column in sorted(open_columns(mask), key=lambda c: abs(2 * c - (WIDTH - 1))):
            score = move_score(position, mask, stones, column, self._score_of)
            if score is None:
                return None
            if best is None or score > best[1]:
                best = (column, score)
        return best


def table_path() -> Path:
    """Where the opening table is kept."""
    return cache_dir() / f"connect4-openings-{TABLE_STONES}-v{TABLE_VERSION}.npz"


def make_table(tables: SolverTables | None = None) -> Book:
    """Make the opening table (solving its deepest layer over the field's book) and keep it in the cache (where the
    cache cannot be written, say so on stderr and go on with the table in memory: it is made again next time)."""
    tables = new_solver_tables(book=field_book()) if tables is None else tables
    values = build(TABLE_STONES, solve_layer(TABLE_STONES, tables))
    try:
        write_book(values, table_path())
    except OSError as error:
        print(f"plyhall: Connect Four's opening table not kept in {table_path().parent} ({error}); "
              "set XDG_CACHE_HOME to a writable folder", file=sys.stderr)
    keys = np.array(sorted(values), np.uint64)
    return Book(keys, np.array([values[int(k)] for k in keys], np.int8))


@cache
def opening_table() -> Book:
    """The opening table, loaded once a process from the cache, made there first if it is missing or unreadable."""
    try:
        return Book.load(table_path())
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error):  # (a file cut short: a zip's)
        return make_table()


def opening_move(position: int, mask: int, stones: int, tables: SolverTables,
                 deadline: float = np.inf) -> tuple[int, int] | None:
    """``(column, score)``: a proven-optimal move (0-based column) of a running position of fewer than 12 stones
    and its exact score, from the opening table or the solver over the field's book (``tables`` must hold it).
    None for 12 stones or more, or when the solver stops first (its deadline or node limit)."""
    if stones >= BOOK_STONES:
        return None
    if not len(tables.book_keys):
        raise ValueError("opening_move needs solver tables that hold the field's book")
    found = opening_table().best_move(position, mask, stones) if stones < TABLE_STONES else None
    if found is not None:
        return found
    column, score, solved = solve_column(np.uint64(position), np.uint64(mask), stones, tables, deadline)
    return (int(column), int(score)) if solved else None
