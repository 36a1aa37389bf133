"""The Quarto ``master`` bot: the shared search, exact near the end, and traps in drawn endgames.

Quarto is a draw with best play, and from a fair start most games against a
decent opponent reach a drawn endgame. Every drawing move is then worth the
same to the search, but not against a fallible opponent. The master scores
each drawing move by the chance that an opponent who sees losses within
three plies of its reply (as a 4-ply search does) and picks at random among
the rest walks into a deeper loss, and plays the best one
(:meth:`QuartoMaster._trap_move`); within ten plies of the end one
null-window search settles "drawn or not" first, in half the time of the
exact solve, to leave the traps more of the move's time.

From ``SOLVER_EMPTIES`` empty squares on, the exact solver (``solver.py``, far
quicker than the shared search at solving) is asked first: a win is played
soonest, a loss held out longest, and a draw's traps are scored with it.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from protocol.games.quarto import QuartoMove, QuartoState

from ..engine_bot import EngineBot, searched
from ..search import DRAW, MATE, MATE_BOUND, Searcher, describe_score
from ..traps import DEEP, DRAWN, LOST, QUICK, QUICK_TIE_BREAK, SHALLOW, TIME_UP, settle, solved_kind, trap_chance
from .evaluation import generate_moves, search
from .position import (
    ALL,
    EMPTY_SQUARES,
    IN_HAND,
    MAX_MOVES,
    MOVE_SPACE,
    NO_PIECE,
    OPENING,
    PIECES,
    WON,
    encode,
    from_state,
    key,
    legal_moves,
    new_position,
    play,
    plies_left,
    to_quarto_move,
    undo,
)
from .solver import new_solver_tables, solve, to_search_score

SOLVER_EMPTIES = 12
"""From this many empty squares on (four pieces placed), the exact solver is tried first."""
SOLVER_SHARE = 0.5
"""The share of the move's time the solver may take before the shared search takes over."""
SOLVER_TABLE = 1 << 22
"""Solver table entries (16 bytes each: 64 MB)."""
SETTLE_PLIES = 10
"""From this many plies before the end, a null-window search first asks whether the game is a draw."""
SETTLE_SHARE = 0.5
"""The share of the move's time that question may take (the full search gets the rest otherwise)."""


@cache
def warm_up() -> None:
    """Load (or, the first time ever, compile) every compiled function once per process.

    The searches run past 1,024 nodes so that they look at the clock: its first
    call from compiled code costs about 0.1 s, which must not fall on a move.
    """
    position = new_position()
    legal_moves(position, np.zeros(MAX_MOVES, np.int32))
    play(position, OPENING * 17 + 5)
    searcher = Searcher(search, MAX_MOVES, MOVE_SPACE, table_bits=10)
    searcher.think(position, 0.0, max_depth=3)
    searcher.window(position, 3, -1, 1, 0.0)  # the trap scoring's search (loading it took a second)
    for move in (0 * 17 + 1, 5 * 17 + 2):
        play(position, move)
    solve(position, new_solver_tables(size=1 << 10), 0.0)  # the exact solver


