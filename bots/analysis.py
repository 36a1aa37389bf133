"""Analysis of a recorded game: the master engine's verdict on every move.

For every position of the game the engine gives a value for the side to move (an expected score from 0 to
1) and its best move; a move is then judged by what it cost its player: the value before the move against
the value after it (1 less the opponent's value of the next position).

Where the engine is exact the value is exact and says so: every Connect Four position (the openings and the
field's 12-stone book before 12 stones, the solver to the end after: win, draw or loss, and in how many plies),
Quarto positions its solver finishes within the node budget or the search sees to the end, and any position
whose search proves a win or a loss. Elsewhere the value is the master's
search score at a fixed node budget, mapped to an expected score by a logistic curve per game: the same
game gives the same analysis on any machine (no clock is ever looked at).

Labels, from the mover's side (``loss`` = the value after the engine's best move − the value after the move
played, both valued from the opponent's side by the same search, so that an evaluation's bias towards the
side to move cancels out and the best move loses nothing):

``blunder``     turns a won or drawn game into a lost one (exact values), or loses 0.3 or more;
``mistake``     turns a won game into a draw (exact), or loses 0.15 or more;
``inaccuracy``  loses 0.06 or more;
``best``        the engine's own move (or, with exact values, a move keeping the best result as fast);
``good``        anything else.

``only`` marks the only move that keeps the position's exact result (Connect Four, where the solver can
say it cheaply for every column). A player's accuracy is lichess's formula over the expected scores.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from protocol.games import get_game

VERSION = 2
"""Bumped whenever a change would give a different analysis of the same game."""

NODES: dict[str, int] = {
    "connect4": 4_000_000,
    "santorini": 300_000,
    "amazons": 40_000,
    "magnetic-cave": 300_000,
    "quarto": 300_000,
}
"""The default node budget per position of the master's search. Connect Four's only bounds a heuristic search that
never runs: every Connect Four position is solved exactly, with no node limit (see :func:`budget_words`)."""

SCALE: dict[str, float] = {"connect4": 40.0, "santorini": 100.0, "amazons": 150.0, "magnetic-cave": 150.0,
                           "quarto": 400.0}
"""Score units per step of the logistic curve, per game: a score of ``SCALE`` is an expected score of 0.73.
Quarto's is wide: its heuristic swings by the parity of the search (±40) in positions that are draws with
best play, so only its exact values (near the end) move the verdicts."""

BLUNDER, MISTAKE, INACCURACY = 0.3, 0.15, 0.06
"""Expected score lost by a move from which it is labelled a blunder, a mistake, an inaccuracy."""

OUTCOME_VALUE = {"win": 1.0, "draw": 0.5, "loss": 0.0}
RESULTS_BEFORE_THE_END = frozenset({"amazons"})
"""Games whose master engine proves a result before the game ends (Amazons' decided races: ``game_result`` in
``bots/engine/amazons/endgame.py``): its mate distances count plies to the proof, not to the end, so none is given."""


@dataclass(frozen=True)
class Value:
    """The engine's verdict on a position, for the side to move."""

    expected: float  # expected score, 0..1
    exact: bool
    outcome: str | None = None  # win, draw or loss when exact
    plies: int | None = None  # plies to the end, when exact and known
    best: Any = None  # the best move (reference move), None at the end of the game
    score: int = 0  # the engine's score
    depth: int = 0

    def to_json(self, game: Any) -> dict[str, Any]:
        """The verdict in the analysis' JSON."""
        return {"value": round(self.expected, 4), "exact": self.exact, "outcome": self.outcome, "plies": self.plies,
                "best": None if self.best is None else game.notation(self.best), "score": self.score,
                "depth": self.depth}


def budget_words(game_id: str, nodes: int) -> str:
    """What the engine spends on each position of a ``game_id`` game analysed at ``nodes`` a position, in words
    (``plyhall analyse`` prints it)."""
    if game_id == "connect4":
        return "every position solved exactly (the field's 12-stone book, then the solver to the end of the game)"
    return f"{nodes:,} nodes a position"


