"""The bot interface: levels, make_bot, time budgets, and legal play in every game."""

from __future__ import annotations

import pickle
import subprocess
import sys

import pytest

from bots import LEVELS, LEVELS_HELP, MAX_MINIMAX_DEPTH, Bot, BotConfigError, TimeBudget, make_bot, parse_level
from bots.base import MIN_THINK_SECONDS
from protocol.games import GAMES

# Deeper levels play too slowly in pure Python for the suite in the big games.
DEEPEST_TESTED = {"connect4": 3, "magnetic-cave": 3, "santorini": 2, "quarto": 2, "amazons": 1}


def level_cases() -> list[tuple[str, str]]:
    cases = []
    for game_id in sorted(GAMES):
        levels = ["random", "novice"] + [f"minimax-{d}" for d in range(1, DEEPEST_TESTED[game_id] + 1)]
        cases += [(game_id, level) for level in levels]
    return cases


@pytest.mark.parametrize(("game_id", "level"), level_cases())
def test_every_level_plays_only_legal_moves(game_id: str, level: str) -> None:
    game = GAMES[game_id]
    for first in (0, 1):
        bots = [make_bot(game_id, level, seed=10 * first + seat) for seat in (0, 1)]
        state = game.initial_state(first=first)
        while game.outcome(state) is None:
            move = bots[game.to_move(state)].choose(state, TimeBudget(per_move=1.0))
            assert move in game.legal_moves(state)
            state = game.apply(state, move)


def test_amazons_minimax_2_answers_the_opening() -> None:
    game = GAMES["amazons"]
    state = game.initial_state()
    assert make_bot("amazons", "minimax-2", seed=1).choose(state) in game.legal_moves(state)


@pytest.mark.parametrize("level", ["random", "novice", "minimax-2"])
def test_same_seed_same_moves(level: str) -> None:
    game = GAMES["santorini"]

    def play(seed: int) -> list:
        bots = [make_bot("santorini", level, seed=seed), make_bot("santorini", level, seed=seed + 1)]
        state, moves = game.initial_state(), []
        while game.outcome(state) is None and len(moves) < 12:
            moves.append(bots[game.to_move(state)].choose(state))
            state = game.apply(state, moves[-1])
        return moves

    assert play(5) == play(5)
    assert any(play(5) != play(seed) for seed in (6, 7, 8))


@pytest.mark.parametrize("level", ["random", "novice", "minimax-3"])
def test_bots_survive_pickling_and_keep_their_seeded_choices(level: str) -> None:
    game = GAMES["connect4"]
    state = game.start("4", "4")
    bot = make_bot("connect4", level, seed=3)
    copy = pickle.loads(pickle.dumps(bot))
    assert isinstance(copy, Bot)
    assert (copy.game_id, copy.level, copy.seed) == ("connect4", level, 3)
    assert [copy.choose(state) for _ in range(5)] == [bot.choose(state) for _ in range(5)]


def test_make_bot_names_the_game_and_level() -> None:
    bot = make_bot("quarto", " Minimax-2 ", seed=None)
    assert bot.level == "minimax-2"
    assert bot.game is GAMES["quarto"]
    assert "quarto" in repr(bot)


@pytest.mark.parametrize(
    ("level", "expected"),
    [("random", ("random", None)), ("novice", ("novice", None)), ("minimax-1", ("minimax", 1)),
     (f"minimax-{MAX_MINIMAX_DEPTH}", ("minimax", MAX_MINIMAX_DEPTH))],
)
def test_parse_level(level: str, expected: tuple) -> None:
    assert parse_level(level) == expected


@pytest.mark.parametrize("level", ["minimax-x", "minimax-0", "minimax-9", "minimax", "expert", "", None, 3])
def test_unknown_levels_are_refused_with_the_accepted_ones(level: object) -> None:
    with pytest.raises(BotConfigError) as info:
        make_bot("connect4", level)  # type: ignore[arg-type]
    message = str(info.value)
    assert "unknown level" in message
    assert "random, novice, minimax-N (N = 1..8)" in message


@pytest.mark.parametrize("command", ["match", "play", "bot"])
def test_the_commands_that_take_a_level_list_every_level_in_their_help(command: str) -> None:
    out = subprocess.run([sys.executable, "-m", "plyhall", command, "--help"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert LEVELS_HELP in " ".join(out.stdout.split()) and "master" in LEVELS_HELP


def test_unknown_game_is_refused_with_the_games() -> None:
    with pytest.raises(BotConfigError, match="unknown game 'chess'; games: connect4"):
        make_bot("chess", "random")
    assert isinstance(BotConfigError("x"), ValueError)


def test_levels_are_described() -> None:
    assert set(LEVELS) == {"random", "novice", "minimax-N", "master"}
    assert all(LEVELS.values())


def test_a_finished_game_has_no_move_to_choose() -> None:
    game = GAMES["connect4"]
    state = game.start("1", "2", "1", "2", "1", "2", "1")
    assert game.outcome(state) is not None
    for level in ("random", "novice", "minimax-2"):
        with pytest.raises(ValueError, match="over"):
            make_bot("connect4", level).choose(state)


class TestTimeBudget:
    def test_no_limits_means_no_deadline(self) -> None:
        assert TimeBudget().move_deadline_seconds() is None

    def test_per_move_limit_keeps_a_margin(self) -> None:
        assert TimeBudget(per_move=2.0).move_deadline_seconds(margin=0.25) == pytest.approx(1.75)

    def test_clock_gives_a_share_of_the_remaining_time_plus_increment(self) -> None:
        assert TimeBudget(remaining=60.0, increment=1.0).move_deadline_seconds() == pytest.approx(2.8)

    def test_the_tighter_limit_wins(self) -> None:
        assert TimeBudget(remaining=60.0, per_move=1.0).move_deadline_seconds() == pytest.approx(0.8)
        assert TimeBudget(remaining=3.0, per_move=10.0).move_deadline_seconds() == pytest.approx(0.1)

    def test_never_beyond_the_clock_nor_below_the_floor(self) -> None:
        assert TimeBudget(remaining=1.0, increment=5.0).move_deadline_seconds() == pytest.approx(0.8)
        assert TimeBudget(per_move=0.1).move_deadline_seconds() == MIN_THINK_SECONDS
        # but never the whole of a tiny clock: a master at 0.05 s a move lost every game on its first move
        assert TimeBudget(remaining=0.01).move_deadline_seconds() == pytest.approx(0.005)
        assert TimeBudget(per_move=0.05).move_deadline_seconds(margin=0.0125) == pytest.approx(0.0375)
        assert TimeBudget(per_move=0.05).move_deadline_seconds() == pytest.approx(0.025)

    def test_is_a_frozen_value(self) -> None:
        budget = TimeBudget(per_move=1.0)
        with pytest.raises(AttributeError):
            budget.per_move = 2.0  # type: ignore[misc]
        assert budget == TimeBudget(per_move=1.0)
