"""Connect Four's ``master`` bot: perfect play from the first stone (the opening table and the field's book, then
the exact solver), the heuristic search only when the solver cannot finish in time."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from protocol.games.connect4 import C4State, Drop

from ..engine_bot import EngineBot, searched
from ..search import Searcher
from .book import opening_move, opening_table
from .evaluation import search
from .fieldbook import field_book
from .position import CELLS, WIDTH, from_moves, from_state, legal_columns, to_drop
from .solver import NODES, new_solver_tables, solve_column, solve_many

SOLVER_SHARE = 0.9
"""Share of the move's time given to the exact solver (from 12 stones on) before the heuristic search takes over:
most of it, since the openings make every position before 12 stones exact and the search is the weaker guess."""


@cache
def warm_up() -> None:
    """Load (or, the first time ever, compile) every compiled function once per process, and read the field's
    book and the opening table (made in the cache directory the first time ever)."""
    opening_table()
    position, mask, stones = from_moves("4453")
    tables = new_solver_tables(book=field_book())
    solve_column(np.uint64(position), np.uint64(mask), stones, tables, 0.0)
    solve_many(np.zeros(0, np.uint64), np.zeros(0, np.uint64), np.zeros(0, np.int64), tables)
    searcher = Searcher(search, max_moves=WIDTH, move_space=WIDTH, table_bits=4)
    searcher.think(np.array([position, mask, stones], np.uint64), 0.0, max_depth=2)


class Connect4Master(EngineBot):
    """The ``master`` level: plays perfectly wherever the solver finishes in time, else searches.

    Before 12 stones the move comes from the opening table or the solver over the field's 12-stone
    book (milliseconds). From 12 stones on, each move first tries to solve the position exactly within
    ``SOLVER_SHARE`` of its time; if that fails, the shared search with the odd/even threat heuristic uses the rest.
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

        # A weak solve (win, draw or loss) takes about half the time of an exact one, and is all a draw needs.
        # A win wants the fastest, a loss the slowest: the exact score tells which column does.
        solver_deadline = start + SOLVER_SHARE * (deadline - start)
        column, score, solved = solve_column(position, mask, stones, self._solver, solver_deadline, True)
        solver_nodes = int(self._solver.counters[NODES])
        if not solved or score != 0:
            # The weak solve's bound (a win by at least, a loss by at least) spares the exact solve its windows.
            low_bound = score if score > 0 else -CELLS
            high_bound = score if score < 0 else CELLS
            exact = solve_column(position, mask, stones, self._solver, solver_deadline, False, low_bound, high_bound)
            solver_nodes += int(self._solver.counters[NODES])
            if exact[2] or not solved or score < 0:  # out of time on a win: the weak solve's column still wins
                column, score, solved = exact
        if solved and column in columns:
            return column, {"solved": True, "score": int(score), "nodes": solver_nodes}

        result = self._searcher.think(board, deadline, max_depth=CELLS - stones)
        return result.move, {"solved": False, **searched(result), "nodes": solver_nodes + result.nodes}

    def reference_move(self, board: np.ndarray, column: int) -> Drop:
        """The reference move of an engine column."""
        return to_drop(column)
