"""Anchors pinned where they were measured, per game (issue 43, item 23): every game has every anchor level, the
pinned table is what the measured scores give (so it is ordered as measured), each game's pin is the one a rated
game and the ladder use, and Quarto's minimax-1, once weaker than novice, never hands over a winning piece."""

from __future__ import annotations

import random

import pytest

from bots import make_bot
from bots.evaluate.quarto import winning_squares
from protocol.games import GAMES
from protocol.ratings import (
    ANCHOR_DEVIATION,
    ANCHOR_LEVELS,
    LADDER_SCORES,
    MAX_ANCHOR_STEP,
    MEASURED_ANCHORS,
    RANDOM_ANCHOR,
    RatedGame,
    anchor_rating,
    anchors_from_scores,
    rate,
)
from server.core.house import HOUSE_LEVELS
from server.core.ladder import Ladder


def test_every_game_has_every_anchor_level_and_the_levels_are_the_house_levels():
    assert ANCHOR_LEVELS == HOUSE_LEVELS
    assert set(MEASURED_ANCHORS) == set(GAMES) == set(LADDER_SCORES)
    for game, pinned in MEASURED_ANCHORS.items():
        assert tuple(pinned) == ANCHOR_LEVELS, game
        assert pinned["random"] == RANDOM_ANCHOR


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_pinned_table_is_what_the_measured_scores_give_and_is_ordered_as_measured(game: str):
    pinned, scores = MEASURED_ANCHORS[game], LADDER_SCORES[game]
    assert pinned == anchors_from_scores(scores), "re-run benchmarks/ladder.py --anchors and paste both tables"
    for (score, games), lower, higher in zip(scores, ANCHOR_LEVELS, ANCHOR_LEVELS[1:], strict=False):
        assert 0 <= score <= 1 and games > 0
        step = pinned[higher] - pinned[lower]
        assert abs(step) <= MAX_ANCHOR_STEP
        assert (step > 0) == (score < 0.5) or (score == 0.5 and step == 0), (game, lower, higher, score, step)
    above = ANCHOR_LEVELS[len(scores):]  # not measured: spaced upwards by convention
    assert all(pinned[a] < pinned[b] for a, b in zip(above, above[1:], strict=False))


def test_anchors_from_scores_keeps_a_clean_sweep_finite_and_bounded():
    swept = anchors_from_scores([(0.0, 30), (1.0, 30), (0.5, 30)])
    assert swept["novice"] == RANDOM_ANCHOR + MAX_ANCHOR_STEP  # 0 of 30 is kept half a game above 0, then capped
    assert swept["minimax-1"] == swept["novice"] - MAX_ANCHOR_STEP and swept["minimax-2"] == swept["minimax-1"]
    assert swept["minimax-3"] == swept["minimax-2"] + 100 and swept["master"] == swept["minimax-8"] + 200
    assert anchors_from_scores([(0.24, 100)])["novice"] == RANDOM_ANCHOR + 200  # a 24% score: about 200 Elo


def test_a_rated_game_and_the_ladder_pin_each_games_anchor_where_it_was_measured():
    levels = [(game, level) for game in sorted(GAMES) for level in ("novice", "minimax-1", "master")]
    for game, level in levels:
        change = rate(RatedGame("g", game, (f"house-{level}-{game}", "ann"), 1, 10.0), (None, None), 0)
        assert change.after[0].rating.rating == anchor_rating(level, game) == MEASURED_ANCHORS[game][level]
        assert change.after[0].rating.deviation == ANCHOR_DEVIATION and change.change[0] == 0.0
        assert Ladder().rating(game, f"house-{level}-{game}") == (anchor_rating(level, game), ANCHOR_DEVIATION)
    novices = {MEASURED_ANCHORS[game]["novice"] for game in GAMES}
    assert len(novices) > 1, "measured per game: not one convention for all"


def test_quartos_minimax_1_never_hands_over_a_winning_piece_when_a_safe_one_is_left():
    """It did (its search stopped after its own move, and Quarto's evaluation was 0): novice beat it 10-0."""
    game = GAMES["quarto"]
    rng = random.Random(7)
    checked = 0
    for seed in range(30):
        bot = make_bot("quarto", "minimax-1", seed)
        state = game.initial_state()
        while game.outcome(state) is None:
            if _hands_over_safely(game, state, game.legal_moves(state)) and not _wins_now(state):
                assert _hands_over_safely(game, state, [bot.choose(state)]), state
                checked += 1
            state = game.apply(state, rng.choice(game.legal_moves(state)))
    assert checked >= 100


def _wins_now(state) -> bool:
    return state.in_hand is not None and bool(winning_squares(state.board, state.in_hand))


def _hands_over_safely(game, state, moves) -> bool:
    """Whether one of ``moves`` hands over a piece that cannot win at once."""
    for move in moves:
        after = game.apply(state, move)
        if game.outcome(after) is None and after.in_hand is not None and not _wins_now(after):
            return True
    return False
