"""Fixed-depth alpha-beta minimax, shared by every game: the ``minimax-N`` levels.

This is the search of a classic course project, kept plain so it reads top to
bottom. It works on the reference rules (``game.legal_moves``/``apply``/
``outcome``) and asks the game's :class:`~bots.evaluate.base.Evaluator` for
two things only: a score for positions at the depth limit, and a cheap move
order. Scores are *negamax* style: always from the point of view of the
player to move, so a child's score is negated.

Decided positions score ``WIN - ply`` for the winner (``ply`` counted from the
root), so a win found sooner scores higher and a loss found later scores
higher than one found sooner; draws score 0.

Three small additions keep the big games playable in pure Python without
changing the value the search finds:

* move ordering from the evaluator (e.g. centre columns first in Connect Four);
* at the root of a deeper search, moves sorted by their one-ply score, so the
  first move searched is likely good and the rest are refuted quickly;
* *killer moves*: the last few moves that refuted a position at this ply are
  tried first in its neighbours, before the legal moves are even listed. In
  the Amazons most of our 2,000 turns are refuted by one of a handful of
  opposing turns, which keeps minimax-2 under a second or so.

The strong engines of the ``master`` levels are compiled and smarter; this
search is a yardstick.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from protocol.games import IllegalMove

from .base import Bot, TimeBudget
from .evaluate import Evaluator, evaluator_for

WIN = 1_000_000.0
"""Score of a won position, less the plies it takes to get there; heuristic scores stay far below it."""

KILLERS_PER_PLY = 4
"""How many recent refutations each ply remembers and tries first."""


@dataclass(frozen=True)
class SearchResult:
    """What one search found: the move, its score for the player to move, and nodes visited."""

    move: Any
    score: float
    nodes: int


class AlphaBeta:
    """One fixed-depth alpha-beta search over the reference rules of a game."""

    def __init__(self, evaluator: Evaluator) -> None:
        self.evaluator = evaluator
        self.game = evaluator.game
        self.nodes = 0
        self.killers: dict[int, list[Any]] = {}

    def best_move(self, state: Any, depth: int, moves: list[Any]) -> SearchResult:
        """Search ``moves`` of ``state`` to ``depth`` plies; the first best one wins ties.

        Ties keep the order of ``moves``, which lets a caller shuffle them to
        vary its play.
        """
        game = self.game
        self.nodes = 0
        children = [(move, game.apply(state, move)) for move in self.evaluator.order_moves(state, moves)]
        if depth >= 2:
            children.sort(key=lambda pair: self.value(pair[1], 0, -math.inf, math.inf, 1))
        alpha, beta = -math.inf, math.inf
        best_move, best_score = children[0][0], -math.inf
        for move, child in children:
            score = -self.value(child, depth - 1, -beta, -alpha, 1)
            if score > best_score:
                best_move, best_score = move, score
                alpha = max(alpha, score)
        return SearchResult(best_move, best_score, self.nodes)

    def value(self, state: Any, depth: int, alpha: float, beta: float, ply: int) -> float:
        """The score of ``state`` for the player to move, searched ``depth`` more plies.

        Exact when it lies strictly between ``alpha`` and ``beta``; otherwise
        only a bound on that side, which is all the caller needs.
        """
        self.nodes += 1
        game = self.game
        outcome = game.outcome(state)
        if outcome is not None:
            if outcome.winner is None:
                return 0.0
            return WIN - ply if outcome.winner == game.to_move(state) else -(WIN - ply)
        if depth <= 0:
            return self.evaluator.evaluate(state, game.to_move(state))
        best = -math.inf
        for move, child in self.children(state, ply):
            score = -self.value(child, depth - 1, -beta, -alpha, ply + 1)
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        self.remember_killer(ply, move)
                        break
        return best

    def children(self, state: Any, ply: int) -> Iterator[tuple[Any, Any]]:
        """``(move, position after it)`` for each legal move, this ply's killer moves first.

        Killers are tried before the legal moves are even listed: when one
        refutes the position, as they mostly do, listing is saved. ``apply``
        accepts exactly the legal moves, so a killer illegal here is skipped.
        """
        game = self.game
        tried = []
        for killer in self.killers.get(ply, ()):
            try:
                child = game.apply(state, killer)
            except IllegalMove:
                continue
            tried.append(killer)
            yield killer, child
        for move in self.evaluator.order_moves(state, game.legal_moves(state)):
            if move not in tried:
                yield move, game.apply(state, move)

    def remember_killer(self, ply: int, move: Any) -> None:
        """Keep ``move``, which just refuted a position at ``ply``, among the ply's killers."""
        killers = self.killers.setdefault(ply, [])
        if move in killers:
            killers.remove(move)
        killers.insert(0, move)
        del killers[KILLERS_PER_PLY:]


class MinimaxBot(Bot):
    """The ``minimax-N`` levels: alpha-beta to ``depth`` plies, ties broken at random.

    The search always goes to full depth; it ignores the time budget so that a
    level plays equally strong on any machine.
    """

    def __init__(self, game_id: str, level: str, depth: int, seed: int | None = None) -> None:
        super().__init__(game_id, level, seed)
        if depth < 1:
            raise ValueError(f"minimax depth must be at least 1, not {depth}")
        self.depth = depth
        self.evaluator = evaluator_for(game_id)
        self._last: SearchResult | None = None

    def choose(self, state: Any, budget: TimeBudget | None = None) -> Any:
        """The move with the best minimax score at this bot's depth."""
        moves = self.game.legal_moves(state)
        if not moves:
            raise ValueError("the game is over: there is no move to choose")
        self.rng.shuffle(moves)  # ties go to whichever comes first
        self._last = AlphaBeta(self.evaluator).best_move(state, self.depth, moves)
        return self._last.move

    def stats(self) -> dict[str, Any]:
        """Depth, score and nodes of the last search."""
        if self._last is None:
            return {}
        return {"depth": self.depth, "score": self._last.score, "nodes": self._last.nodes}
