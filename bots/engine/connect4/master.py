"""Connect Four's ``master`` bot: perfect play from the first stone (the opening table and the field's book, then
the exact solver), a column proven to hold a floor when the solver cannot finish in time, the heuristic search
only when not even that was proven."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any, NamedTuple

import numpy as np

from protocol.games.connect4 import C4State, Drop

from ..engine_bot import EngineBot, searched
from ..search import Searcher, clock
from .book import opening_move, opening_table
from .evaluation import search
from .fieldbook import field_book
from .position import CELLS, WIDTH, from_moves, from_state, legal_columns, to_drop
from .solver import LIMIT, NODES, SolverTables, held_floor, new_solver_tables, solve_column, solve_many

SOLVER_SHARE = 0.9
"""Share of the move's time given to the exact solver (from 12 stones on) before the heuristic search takes over:
most of it, since the openings make every position before 12 stones exact and the search is the weaker guess."""


@cache
def warm_up() -> None:
    """Load (or, the first time ever, compile) every compiled function once per process, with the argument
    types master passes, and read the field's book and the opening table (made in the cache directory the first
    time ever): whatever is left to load falls on the first move that needs it, inside its time."""
    opening_table()
    position, mask, stones = from_moves("4453")
    tables = new_solver_tables(book=field_book())
    solve_column(np.uint64(position), np.uint64(mask), stones, tables, 0.0)  # the analysis' call
    # ... and master's weak and exact steps' (their bounds passed: another specialization to load)
    solve_column(np.uint64(position), np.uint64(mask), stones, tables, 0.0, True, -CELLS, CELLS)
    clock()  # the clock's first reading readies its object-mode block: 60 ms, once a process, else in a move
    held_floor(np.uint64(position), np.uint64(mask), stones, tables, 0.0)
    solve_many(np.zeros(0, np.uint64), np.zeros(0, np.uint64), np.zeros(0, np.int64), tables)
    searcher = Searcher(search, max_moves=WIDTH, move_space=WIDTH, table_bits=4)
    searcher.think(np.array([position, mask, stones], np.uint64), 0.0, max_depth=2)


class Steps(NamedTuple):
    """What :func:`solve_in_steps` found: the column to play and its score when ``solved``; else ``held``, a
    column proven to hold at least ``floor`` (-1 and ``-CELLS``: none); the nodes of each step (held, weak,
    exact)."""

    column: int
    score: int
    solved: bool
    held: int
    floor: int
    nodes: tuple[int, int, int]


def solve_in_steps(
    position: np.uint64, mask: np.uint64, stones: int, tables: SolverTables, deadline: float,
    budget: int | None = None,
) -> Steps:
    """Master's solve of a running position, in the order that leaves the best move so far when time runs out.

    First a column proven to hold some score (cheap: one column's search; :func:`held_floor`), the move to fall
    back on. Then a weak solve (win, draw or loss), about half the time of an exact one, and all a draw needs.
    A win wants the fastest, a loss the slowest: the exact score tells which column does; should it not finish
    on a win, the weak solve's column still wins. ``budget``: the nodes of all steps together, at most (the
    tables' own node limit, if any, is then set aside for this call).
    """
    limit = int(tables.counters[LIMIT])
    nodes = [0, 0, 0]

    def left() -> None:
        """Give the next step what is left of the budget."""
        if budget is not None:
            tables.counters[LIMIT] = max(budget - sum(nodes), 1)

    try:
        return _steps(position, mask, stones, tables, deadline, nodes, left)
    finally:
        tables.counters[LIMIT] = limit


def _steps(
    position: np.uint64, mask: np.uint64, stones: int, tables: SolverTables, deadline: float,
    nodes: list[int], left: Callable[[], None],
) -> Steps:
    """The body of :func:`solve_in_steps`: ``nodes`` collects each step's count, ``left()`` sets the node limit
    before each step."""
    left()
    held, floor, ceiling = held_floor(position, mask, stones, tables, deadline)
    nodes[0] = int(tables.counters[NODES])
    if held >= 0 and floor >= ceiling:  # the exact score held (at 12 stones, where the book knows it)
        return Steps(held, floor, True, held, floor, (nodes[0], 0, 0))
    if held >= 0 and floor > 0:  # a win held: all a weak solve would say
        column, score, solved = held, floor, True
    else:
        left()
        column, score, solved = solve_column(position, mask, stones, tables, deadline, True, floor, ceiling)
        nodes[1] = int(tables.counters[NODES])
    if not solved or score != 0:
        # The bounds known (a win by at least, a loss by at least) spare the exact solve its windows.
        low_bound = max(floor, score if solved and score > 0 else -CELLS)
        high_bound = min(ceiling, score if score < 0 else CELLS)
        left()
        exact = solve_column(position, mask, stones, tables, deadline, False, low_bound, high_bound)
        nodes[2] = int(tables.counters[NODES])
        if exact[2] or not solved or score < 0:  # out of time on a win: the weak solve's column still wins
            column, score, solved = exact
    return Steps(int(column), int(score), bool(solved), int(held), int(floor), (nodes[0], nodes[1], nodes[2]))


class Connect4Master(EngineBot):
    """The ``master`` level: plays perfectly wherever the solver finishes in time, else searches.

    Before 12 stones the move comes from the opening table or the solver over the field's 12-stone
    book (milliseconds). From 12 stones on, each move first tries to solve the position exactly within
    ``SOLVER_SHARE`` of its time (:func:`solve_in_steps`); if that fails, it plays the column the solve proved holds
    a floor, and only where none was proven does the shared search with the odd/even threat heuristic use the rest.
    Both keep their tables from move to move within a game.
    """

    GAME_ID = "connect4"
    MEMORY = ("_solver", "_searcher")
    SEARCH, MAX_MOVES, MOVE_SPACE = search, WIDTH, WIDTH
    _warm_up = staticmethod(warm_up)

    def _memory(self) -> None:
        self._solver = new_solver_tables(self.node_limit, field_book())
        super()._memory()

    def new_game(self) -> None:
        """Forget the tables of the last game."""
        self._memory()

    def engine_position(self, state: C4State) -> np.ndarray:
        """The bitboards ``[position, mask, stones]`` of ``state``."""
        return np.array(from_state(state), np.uint64)

    def find_move(self, board: np.ndarray, start: float, deadline: float) -> tuple[int, dict[str, Any]]:
        """The only column, the openings' proven move (below 12 stones), the solver's, else the search's."""
        position, mask, stones = board[0], board[1], int(board[2])
        columns = legal_columns(int(mask))
        if len(columns) == 1:
            return columns[0], {"forced": True}
        # Before 12 stones: milliseconds at worst (a search of at most 5 plies to the book), so past any deadline
        # too, at any time control; only a node limit stops it.
        found = opening_move(int(position), int(mask), stones, self._solver)
        if found is not None and found[0] in columns:  # exact: the fastest win, the slowest loss, or the draw
            return found[0], {"book": True, "solved": True, "score": found[1]}

        solver_deadline = start + SOLVER_SHARE * (deadline - start)
        steps = solve_in_steps(position, mask, stones, self._solver, solver_deadline)
        solver_nodes = sum(steps.nodes)
        if steps.solved and steps.column in columns:
            return steps.column, {"solved": True, "score": steps.score, "nodes": solver_nodes}
        if steps.held in columns:  # proven to hold at least ``floor``: better than any guess of the heuristic search
            return steps.held, {"solved": False, "held": steps.floor, "nodes": solver_nodes}

        result = self._searcher.think(board, deadline, max_depth=CELLS - stones)
        return result.move, {"solved": False, **searched(result), "nodes": solver_nodes + result.nodes}

    def reference_move(self, board: np.ndarray, column: int) -> Drop:
        """The reference move of an engine column."""
        return to_drop(column)
