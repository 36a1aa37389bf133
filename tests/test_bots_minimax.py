"""The minimax levels: the shared alpha-beta search and each game's evaluation.

The search prunes, orders moves and tries killer moves first, none of which
may change the value it finds: on random positions it must agree with a
plain, unpruned negamax. On hand-made positions it must find the forced wins
within its depth, and prefer the sooner of two wins.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from bots import make_bot
from bots.evaluate import evaluator_for
from bots.evaluate.connect4 import GOOD_THREAT_POINTS, OTHER_THREAT_POINTS
from bots.minimax import WIN, AlphaBeta
from protocol.games import GAMES

from .bot_positions import AMAZONS_SHUT_IN, MUST_DEFEND, QUARTO_THREE, safe_moves


def negamax(game_id: str, state: Any, depth: int, ply: int = 0) -> float:
    """The textbook value of ``state`` for the player to move: every move, no pruning."""
    game = GAMES[game_id]
    outcome = game.outcome(state)
    if outcome is not None:
        if outcome.winner is None:
            return 0.0
        return WIN - ply if outcome.winner == game.to_move(state) else -(WIN - ply)
    if depth == 0:
        return evaluator_for(game_id).evaluate(state, game.to_move(state))
    return max(-negamax(game_id, game.apply(state, m), depth - 1, ply + 1) for m in game.legal_moves(state))


def search(game_id: str, state: Any, depth: int) -> tuple[Any, float]:
    result = AlphaBeta(evaluator_for(game_id)).best_move(state, depth, GAMES[game_id].legal_moves(state))
    return result.move, result.score


# (game, depth, most legal moves in a sampled position): what unpruned negamax can afford
AGREEMENT_CASES = [
    ("connect4", 4, 7),
    ("magnetic-cave", 3, 16),
    ("santorini", 2, 60),
    ("quarto", 3, 30),
    ("amazons", 2, 30),
]


@pytest.mark.parametrize(("game_id", "depth", "most_moves"), AGREEMENT_CASES, ids=[c[0] for c in AGREEMENT_CASES])
def test_alpha_beta_agrees_with_plain_negamax(game_id: str, depth: int, most_moves: int) -> None:
    game = GAMES[game_id]
    rng = random.Random(f"agree-{game_id}")
    checked = 0
    while checked < 6:
        state = game.initial_state(first=rng.randrange(2))
        plies = 0
        while game.outcome(state) is None:
            moves = game.legal_moves(state)
            # (Quarto's opening has only 16 moves, but 240 replies to each)
            if len(moves) <= most_moves and plies >= 2 and rng.random() < 0.3:
                for d in range(1, depth + 1):
                    move, score = search(game_id, state, d)
                    assert score == pytest.approx(negamax(game_id, state, d)), (d, game.render(state))
                    child_value = -negamax(game_id, game.apply(state, move), d - 1, 1)
                    assert child_value == pytest.approx(score), "the move chosen must achieve the score"
                checked += 1
                break
            state = game.apply(state, rng.choice(moves))
            plies += 1


def test_search_scores_an_immediate_win_highest() -> None:
    state = GAMES["connect4"].start("1", "1", "2", "2", "3", "3")  # X wins on 4 now
    for depth in (1, 2, 5):
        move, score = search("connect4", state, depth)
        assert move.column == 3
        assert score == WIN - 1


def test_connect4_double_threat_needs_depth_3() -> None:
    # X holds b1 c1; d1 makes a three open on both ends (a1 and e1): O cannot stop both
    state = GAMES["connect4"].start("2", "2", "3", "3")
    move, score = search("connect4", state, 3)
    assert (move.column, score) == (3, WIN - 3)
    assert search("connect4", state, 2)[1] < WIN - 100  # too shallow to see it
    assert make_bot("connect4", "minimax-3", seed=1).choose(state).column == 3


def test_connect4_minimax_2_blocks_a_threat() -> None:
    state = MUST_DEFEND["connect4"][0]  # X threatens d1; O to move
    for seed in range(3):
        assert make_bot("connect4", "minimax-2", seed=seed).choose(state).column == 3


def test_magnetic_cave_double_threat_needs_depth_3() -> None:
    # black a2 a3 a4: a5 makes an open four with a1 and a6 both free
    cave = GAMES["magnetic-cave"]
    state = cave.start("a2", "h1", "a3", "h8", "a4", "h4")
    move, score = search("magnetic-cave", state, 3)
    assert (cave.notation(move), score) == ("a5", WIN - 3)


def test_santorini_climb_next_to_two_level_3_squares_needs_depth_3() -> None:
    # c3 (level 1) up to c4 (level 2) next to b5 and d5 (level 3): seat 1 is too far to dome both
    state = GAMES["santorini"].from_picture("""
        5  0  3  0  3  0
        4  0  0  2  0  0
        3  0  0  1A 0  0
        2  0  0  0  0  0
        1  0B 0  0A 0  0B
            a  b  c  d  e
    """, to_move=0)
    move, score = search("santorini", state, 3)
    assert score == WIN - 3
    assert GAMES["santorini"].notation(move).startswith("c3-c4/")
    assert search("santorini", state, 2)[1] < WIN - 100


def test_santorini_minimax_1_blocks_a_win_next_turn() -> None:
    state = MUST_DEFEND["santorini"][0]
    safe = set(safe_moves("santorini", state))
    for seed in range(3):
        assert make_bot("santorini", "minimax-1", seed=seed).choose(state) in safe


def test_quarto_minimax_1_wins_and_minimax_2_hands_over_no_winning_piece() -> None:
    state = GAMES["quarto"].from_picture(QUARTO_THREE, to_move=0, in_hand="1011")
    assert GAMES["quarto"].notation(make_bot("quarto", "minimax-1", seed=1).choose(state)) == "d1"
    defend = MUST_DEFEND["quarto"][0]
    safe = set(safe_moves("quarto", defend))
    for seed in range(3):
        assert make_bot("quarto", "minimax-2", seed=seed).choose(defend) in safe


def test_amazons_minimax_1_shuts_the_opponent_in() -> None:
    move, score = search("amazons", AMAZONS_SHUT_IN, 1)
    assert score == WIN - 1
    assert GAMES["amazons"].grid.parse_name("c1") in (move.to, move.arrow)


def test_amazons_minimax_2_avoids_being_shut_in() -> None:
    state = MUST_DEFEND["amazons"][0]
    safe = set(safe_moves("amazons", state))
    assert make_bot("amazons", "minimax-2", seed=1).choose(state) in safe


def test_a_forced_loss_is_scored_by_its_distance() -> None:
    # O to move cannot stop X's double threat (a1/e1): X wins at ply 2 whatever O does
    state = GAMES["connect4"].start("2", "2", "3", "3", "4")
    _, score = search("connect4", state, 4)
    assert score == -(WIN - 2)


class TestEvaluations:
    def test_connect4_counts_open_windows_for_the_side(self) -> None:
        ev = evaluator_for("connect4")
        state = GAMES["connect4"].start("4")
        assert ev.evaluate(state, 0) > 0 > ev.evaluate(state, 1)
        assert ev.evaluate(state, 0) == -ev.evaluate(state, 1)
        assert ev.evaluate(GAMES["connect4"].initial_state(), 0) == 0

    def test_connect4_prefers_threats_on_the_owners_rows(self) -> None:
        # X (seat 0, who moved first: the counts are equal and X is to move) threatens d3, an odd row
        ev = evaluator_for("connect4")
        rows = """
            . . . . . . .
            . . . . . . .
            . . . . . . .
            X X X . . . .
            X O O . . . .
            O O X . . . O
        """
        mine = GAMES["connect4"].from_picture(rows, to_move=0)
        # the same stones with the colours swapped: now the second player holds the odd-row threat
        theirs = GAMES["connect4"].from_picture(rows.replace("X", "o").replace("O", "X").replace("o", "O"), to_move=0)
        # the windows score the same for the threat's owner; only the threat's parity differs
        assert ev.evaluate(mine, 0) - ev.evaluate(theirs, 1) == GOOD_THREAT_POINTS - OTHER_THREAT_POINTS

    def test_magnetic_cave_counts_open_lines_of_five(self) -> None:
        ev = evaluator_for("magnetic-cave")
        cave = GAMES["magnetic-cave"]
        assert ev.evaluate(cave.initial_state(), 0) == 0
        four = cave.start("a1", "h8", "a2", "h7", "a3", "h5", "a4")
        apart = cave.start("a1", "h8", "a2", "h7", "a3", "h5", "a8")
        assert ev.evaluate(four, 0) > ev.evaluate(apart, 0) > 0

    def test_santorini_rewards_height_and_a_win_next_turn(self) -> None:
        ev = evaluator_for("santorini")
        low = GAMES["santorini"].from_picture("""
            5  0B 0  0  0  0A
            4  0  0  0  0  0
            3  0  0  0B 0  0
            2  0  0  0  0  0
            1  0A 0  0  0  0
                a  b  c  d  e
        """, to_move=0)
        high = GAMES["santorini"].from_picture("""
            5  0B 0  0  0  0A
            4  0  0  0  0  0
            3  0  0  0B 0  0
            2  0  0  0  0  0
            1  1A 0  0  0  0
                a  b  c  d  e
        """, to_move=0)
        assert ev.evaluate(high, 0) > ev.evaluate(low, 0)
        threat = GAMES["santorini"].from_picture("""
            5  0B 0  0  0  0A
            4  0  0  0  0  0
            3  0  0  0B 0  0
            2  0  3  0  0  0
            1  2A 0  0  0  0
                a  b  c  d  e
        """, to_move=0)
        assert ev.evaluate(threat, 0) >= 500
        assert ev.evaluate(GAMES["santorini"].from_picture(str(threat), to_move=1), 1) < 0

    def test_amazons_mobility(self) -> None:
        ev = evaluator_for("amazons")
        amazons = GAMES["amazons"]
        start = amazons.initial_state()
        assert ev.evaluate(start, 0) == 0
        assert ev.evaluate(AMAZONS_SHUT_IN, 0) > 20

    def test_quarto_has_no_opinion_until_decided(self) -> None:
        ev = evaluator_for("quarto")
        assert ev.evaluate(GAMES["quarto"].start("0000", "a1 0001"), 0) == 0
