"""Connect Four's opening book: the exact score of every position up to a number of stones, and its generator.

The book holds, for every position of at most ``plies`` stones that no one has
won yet, its exact score for the side to move (the solver's scoring, see
:mod:`~bots.engine.connect4.solver`), one entry for a position and its mirror
image. It is made bottom-up: every position of exactly ``plies`` stones is
solved by the solver (the long part, resumable), then every shallower position
takes the best of its moves, a win at once or minus the book's score of the
position after. With it, ``master`` plays a proven-optimal move (the fastest
win, the slowest loss) wherever the book holds the positions after every move.

    python -m bots.engine.connect4.book generate --plies 8 --work DIR [--jobs 2]
    python -m bots.engine.connect4.book build --plies 8 --work DIR --out FILE

``generate`` solves the deepest layer into ``DIR`` (one file a job, a line a
position, appended as it goes: stop it any time, with ``kill`` or Ctrl-C, and run
it again to go on; each job says how far it is, and its time left, every minute);
``build`` backs the scores up to the empty board and writes the book (``.npz``:
sorted keys and their scores). ``master`` loads the book shipped beside this
module (``connect4_book.npz``) when it is there.
"""

from __future__ import annotations

import argparse
import multiprocessing
import signal
import sys
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np

from protocol.statistics import format_duration

from .position import CELLS, HEIGHT, WIDTH, column_mask, from_moves, playable, winning_squares

BOOK_FILE = Path(__file__).with_name("connect4_book.npz")
"""The book ``master`` uses, when it is there."""
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


Start = tuple[int, int, int]
"""``(position, mask, stones)`` of the position a book starts from: the empty board for the real one."""
EMPTY: Start = (0, 0, 0)


def layer(plies: int, start: Start = EMPTY) -> list[tuple[int, int]]:
    """Every position of exactly ``plies`` stones after ``start`` that no one has won, once per mirror pair, in
    depth-first order (neighbours share most of their solving, which the solver's table keeps)."""
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

    walk(*start)
    return found


def move_score(position: int, mask: int, stones: int, column: int,
               lookup: Callable[[int], int | None]) -> int | None:
    """The exact score of dropping in ``column``, the position after it scored by ``lookup`` (a book key to
    its score, None when the book lacks it; then so is the move's)."""
    if wins_at_once(position, mask, column):
        return (CELLS + 1 - stones) // 2
    child = lookup(book_key(*after(position, mask, column)))
    return None if child is None else -child


# --- Generating ------------------------------------------------------------------------------------------


PROGRESS_SECONDS = 60.0
"""A generating job says how far it is at least this often (and every 200 positions)."""


