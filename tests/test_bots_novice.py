"""The novice level and the immediate tactics it relies on, checked against brute force.

``novice`` must take a win in one whenever there is one, and must never play a
move after which the opponent wins in one, unless every move does so.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from bots import make_bot
from bots.evaluate import evaluator_for
from protocol.games import GAMES
from protocol.games.quarto import QuartoMove
from protocol.games.santorini import WorkerTurn

from .bot_positions import AMAZONS_SHUT_IN, MUST_DEFEND, WIN_IN_ONE, novice_choices, safe_moves, wins_in_one


def test_amazons_shut_in_position_is_as_described() -> None:
    wins = wins_in_one("amazons", AMAZONS_SHUT_IN)
    c1 = GAMES["amazons"].grid.parse_name("c1")
    assert wins and all(c1 in (m.to, m.arrow) for m in wins)


@pytest.mark.parametrize("game_id", sorted(WIN_IN_ONE))
def test_novice_takes_a_win_in_one(game_id: str) -> None:
    game = GAMES[game_id]
    state, notation = WIN_IN_ONE[game_id]
    expected = wins_in_one(game_id, state)
    if notation is not None:
        assert {game.notation(m) for m in expected} == notation
    assert set(evaluator_for(game_id).winning_moves(state)) == set(expected)
    assert novice_choices(game_id, state) <= set(expected)


@pytest.mark.parametrize("game_id", sorted(MUST_DEFEND))
def test_novice_never_leaves_a_win_in_one_when_it_can_help_it(game_id: str) -> None:
    game = GAMES[game_id]
    state, notation = MUST_DEFEND[game_id]
    expected = safe_moves(game_id, state)
    assert expected, "the position must leave a defence"
    assert len(expected) < len(game.legal_moves(state)), "and some moves must lose at once"
    if notation is not None:
        assert {game.notation(m) for m in expected} == notation
    assert not wins_in_one(game_id, state)
    assert novice_choices(game_id, state) <= set(expected)


def test_santorini_novice_defends_by_doming_the_square() -> None:
    state, _ = MUST_DEFEND["santorini"]
    d4 = GAMES["santorini"].grid.parse_name("d4")
    for move in novice_choices("santorini", state):
        assert isinstance(move, WorkerTurn) and move.build == d4


def test_quarto_novice_hands_over_only_safe_pieces() -> None:
    state, _ = MUST_DEFEND["quarto"]
    d1 = GAMES["quarto"].grid.parse_name("d1")
    for move in novice_choices("quarto", state, tries=20):
        assert isinstance(move, QuartoMove)
        # either it fills d1 itself, or it hands over a piece with colour 0 and shape 1
        assert move.square == d1 or (move.piece is not None and move.piece >> 2 == 0b01)


def test_novice_plays_on_when_every_move_loses() -> None:
    # X threatens both a1 and e1 in Connect Four: O cannot stop both
    c4 = GAMES["connect4"]
    state = c4.start("2", "2", "3", "3", "4")
    assert not safe_moves("connect4", state)
    assert novice_choices("connect4", state) <= set(c4.legal_moves(state))


# Random positions against brute force ---------------------------------------------------------------

# Only positions with this few moves, where brute force over two plies is affordable.
MAX_MOVES_CHECKED = {"amazons": 60, "quarto": 120}


def random_positions(game_id: str, games: int, seed: str) -> list[Any]:
    game = GAMES[game_id]
    rng = random.Random(seed)
    positions = []
    for _ in range(games):
        state = game.initial_state(first=rng.randrange(2))
        while game.outcome(state) is None:
            moves = game.legal_moves(state)
            if len(moves) <= MAX_MOVES_CHECKED.get(game_id, 10_000):
                positions.append(state)
            state = game.apply(state, rng.choice(moves))
    return positions


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_fast_win_detection_matches_brute_force(game_id: str) -> None:
    evaluator = evaluator_for(game_id)
    positions = random_positions(game_id, 20 if game_id != "amazons" else 6, f"wins-{game_id}")
    with_wins = 0
    for state in positions:
        expected = wins_in_one(game_id, state)
        assert set(evaluator.winning_moves(state)) == set(expected), GAMES[game_id].render(state)
        assert evaluator.has_winning_move(state) == bool(expected)
        with_wins += bool(expected)
    assert with_wins, "the sample must include positions with a win in one"


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_novice_on_random_positions(game_id: str) -> None:
    game = GAMES[game_id]
    rng = random.Random(f"novice-{game_id}")
    positions = random_positions(game_id, 8 if game_id != "amazons" else 3, f"novice-{game_id}")
    defended = 0
    for state in rng.sample(positions, min(60, len(positions))):
        move = make_bot(game_id, "novice", seed=rng.randrange(1000)).choose(state)
        wins = wins_in_one(game_id, state)
        if wins:
            assert move in wins
            continue
        safe = safe_moves(game_id, state)
        if safe:
            assert move in safe, game.render(state)
            defended += len(safe) < len(game.legal_moves(state))
        else:
            assert move in game.legal_moves(state)
    assert defended, "the sample must include positions where some moves lose at once"