def expected_score(score: int, scale: float) -> float:
    """A heuristic score as an expected score (0..1) on a logistic curve."""
    return 1.0 / (1.0 + math.exp(-score / scale))


def move_accuracy(before: float, after: float) -> float:
    """lichess's accuracy of one move, in percent, from the mover's expected scores before and after it."""
    lost = max(0.0, (before - after) * 100.0)
    return max(0.0, min(100.0, 103.1668 * math.exp(-0.04354 * lost) - 3.1669))


def label(before: Value, after: Value, played_best: bool) -> str:
    """The label of a move, from the mover's values before and after it (``after`` from the mover's side)."""
    if before.exact and after.exact and before.outcome and after.outcome:
        drop = OUTCOME_VALUE[before.outcome] - OUTCOME_VALUE[after.outcome]
        if drop > 0:
            return "blunder" if after.outcome == "loss" else "mistake"
        if played_best or before.plies is None or after.plies is None or before.plies == after.plies:
            return "best"
        return "good"
    lost = before.expected - after.expected
    if lost >= BLUNDER:
        return "blunder"
    if lost >= MISTAKE:
        return "mistake"
    if lost >= INACCURACY:
        return "inaccuracy"
    return "best" if played_best else "good"


def flip(value: Value) -> Value:
    """A position's value seen from the other side (the mover's value after its move)."""
    outcome = {"win": "loss", "loss": "win", "draw": "draw", None: None}[value.outcome]
    plies = None if value.plies is None else value.plies + 1
    return Value(1.0 - value.expected, value.exact, outcome, plies, None, -value.score, value.depth)


