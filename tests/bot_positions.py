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


# Hand-made positions --------------------------------------------------------------------------------

C4 = GAMES["connect4"]
CAVE = GAMES["magnetic-cave"]
AMAZONS = GAMES["amazons"]
SANTORINI = GAMES["santorini"]
QUARTO = GAMES["quarto"]

AMAZONS_SHUT_IN = AMAZONS.from_picture(
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

AMAZONS_CORNERED = AMAZONS.from_picture(
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

SANTORINI_CLIMB = SANTORINI.from_picture("""
    5  0B 0  0  0  0
    4  0  3  0  3  0
    3  0  0  2A 0  0
    2  0  0  0  0  0
    1  0A 0  0  0  0B
        a  b  c  d  e
""", to_move=0)
"""Seat 0's worker on c3 (level 2) climbs onto b4 or d4 (level 3) and wins."""

SANTORINI_THREAT = SANTORINI.from_picture("""
    5  0B 0  0  0  0A
    4  0  0  0  3  0
    3  0  0  2B 0  0
    2  0  0  0  0  0
    1  0A 0  0  0  0
        a  b  c  d  e
""", to_move=0)
"""Seat 1 on c3 (level 2) threatens d4 (level 3); seat 0 must dome d4 from e5's side."""

QUARTO_THREE = """
    4  .... .... .... ....
    3  .... .... .... ....
    2  .... .... .... ....
    1  1000 1001 1010 ....
          a    b    c    d
"""
"""a1-c1 share colour 1 and shape 0: a piece that does too wins on d1."""

WIN_IN_ONE: dict[str, tuple[Any, set[str] | None]] = {
    "connect4": (C4.start("1", "1", "2", "2", "3", "3"), {"4"}),
    "magnetic-cave": (CAVE.start("a1", "h8", "b1", "h7", "c1", "h6", "d1", "h1"), {"e1"}),
    "santorini": (SANTORINI_CLIMB, {"c3-d4", "c3-b4"}),
    "quarto": (QUARTO.from_picture(QUARTO_THREE, to_move=0, in_hand="1011"), {"d1"}),
    "amazons": (AMAZONS_SHUT_IN, None),  # many turns reach c1; brute force lists them
}
"""Game -> (position, notation of its only winning moves, or None to trust brute force)."""

MUST_DEFEND: dict[str, tuple[Any, set[str] | None]] = {
    # X threatens d1; O to move must take it
    "connect4": (C4.start("1", "1", "2", "2", "3", "3", "7"), {"4"}),
    # black a1-d1 threatens e1
    "magnetic-cave": (CAVE.start("a1", "h8", "b1", "h7", "c1", "h6", "d1"), {"e1"}),
    "santorini": (SANTORINI_THREAT, {"e5-d5/d4", "e5-e4/d4"}),
    # handing over a piece with colour 1 or shape 0 loses on d1
    "quarto": (QUARTO.from_picture(QUARTO_THREE, to_move=0, in_hand="0111"), None),
    "amazons": (AMAZONS_CORNERED, None),
}
"""Game -> (position where some moves lose at once and some do not, notation of the safe moves or None)."""