class QuartoMaster(EngineBot):
    """The ``master`` level: the shared search with safe-piece pruning, exact once it sees the end.

    Iterative deepening runs until the deadline or until it reaches the end of
    the game, where its value is exact (win, draw or loss, by distance). The
    opening hand-over is a random piece: all pieces are equivalent on an empty
    board. The table survives from move to move within a game.
    """

    GAME_ID = "quarto"
    MEMORY = ("_solver", "_searcher")
    SEARCH, MAX_MOVES, MOVE_SPACE = search, MAX_MOVES, MOVE_SPACE
    OVERHEAD = 0.01
    _warm_up = staticmethod(warm_up)

    def _memory(self) -> None:
        self._solver = new_solver_tables(self.node_limit, SOLVER_TABLE)
        super()._memory()

    def engine_position(self, state: QuartoState) -> np.ndarray:
        """The engine position of ``state``."""
        return from_state(state)

    def find_move(self, position: np.ndarray, start: float, deadline: float) -> tuple[int, dict[str, Any]]:
        """A random opening piece; near the end a settled draw's trap; else the search's move, or its trap."""
        if position[IN_HAND] == NO_PIECE and position[EMPTY_SQUARES] == ALL:
            return encode(None, self.rng.randrange(PIECES)), {"opening": True}
        plies = plies_left(position)
        if position[IN_HAND] != NO_PIECE and plies <= SOLVER_EMPTIES:
            solved = self._solved_move(position, plies, start + SOLVER_SHARE * (deadline - start), deadline)
            if solved is not None:
                return solved
        if plies <= SETTLE_PLIES:
            settled = self._settled_draw(position, plies, start, deadline)
            if settled is not None:
                return settled
        result = self._searcher.think(position, deadline, max_depth=plies)
        stats = {**searched(result), "exact": result.depth >= plies or abs(result.score) > MATE_BOUND}
        move = result.move
        if stats["exact"] and result.score == DRAW:
            traps = self._trap_move(position, deadline, result.move)
            if traps is not None:
                move = traps[0]
                stats.update(trap=traps[1], trap_moves_checked=traps[2])
        return move, stats

    def reference_move(self, position: np.ndarray, move: int) -> QuartoMove:
        """The reference move of an engine move."""
        return to_quarto_move(move)

    def _solved_move(
        self, position: np.ndarray, empty: int, solver_deadline: float, deadline: float
    ) -> tuple[int, dict[str, Any]] | None:
        """The exact solver's move (a draw's best trap), or ``None`` if it did not finish by ``solver_deadline``."""
        score, move, solved = solve(position, self._solver, solver_deadline)
        if not solved:
            return None
        value = to_search_score(score, empty)
        stats: dict[str, Any] = {"depth": empty, "score": value, "value": describe_score(value), "exact": True,
                                 "solver": True, "nodes": int(self._solver.counters[0])}
        if score == 0:
            traps = self._trap_move(position, deadline, move)
            if traps is not None:
                move = traps[0]
                stats.update(trap=traps[1], trap_moves_checked=traps[2])
        return move, stats

    def _settled_draw(
        self, position: np.ndarray, plies: int, start: float, deadline: float
    ) -> tuple[int, dict[str, Any]] | None:
        """Near the end: if one null-window search shows a draw, the best trap and its figures (else ``None``).

        Proving "neither side can force a win" this way takes about half the
        time of the exact solve, which leaves the trap scoring more of the
        move's time. A win or a loss (``None``) is left to the full search,
        whose table this search has already filled.
        """
        settled = settle(self._searcher, position, plies, start + (deadline - start) * SETTLE_SHARE,
                         generate_moves, key, MAX_MOVES)
        if settled is None or settled[0] != DRAW:
            return None
        drawing = settled[1]  # the move found to draw
        traps = self._trap_move(position, deadline, drawing)
        if traps is None:
            return None
        return traps[0], {"depth": plies, "score": DRAW, "value": describe_score(DRAW), "exact": True,
                          "trap": traps[1], "trap_moves_checked": traps[2]}

    def _trap_move(self, position: np.ndarray, deadline: float, drawing: int) -> tuple[int, float, int] | None:
        """In a drawn position, the drawing move that gives the opponent the best chance to go wrong.

        Every move here draws with best play, so the move the search found
        (``drawing``) is as good as any against a perfect opponent, but not
        against a fallible one. For each of our moves, each reply the opponent
        could make (those the search would look at: wins at once, safe
        hand-overs) is solved; a move with a reply that beats us is dropped.
        The others are scored by the chance that an opponent who sees losses
        within ``traps.SHALLOW`` plies of its reply, and picks at random among the
        replies it cannot tell apart, walks into a loss: deep losing replies
        over replies that do not lose quickly (see :func:`trap_chance`).
        Null-window searches answer "win, draw or loss?" and "a win within
        three plies?" far quicker than exact values, and a move is given up
        as soon as even losing every remaining reply could not make it the
        best. ``drawing`` goes first. Returns ``(move, its score, moves
        checked)``, or ``None`` when the clock ran out before ``drawing`` was
        scored (it then stands).
        """
        moves = np.zeros(MAX_MOVES, np.int32)
        replies = np.zeros(MAX_MOVES, np.int32)
        n = generate_moves(position, moves)
        order = [drawing] + [int(moves[i]) for i in range(n) if moves[i] != drawing]
        best: tuple[int, float] | None = None
        checked = 0
        for move in order:
            play(position, move)
            trap = self._trap_score(position, replies, deadline, -1.0 if best is None else best[1])
            undo(position, move)
            if trap is TIME_UP:
                break
            checked += 1
            if trap is not None:
                best = (move, trap)  # type: ignore[assignment]
        if best is None:
            return None
        return best[0], best[1], checked

    def _trap_score(
        self, position: np.ndarray, replies: np.ndarray, deadline: float, beat: float
    ) -> float | None | object:
        """:func:`trap_chance` of the opponent's replies here, or ``None`` if that cannot beat ``beat``.

        ``None`` also when a reply beats us.
        """
        n = generate_moves(position, replies)
        if n == 0:
            return 0.0 if beat < 0.0 else None  # the board is full: a draw
        moves = [int(replies[i]) for i in range(n)]
        deep = quick = 0
        for done, reply in enumerate(moves):
            left = n - done
            if trap_chance(n, deep + left, quick) + QUICK_TIE_BREAK * left / n <= beat:
                return None  # however the remaining replies went, this would not be better
            play(position, reply)
            kind = self._reply_kind(position, deadline)
            undo(position, reply)
            if kind is TIME_UP:
                return TIME_UP
            if kind is LOST:
                return None
            deep += kind is DEEP
            quick += kind is QUICK
        chance = trap_chance(n, deep, quick)
        return chance if chance > beat else None

    def _reply_kind(self, position: np.ndarray, deadline: float) -> object:
        """After the opponent's reply: ``LOST`` (for us), ``DRAWN``, ``QUICK`` or ``DEEP`` (a win for us)."""
        if position[WON]:
            return LOST
        if position[EMPTY_SQUARES] == 0:
            return DRAWN  # the reply filled the board
        plies = plies_left(position)
        if plies > SOLVER_EMPTIES:
            return solved_kind(self._searcher, position, plies, deadline)
        score, _, solved = solve(position, self._solver, deadline)
        if not solved:
            return TIME_UP
        if score <= 0:
            return LOST if score < 0 else DRAWN
        return QUICK if MATE - to_search_score(score, plies) <= SHALLOW else DEEP
