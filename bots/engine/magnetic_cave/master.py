"""The Magnetic Cave ``master`` bot: the shared search, exact near the end, and drawing traps.

Near the end (``SETTLE_PLIES``), a move starts with one null-window search
to the full board: win, draw or loss? It answers several times quicker than
iterative deepening reaches the full board, so wins are proved, and kept,
some bricks earlier: the brick it found to win is played. A loss is left to
the full search.

Drawn endgames: once a draw is proved, the time left goes to an exact look
at every drawing move: the one that leaves the opponent the most replies
that lose, and lose slowly (beyond ``SHALLOW`` plies), is played. A fallible
opponent may miss the only holding replies; a perfect one draws all the same.
"""

from __future__ import annotations

import time
from functools import cache
from typing import Any

import numpy as np

from protocol.games.magnetic_cave import Brick, CaveState

from ..engine_bot import EngineBot, searched
from ..search import DRAW, NODES, RUNNING, Searcher, describe_score
from ..traps import DEEP, DRAWN, settle, solved_kind
from .evaluation import generate_moves, search
from .position import MAX_MOVES, MOVE_SPACE, from_state, game_result, key, legal_moves, play, plies_left, to_brick, undo

SETTLE_PLIES = 24
"""From this many plies before the end (40 bricks on the board), a move starts by asking a null-window
search to the full board whether the game is won, drawn or lost. At 22 plies it answers in about 0.05 s,
at 24 in about 0.16 s (medians over positions of master's games), where iterative deepening takes
several times as long to reach the full board."""
SETTLE_SHARE = 0.5
"""The share of the move's time that question may take (the full search gets the rest)."""


@cache
def warm_up() -> None:
    """Load (or, the first time ever, compile) every compiled function once per process.

    The search runs past 1,024 nodes so that it looks at the clock: its first
    call from compiled code costs about 0.1 s, which must not fall on a move.
    """
    position = np.zeros(4, np.uint64)
    legal_moves(position, np.zeros(MAX_MOVES, np.int32))
    searcher = Searcher(search, MAX_MOVES, MOVE_SPACE, table_bits=10)
    searcher.think(position, 0.0, max_depth=4)
    searcher.window(position, 3, -1, 1, 0.0)  # the drawing traps' search


class MagneticCaveMaster(EngineBot):
    """The ``master`` level: the shared search with threat pruning and a threat-based evaluation.

    Iterative deepening runs until the deadline, a forced result, or the end of
    the game. The table survives from move to move within a game.
    """

    GAME_ID = "magnetic-cave"
    SEARCH, MAX_MOVES, MOVE_SPACE = search, MAX_MOVES, MOVE_SPACE
    DEFAULT_SECONDS = 3.0
    """Thinking time per move without a budget: the original assignment's 3-second rule."""
    OVERHEAD = 0.01
    _warm_up = staticmethod(warm_up)

    def engine_position(self, state: CaveState) -> np.ndarray:
        """The engine position ``[mine, theirs, bricks, played_for]`` of ``state``."""
        return from_state(state)

    def find_move(self, position: np.ndarray, start: float, deadline: float) -> tuple[int, dict[str, Any]]:
        """Near the end a proven win's brick; in a proven draw, the drawing brick with the most slowly losing
        replies; else the search's brick."""
        plies = plies_left(position)
        if plies <= SETTLE_PLIES:
            settled = self._settled(position, plies, start, deadline)
            if settled is not None:
                return settled
        result = self._searcher.think(position, deadline, max_depth=plies)
        move, traps = result.move, 0
        if result.score == 0 and result.depth >= plies:
            move, traps = self._drawing_trap(position, result.move, deadline)
        return move, {**searched(result), "traps": traps}

    def reference_move(self, position: np.ndarray, square: int) -> Brick:
        """The reference move of an engine square."""
        return to_brick(square)

    def _settled(
        self, position: np.ndarray, plies: int, start: float, deadline: float
    ) -> tuple[int, dict[str, Any]] | None:
        """Near the end: a winning brick, or a drawing trap, if one null-window search proves a win or a
        draw in time; else ``None`` (a loss, or no answer), for the full search.

        The brick is the one that search found best at the root (its table
        entry): the winning brick, or the drawing brick the traps fall back on.
        """
        settled = settle(self._searcher, position, plies, start + (deadline - start) * SETTLE_SHARE,
                         generate_moves, key, MAX_MOVES)
        if settled is None or settled[0] < DRAW:
            return None
        verdict, move = settled
        nodes = int(self._searcher.work.counters[NODES])
        traps = 0
        if verdict == DRAW:
            move, traps = self._drawing_trap(position, move, deadline)
        return move, {"depth": plies, "score": verdict, "value": describe_score(verdict), "nodes": nodes,
                      "traps": traps}

    def _drawing_trap(self, position: np.ndarray, move: int, deadline: float) -> tuple[int, int]:
        """Among the moves that hold the proven draw, the one with the most replies that lose.

        A fallible opponent may miss the only replies that hold: this picks,
        by null-window searches (:func:`~bots.engine.traps.solved_kind`), the
        drawing move that leaves it the most replies that lose slowly (see
        ``SHALLOW``), else ``move`` (the search's choice). When time runs out
        it answers with the best found so far. Returns the move and how many
        such replies it leaves.
        """
        moves = np.zeros(MAX_MOVES, np.int32)
        replies = np.zeros(MAX_MOVES, np.int32)
        best, best_traps = move, 0
        for candidate in moves[: generate_moves(position, moves)]:
            play(position, candidate)
            traps = 0
            running = game_result(position) == RUNNING
            if running and solved_kind(self._searcher, position, plies_left(position), deadline) is DRAWN:
                for reply in replies[: legal_moves(position, replies)]:
                    play(position, reply)
                    if game_result(position) == RUNNING:
                        traps += solved_kind(self._searcher, position, plies_left(position), deadline) is DEEP
                    undo(position, reply)
            undo(position, candidate)
            if traps > best_traps:  # a drawing move, with at least this many losing replies
                best, best_traps = int(candidate), traps
            if time.perf_counter() > deadline:
                break
        return best, best_traps