def _solve_chunk(job: int, jobs: int, plies: int, work: Path, done: set[int], start: Start = EMPTY) -> int:
    """Solve this job's share of the layer (every ``jobs``-th block, skipping ``done``); returns how many."""
    from .master import warm_up
    from .solver import NODES, STOPPED, new_solver_tables, solve

    warm_up()
    tables = new_solver_tables()
    positions = layer(plies, start)
    block = max(1, len(positions) // (jobs * 64))  # blocks of neighbours, dealt round the jobs
    solved = 0
    started = time.perf_counter()
    path = work / f"layer{plies}.{job}.txt"
    if path.exists():  # a line cut short when the last run was killed goes (read_layer skipped it too)
        text = path.read_bytes()
        path.write_bytes(text[: text.rfind(b"\n") + 1])
    mine = [(book_key(position, mask), position, mask) for index, (position, mask) in enumerate(positions)
            if (index // block) % jobs == job]
    todo = [entry for entry in mine if entry[0] not in done]
    reported = started
    with path.open("a") as out:
        for key, position, mask in todo:
            tables.counters[NODES] = 0
            tables.counters[STOPPED] = 0
            score, _ = solve(np.uint64(position), np.uint64(mask), plies, tables, np.inf)
            out.write(f"{key} {score}\n")
            out.flush()
            solved += 1
            now = time.perf_counter()
            if solved % 200 == 0 or now - reported >= PROGRESS_SECONDS or solved == len(todo):
                reported = now
                left = (len(todo) - solved) * (now - started) / solved
                print(f"job {job}: {len(mine) - len(todo) + solved} of {len(mine)} solved, "
                      f"{solved / (now - started):.2f} a second, about {format_duration(left)} left",
                      file=sys.stderr, flush=True)
    return solved


def read_layer(plies: int, work: Path) -> dict[int, int]:
    """The scores solved so far of the layer of ``plies`` stones (every job's file in ``work``)."""
    scores: dict[int, int] = {}
    for path in sorted(work.glob(f"layer{plies}.*.txt")):
        for line in path.read_text().split("\n")[:-1]:  # only whole lines: one cut short by a kill is solved again
            fields = line.split()
            if len(fields) == 2:
                scores[int(fields[0])] = int(fields[1])
    return scores


def generate(plies: int, work: Path, jobs: int = 1, start: Start = EMPTY) -> int:
    """Solve every position of the layer not solved yet into ``work``; returns how many are left (0: done)."""
    work.mkdir(parents=True, exist_ok=True)
    total = len(layer(plies, start))
    done = read_layer(plies, work)
    print(f"layer of {plies} stones: {total} positions, {len(done)} solved already", file=sys.stderr, flush=True)
    if len(done) < total:
        with multiprocessing.get_context("spawn").Pool(jobs) as pool:
            pool.starmap(_solve_chunk, [(job, jobs, plies, work, set(done), start) for job in range(jobs)])
    return total - len(read_layer(plies, work))


def build(plies: int, scores: dict[int, int], start: Start = EMPTY) -> dict[int, int]:
    """Back the layer's ``scores`` up to ``start``: every position of at most ``plies`` stones after it."""
    book = dict(scores)
    for stones in range(plies - 1, start[2] - 1, -1):
        for position, mask in layer(stones, start):
            values = [move_score(position, mask, stones, c, book.get) for c in open_columns(mask)]
            if None in values:
                raise ValueError(f"the layer of {plies} stones is not complete: run generate first")
            book[book_key(position, mask)] = max(values)  # every position has a move: none is full this early
    return book


def write_book(book: dict[int, int], path: Path) -> None:
    """Save ``book`` as sorted keys and their scores."""
    keys = np.array(sorted(book), np.uint64)
    scores = np.array([book[int(k)] for k in keys], np.int8)
    np.savez_compressed(path, keys=keys, scores=scores)


class Book:
    """A loaded book: exact scores by position, and the best move where it knows every move's score."""

    def __init__(self, keys: np.ndarray, scores: np.ndarray) -> None:
        self.keys, self.scores = keys, scores

    @classmethod
    def load(cls, path: Path) -> Book:
        """The book saved at ``path`` by :func:`write_book`."""
        with np.load(path) as data:
            return cls(data["keys"], data["scores"])

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


@cache
def shipped_book() -> Book | None:
    """The book shipped with the package, loaded once a process; None when there is none."""
    return Book.load(BOOK_FILE) if BOOK_FILE.exists() else None


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    """The ``generate`` and ``build`` commands (see the module's notes)."""
    parser = argparse.ArgumentParser(prog="python -m bots.engine.connect4.book", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("generate", "build"))
    parser.add_argument("--plies", type=int, default=8, help="stones of the deepest layer (default 8)")
    parser.add_argument("--work", type=Path, required=True, help="folder of the solved layer (made if absent)")
    parser.add_argument("--jobs", type=int, default=1, help="processes solving at once (one core each)")
    parser.add_argument("--from", dest="start", default="", metavar="MOVES",
                        help="only the positions after these moves (columns 1-7), to try the generator on a small book")
    parser.add_argument("--out", type=Path, default=BOOK_FILE, help=f"where build writes the book ({BOOK_FILE.name})")
    args = parser.parse_args(argv)
    try:
        start = from_moves(args.start)
    except ValueError as error:
        parser.error(f"--from: {error}")
    if not start[2] <= args.plies <= start[2] + 12 or args.jobs < 1:
        parser.error("--plies must be at most 12 beyond --from's stones (0 without it), --jobs at least 1")
    if args.command == "generate":
        # A plain kill (SIGTERM) ends the command through SystemExit, so that the pool stops its workers on
        # the way out instead of leaving them solving, orphaned; what they wrote is kept and resumed from.
        signal.signal(signal.SIGTERM, _exit_on_signal)
        started = time.perf_counter()
        left = generate(args.plies, args.work, args.jobs, start)
        print(f"{'done' if not left else f'{left} positions left'} after {time.perf_counter() - started:.0f} s")
        return 0 if not left else 1
    try:
        book = build(args.plies, read_layer(args.plies, args.work), start)
    except ValueError as error:
        parser.error(str(error))
    write_book(book, args.out)
    print(f"wrote {len(book)} positions of up to {args.plies} stones to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