class Analyser:
    """The master engine of one game, set up for reproducible analysis (a node budget, never a clock)."""

    def __init__(self, game_id: str, nodes: int | None = None) -> None:
        import importlib

        from bots import MASTERS

        self.game = get_game(game_id)
        self.nodes = NODES[game_id] if nodes is None else nodes
        if self.nodes < 1000:
            raise ValueError("the node budget must be at least 1000 nodes a position")
        module_name, class_name = MASTERS[game_id]
        module = importlib.import_module(f"bots.engine.{module_name}")
        search_nodes = self.nodes // 10 if game_id == "connect4" else self.nodes
        self.engine = getattr(module, class_name)(game_id, "master", 0, node_limit=search_nodes)
        self.scale = SCALE[game_id]

    def fresh(self) -> None:
        """Forget every table (the search's and the solver's): each game is analysed from the same empty memory, so
        the same game always gets the same values, whatever was analysed before it."""
        self.engine.new_game()
        if hasattr(self, "_tables"):
            self._tables.entries.fill(0)

    def value(self, state: Any) -> Value:
        """The value of ``state`` for the side to move."""
        outcome = self.game.outcome(state)
        if outcome is not None:
            if outcome.is_draw:
                return Value(0.5, True, "draw", 0)
            won = outcome.winner == self.game.to_move(state)
            return Value(1.0 if won else 0.0, True, "win" if won else "loss", 0)
        if self.game.id == "connect4":
            solved = self._solve_connect4(state)
            if solved is not None:
                return solved
        if self.game.id == "quarto":
            solved = self._solve_quarto(state)
            if solved is not None:
                return solved
        return self._search(state)

    def _search(self, state: Any) -> Value:
        from bots.engine.search import MATE, MATE_BOUND

        result = self.engine.think(state)
        best = self.engine.reference_move(self.engine.engine_position(state), result.move)
        score = int(result.score)
        # a proven result's distance is the plies to the end of the game, except where the engine proves results
        # before the end: Amazons' decided races (separated regions whose turn counts already say who runs out
        # first), where it is only the plies to the proof (a "win in 1" with the opponent to move): none is given
        plies: Callable[[int], int | None] = (lambda _: None) if self.game.id in RESULTS_BEFORE_THE_END else int
        if score > MATE_BOUND:
            return Value(1.0, True, "win", plies(MATE - score), best, score, result.depth)
        if score < -MATE_BOUND:
            return Value(0.0, True, "loss", plies(MATE + score), best, score, result.depth)
        if self.game.id == "quarto" and result.depth >= _empty_squares(state):
            return Value(0.5, True, "draw", None, best, score, result.depth)  # searched to the end: a proven draw
        return Value(expected_score(score, self.scale), False, None, None, best, score, result.depth)

    def _solve_connect4(self, state: Any) -> Value | None:
        """The exact value of a running Connect Four position: below 12 stones from the opening table or the solver
        over the field's 12-stone book, from 12 stones on from the solver (no node limit: always exact)."""
        from bots.engine.connect4.book import opening_move
        from bots.engine.connect4.position import CELLS, from_state, to_drop
        from bots.engine.connect4.solver import solve_column

        position, mask, stones = from_state(state)
        tables = self._solver_tables()
        found = opening_move(position, mask, stones, tables)
        if found is not None:
            column, score = found
        else:
            column, score, solved = solve_column(np.uint64(position), np.uint64(mask), stones, tables, math.inf)
            if not solved:
                return None
        score = int(score)
        if score == 0:
            return Value(0.5, True, "draw", CELLS - stones, to_drop(column), 0, CELLS - stones)
        # Pons' score: a win scores 22 less the winner's stones at the win
        winner_stones = (CELLS + 2) // 2 - abs(score)
        if score > 0:
            plies = 2 * (winner_stones - stones // 2) - 1
        else:
            plies = 2 * (winner_stones - (stones + 1) // 2)
        return Value(1.0 if score > 0 else 0.0, True, "win" if score > 0 else "loss", plies, to_drop(column), score,
                     plies)

    def _solve_quarto(self, state: Any) -> Value | None:
        from bots.engine.quarto.master import SOLVER_EMPTIES
        from bots.engine.quarto.position import from_state, to_quarto_move
        from bots.engine.quarto.solver import new_solver_tables, solve, to_search_score
        from bots.engine.search import MATE

        empty = _empty_squares(state)
        if state.in_hand is None or empty > SOLVER_EMPTIES:
            return None
        if not hasattr(self, "_tables"):
            self._tables = new_solver_tables(self.nodes, 1 << 20)
        score, move, solved = solve(from_state(state), self._tables)
        if not solved:
            return None
        best = to_quarto_move(move)
        if score == 0:
            return Value(0.5, True, "draw", None, best, 0, empty)
        value = to_search_score(int(score), empty)
        won = score > 0
        return Value(1.0 if won else 0.0, True, "win" if won else "loss", MATE - abs(value), best, value, empty)

    def _solver_tables(self) -> Any:
        from bots.engine.connect4.fieldbook import field_book
        from bots.engine.connect4.solver import new_solver_tables

        if not hasattr(self, "_tables"):
            self._tables = new_solver_tables(None, field_book())  # Connect Four is solved to the end, every position
        return self._tables

    def only_move(self, state: Any, value: Value) -> Any:
        """The only move keeping ``value``'s exact outcome, or None (Connect Four: every column is solved)."""
        if self.game.id != "connect4" or not value.exact or value.outcome == "loss":
            return None
        keeping = []
        for move in self.game.legal_moves(state):
            child = self.value(self.game.apply(state, move))
            if not child.exact:
                return None
            if flip(child).outcome == value.outcome:
                keeping.append(move)
            if len(keeping) > 1:
                return None
        return keeping[0] if len(keeping) == 1 else None


def _empty_squares(state: Any) -> int:
    return sum(1 for cell in state.board if cell < 0)


def analyse(game_id: str, moves: list[str], options: dict[str, Any] | None = None, nodes: int | None = None,
            progress: Callable[[int, int], None] | None = None, analyser: Analyser | None = None) -> dict[str, Any]:
    """The analysis of a game given by its moves (notation), as JSON: every position's value, every move's
    verdict, and each seat's accuracy and counts. ``progress(done, total)`` is called after each position."""
    analyser = analyser or Analyser(game_id, nodes)
    analyser.fresh()
    game = analyser.game
    state = game.initial_state(**(options or {}))
    states = [state]
    played = []
    for text in moves:
        move = game.parse_move(text, state)
        state = game.apply(state, move)
        played.append(move)
        states.append(state)
    values = []
    for done, position in enumerate(states, 1):
        values.append(analyser.value(position))
        if progress is not None:
            progress(done, len(states))
    verdicts = []
    for i, move in enumerate(played):
        verdicts.append(_verdict(analyser, states[i], move, _value_before(analyser, states[i], move, values[i],
                                                                          values[i + 1]), values[i + 1], i, values[i]))
    return {
        "version": VERSION, "game": game_id, "engine": "master", "nodes": analyser.nodes,
        "method": budget_words(game_id, analyser.nodes),
        "positions": [v.to_json(game) for v in values],
        "moves": verdicts,
        "summary": {str(seat): _summary([v for v in verdicts if v["seat"] == seat]) for seat in (0, 1)},
    }


def _value_before(analyser: Analyser, state: Any, move: Any, position: Value, played_after: Value) -> Value:
    """The mover's value before ``move``: the position's own when it is exact (its best move keeps it); else the
    value after the engine's best move, valued from the opponent's side as the move played is (so that a bias of
    the evaluation towards the side to move cancels out), never exact (the engine's move is no proof)."""
    game = analyser.game
    if position.exact:
        return position
    best = position.best
    if best is None or game.notation(best) == game.notation(move):
        best_after = played_after  # the engine's own move: the best there is, it loses nothing
    else:
        best_after = analyser.value(game.apply(state, best))
    mover = flip(best_after)
    return Value(mover.expected, False, None, None, best, mover.score, mover.depth)


def _verdict(analyser: Analyser, state: Any, move: Any, before: Value, next_value: Value, index: int,
             position: Value) -> dict:
    """One move's verdict: ``before`` is the mover's value after the best move, ``next_value`` the opponent's value
    after the move played (the turn passes after every move, in every game), ``position`` the value of ``state``.
    Both sides of the comparison are valued from the opponent's side, by the same kind of search: an evaluation
    that favours the side to move (Magnetic Cave's does) cancels out, and the best move loses nothing."""
    game = analyser.game
    seat = game.to_move(state)
    after = flip(next_value)
    best = position.best
    played_best = best is not None and game.notation(best) == game.notation(move)
    verdict = {
        "ply": index + 1, "seat": seat, "move": game.notation(move),
        "best": None if best is None else game.notation(best),
        "before": round(before.expected, 4), "after": round(after.expected, 4),
        "loss": round(max(0.0, before.expected - after.expected), 4),
        "exact": before.exact and after.exact,
        "outcome_before": before.outcome, "outcome_after": after.outcome,
        "plies_before": before.plies, "plies_after": after.plies,
        "label": label(before, after, played_best),
        "accuracy": round(move_accuracy(before.expected, after.expected), 2),
    }
    only = analyser.only_move(state, position)
    verdict["only"] = only is not None and game.notation(only) == game.notation(move)
    return verdict


def _summary(verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    labels = [v["label"] for v in verdicts]
    accuracy = sum(v["accuracy"] for v in verdicts) / len(verdicts) if verdicts else None
    return {"moves": len(verdicts), "accuracy": None if accuracy is None else round(accuracy, 1),
            "blunders": labels.count("blunder"), "mistakes": labels.count("mistake"),
            "inaccuracies": labels.count("inaccuracy")}
