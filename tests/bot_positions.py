"""Positions and brute-force helpers shared by the bot tests."""

from __future__ import annotations

from typing import Any

from bots import make_bot
from bots.evaluate import Evaluator
from protocol.games import GAMES


def brute_force(game_id: str) -> Evaluator:
    """An evaluator that answers every question by trying all legal moves."""
    return type("BruteForce", (Evaluator,), {"game_id": game_id})()


def wins_in_one(game_id: str, state: Any) -> list[Any]:
    """The moves that win at once, found by trying every legal move."""
    return brute_force(game_id).winning_moves(state)


def safe_moves(game_id: str, state: Any) -> list[Any]:
    """The legal moves after which the opponent cannot win at once (by brute force)."""
    game = GAMES[game_id]
    return [m for m in game.legal_moves(state) if not wins_in_one(game_id, game.apply(state, m))]


def novice_choices(game_id: str, state: Any, tries: int = 8) -> set[Any]:
    """The moves novice bots with ``tries`` different seeds choose."""
    return {make_bot(game_id, "novice", seed=seed).choose(state) for seed in range(tries)}


def picture(game_id: str, text: str, to_move: int) -> Any:
    """A position from a board picture, top rank first, one symbol per square."""
    symbols = {"connect4": ".XO", "magnetic-cave": ".BW", "amazons": ".BWx"}[game_id]
    rows = [[symbols.index(c) for c in line.split()] for line in text.strip().splitlines()]
    return GAMES[game_id].decode_state({"board": rows, "to_move": to_move}, "matrix")


def santorini(levels: dict[str, int], workers: tuple[str, str, str, str], to_move: int) -> Any:
    """A Santorini position: levels by square name (others 0), seat 0's two workers then seat 1's."""
    grid = GAMES["santorini"].grid
    level_cells = [0] * 25
    worker_cells = [0] * 25
    for name, level in levels.items():
        level_cells[grid.parse_name(name)] = level
    for i, name in enumerate(workers):
        worker_cells[grid.parse_name(name)] = i // 2 + 1
    return GAMES["santorini"].decode_state(
        {"levels": grid.rows_for(tuple(level_cells)), "workers": grid.rows_for(tuple(worker_cells)),
         "to_move": to_move}
    )


def quarto(pieces: dict[str, str], in_hand: str, to_move: int = 0) -> Any:
    """A Quarto position: pieces by square name, and the piece in hand."""
    grid = GAMES["quarto"].grid
    cells = [None] * 16
    for name, piece in pieces.items():
        cells[grid.parse_name(name)] = piece
    return GAMES["quarto"].decode_state(
        {"board": grid.rows_for(tuple(cells)), "in_hand": in_hand, "to_move": to_move}
    )


# Hand-made positions --------------------------------------------------------------------------------

C4 = GAMES["connect4"]
CAVE = GAMES["magnetic-cave"]

AMAZONS_SHUT_IN = picture(
    "amazons",
    """
    . . . . . . . . . .
    . . . . . . . . . .
    . . . . . . . . . .
    . . . . . . . . . .
    . . . . . . . B . B
    . . . . . . . . . .
    . . . . . . . . . B
    x x x . . . . . . .
    W W x . . . . . . .
    W W . . . . . B . .
    """,
    to_move=0,
)
"""White's four queens in the a1 corner have one empty neighbour left, c1."""

AMAZONS_CORNERED = picture(
    "amazons",
    """
    B x x x . . x . . .
    x x W x B x x x x x
    . x x x x x x . x W
    x x x . x x x x x x
    B x . x x x x x W x
    . x x . x . x x x x
    x W x x x . x x x .
    . . x . x x x x . x
    x x x . . x . x . x
    B x x x x . x . . x
    """,
    to_move=1,
)
"""From a random game: three of white's five turns let black shut white in."""

WIN_IN_ONE: dict[str, tuple[Any, set[str] | None]] = {
    "connect4": (C4.start("1", "1", "2", "2", "3", "3"), {"4"}),
    "magnetic-cave": (CAVE.start("a1", "h8", "b1", "h7", "c1", "h6", "d1", "h1"), {"e1"}),
    "santorini": (santorini({"c3": 2, "d4": 3, "b4": 3}, ("c3", "a1", "e1", "a5"), 0), {"c3-d4", "c3-b4"}),
    "quarto": (quarto({"a1": "1000", "b1": "1001", "c1": "1010"}, "1011"), {"d1"}),
    "amazons": (AMAZONS_SHUT_IN, None),  # many turns reach c1; brute force lists them
}
"""Game -> (position, notation of its only winning moves, or None to trust brute force)."""

MUST_DEFEND: dict[str, tuple[Any, set[str] | None]] = {
    # X threatens d1; O to move must take it
    "connect4": (C4.start("1", "1", "2", "2", "3", "3", "7"), {"4"}),
    # black a1-d1 threatens e1
    "magnetic-cave": (CAVE.start("a1", "h8", "b1", "h7", "c1", "h6", "d1"), {"e1"}),
    # seat 1 on c3 (level 2) threatens d4 (level 3); seat 0 must dome d4 from e5's side
    "santorini": (santorini({"c3": 2, "d4": 3}, ("a1", "e5", "c3", "a5"), 0), {"e5-d5/d4", "e5-e4/d4"}),
    # a1-c1 share colour 1 and shape 0: handing over such a piece loses on d1
    "quarto": (quarto({"a1": "1000", "b1": "1001", "c1": "1010"}, "0111"), None),
    "amazons": (AMAZONS_CORNERED, None),
}
"""Game -> (position where some moves lose at once and some do not, notation of the safe moves or None)."""
