"""``plyhall match`` and its library form, ``play_match``."""

from __future__ import annotations

import pytest

from bots import Bot
from client.runner.match import MatchError, play_match
from client.runner.match_result import MatchGame, MatchResult, MatchSprt, Tally
from plyhall.cli import main
from protocol.statistics import wilson_interval


def record(index: int, winner: str | None) -> MatchGame:
    return MatchGame(index, index % 2, winner, "test", 10, (0.0, 0.0), (0, 0))


def assert_totals_add_up(result: MatchResult) -> None:
    n = len(result.records)
    for tally in (result.a, result.b, result.first_player, result.second_player):
        assert tally.wins + tally.losses + tally.draws == tally.games == n
    assert result.a.wins == result.b.losses and result.a.draws == result.b.draws
    assert result.first_player.wins == result.second_player.losses
    assert result.a_first.games + result.a_second.games == n
    for field in ("wins", "losses", "draws"):
        assert getattr(result.a_first, field) + getattr(result.a_second, field) == getattr(result.a, field)
    assert result.a_score + result.b.score == pytest.approx(1.0)


def test_levels_swap_seats_and_the_totals_add_up() -> None:
    result = play_match("connect4", "novice", "random", 6, seed=4)
    assert [r.a_seat for r in result.records] == [0, 1, 0, 1, 0, 1]
    assert [r.index for r in result.records] == list(range(6))
    assert result.a_first.games == result.a_second.games == 3
    assert_totals_add_up(result)
    assert all(r.plies >= 7 and r.reason for r in result.records)


def test_draws_count_half_for_each_side() -> None:
    result = MatchResult("quarto", "random", "random", seed=0, planned=5)
    result.records = [record(0, "A"), record(1, None), record(2, "B"), record(3, None), record(4, "A")]
    assert result.a == Tally(wins=2, losses=1, draws=2)
    assert result.a_score == pytest.approx(0.6)
    # game 0 and 4: A moved first and won; game 2: A moved first and lost
    assert result.a_first == Tally(wins=2, losses=1, draws=0)
    assert result.a_second == Tally(wins=0, losses=0, draws=2)
    assert result.first_player == Tally(wins=2, losses=1, draws=2)
    assert_totals_add_up(result)


def test_the_same_seed_plays_the_same_games_with_any_number_of_jobs() -> None:
    one = play_match("magnetic-cave", "novice", "random", 4, seed=11)
    two = play_match("magnetic-cave", "novice", "random", 4, seed=11, jobs=2)
    again = play_match("magnetic-cave", "novice", "random", 4, seed=11)
    summary = [(r.winner, r.plies, r.reason) for r in one.records]
    assert summary == [(r.winner, r.plies, r.reason) for r in two.records]
    assert summary == [(r.winner, r.plies, r.reason) for r in again.records]


def test_random_openings_are_shared_by_each_pair_of_games() -> None:
    result = play_match("connect4", "minimax-2", "minimax-2", 6, seed=2, opening_plies=3)
    openings = [r.moves[:3] for r in result.records]
    assert all(r.opening_plies == 3 and len(r.moves) == r.plies for r in result.records)
    assert openings[0] == openings[1] and openings[2] == openings[3] and openings[4] == openings[5]
    assert len({openings[0], openings[2], openings[4]}) > 1
    assert "starts with the same 3 random moves" in result.table()


def test_one_seat_plays_that_half_of_the_match_twice_as_long() -> None:
    whole = play_match("connect4", "novice", "minimax-1", 6, seed=5, opening_plies=2)
    second = play_match("connect4", "novice", "minimax-1", 3, seed=5, opening_plies=2, seat=1)
    assert [r.index for r in second.records] == [1, 3, 5]
    assert [(r.moves, r.winner) for r in second.records] == [
        (r.moves, r.winner) for r in whole.records if r.a_seat == 1
    ]
    assert second.a_first.games == 0 and second.a_second.games == 3
    assert_totals_add_up(second)


def test_deterministic_levels_replay_their_games_without_an_opening() -> None:
    # Connect Four's evaluation rarely ties, so minimax-2 against itself repeats the same two games
    plain = play_match("connect4", "minimax-2", "minimax-2", 6, seed=2)
    varied = play_match("connect4", "minimax-2", "minimax-2", 6, seed=2, opening_plies=2)
    assert plain.distinct_games() < varied.distinct_games()
    assert f"distinct games: {plain.distinct_games()} of 6" in plain.table()


def test_a_match_without_a_seed_picks_one_and_reports_it() -> None:
    result = play_match("quarto", "random", "random", 1)
    assert isinstance(result.seed, int)
    replay = play_match("quarto", "random", "random", 1, seed=result.seed)
    assert replay.records[0].plies == result.records[0].plies


def test_progress_is_reported_after_every_game() -> None:
    seen: list[tuple[int, int]] = []
    play_match("connect4", "random", "random", 3, seed=1, progress=lambda done, total, _: seen.append((done, total)))
    assert seen == [(1, 3), (2, 3), (3, 3)]


def test_time_per_move_is_passed_on_and_overruns_only_counted() -> None:
    result = play_match("connect4", "minimax-2", "random", 2, seed=1, time_per_move=1e-9)
    assert result.a.games == 2
    assert sum(r.over_time[0] for r in result.records) > 0  # every search takes longer than a nanosecond
    assert "not forfeited" in result.table()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"game_id": "chess"}, "unknown game 'chess'; games: connect4"),
        ({"level_a": "minimax-x"}, "unknown level 'minimax-x'; levels: random, novice, minimax-N"),
        ({"level_b": "grandmaster"}, "unknown level 'grandmaster'"),
        ({"games": 0}, "from 1 to 100,000"),
        ({"games": 10_000_000}, "from 1 to 100,000, not 10000000"),  # (each game's arguments were made first: 1.4 GB)
        ({"jobs": 0}, "jobs must be"),
        ({"time_per_move": -1.0}, "positive number of seconds"),
        ({"opening_plies": -1}, "0 or more"),
        ({"seat": 2}, "the seat must be 0 (first"),
    ],
)
def test_bad_options_are_refused_clearly(kwargs: dict, message: str) -> None:
    options = {"game_id": "connect4", "level_a": "random", "level_b": "novice", "games": 2} | kwargs
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        play_match(**options)


class ColumnNinetyNine(Bot):
    """A broken bot: always drops in a column that does not exist."""

    def choose(self, state: object, budget: object = None) -> int:
        return 99


def test_a_bot_playing_an_illegal_move_stops_the_match(monkeypatch: pytest.MonkeyPatch) -> None:
    import bots

    real_make_bot = bots.make_bot

    def make_bot(game_id: str, level: str, seed: int | None = None) -> Bot:
        if level == "novice":
            return ColumnNinetyNine(game_id, "broken", seed)
        return real_make_bot(game_id, level, seed)

    monkeypatch.setattr(bots, "make_bot", make_bot)
    with pytest.raises(MatchError, match="B \\(broken\\) played the illegal move 99"):
        play_match("connect4", "random", "novice", 2, seed=1)


def test_wilson_interval() -> None:
    low, high = wilson_interval(0.5, 100)
    assert (low, high) == (pytest.approx(0.4038, abs=1e-4), pytest.approx(0.5962, abs=1e-4))
    low, high = wilson_interval(1.0, 20)
    assert high == 1.0 and low == pytest.approx(0.8389, abs=1e-4)
    assert wilson_interval(0.0, 0) == (0.0, 1.0)


def test_cli_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["match", "--game", "connect4", "minimax-1", "random", "--games", "4", "--seed", "3"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "connect4: A = minimax-1, B = random, 4 games, seed 3" in out
    for row in ("A  minimax-1", "B  random", "A moving first", "A moving second", "first player", "second player"):
        assert row in out
    assert "95% interval" in out and "Wilson" in out
    assert "4/4" in err and "[" in err  # the progress bar


def test_cli_quiet_has_no_progress_bar(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "--game", "quarto", "random", "random", "--games", "2", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "2/2" not in err and "A  random" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--game", "chess", "random", "novice"], "unknown game 'chess'"),
        (["--game", "connect4", "random", "minimax-99"], "unknown level 'minimax-99'"),
    ],
)
def test_cli_reports_bad_games_and_levels(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", *args]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--games", "0"], "argument --games: must be at least 1, not 0"),
        (["--games", "many"], "argument --games: expected a whole number, not 'many'"),
        (["--jobs", "0"], "argument --jobs: must be at least 1"),
        (["--time-per-move", "-2"], "argument --time-per-move: must be a positive number of seconds"),
        (["--opening-plies", "-1"], "argument --opening-plies: must be at least 0, not -1"),
    ],
)
def test_cli_refuses_bad_numbers(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["match", "--game", "connect4", "random", "random", *args])
    assert info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(("game", "plies", "ended"), [("connect4", 100, 40), ("quarto", 17, 16)])
def test_an_opening_as_long_as_a_game_is_refused(game: str, plies: int, ended: int,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A random opening that plays the whole game leaves the bots nothing to play: every result was the opening's
    (a match of novice and random scored exactly 0.500), under a summary that spoke of 100 opening moves in a game
    of at most 42."""
    assert main(["match", "--game", game, "novice", "random", "--games", "2", "--opening-plies", str(plies)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"plyhall match: error: a random opening of {plies} moves plays a whole {game} game (one ended after "
        f"{ended}), and the bots would never move: use fewer opening moves")
    assert len(play_match(game, "novice", "random", 2, seed=1, opening_plies=8).records) == 2


# The SPRT (issue 41) ----------------------------------------------------------------------------------------------


def test_an_sprt_stops_the_match_once_the_pairs_decide() -> None:
    from protocol.statistics import MIN_SPRT_PAIRS

    test = MatchSprt.parse("elo0=0,elo1=100")
    result = play_match("connect4", "random", "minimax-2", 200, seed=7, opening_plies=2, sprt=test)
    assert result.sprt is not None and result.sprt.status.value == "H0"  # random is not 100 Elo above minimax-2
    assert 2 * MIN_SPRT_PAIRS <= len(result.records) < 200  # not before 10 pairs, and well before the last game
    counts = result.pair_counts()
    assert sum(counts) == len(result.records) // 2 and counts == result.sprt.pentanomial
    assert "H0 was accepted" in result.table() and f"stopped after {len(result.records)} of at most 200" in (
        result.table())
    assert_totals_add_up(result)


def test_pairs_count_in_game_order_whatever_order_they_finish_in() -> None:
    result = MatchResult("connect4", "a", "b", seed=0, planned=8)
    result.records = [record(0, "A"), record(1, "A"), record(3, None), record(4, "B"), record(5, None)]
    assert result.pair_counts() == (0, 0, 0, 0, 1)  # games 2 and 3 are not both done: the pairs after wait


def test_an_sprt_between_fixed_depth_levels_needs_openings() -> None:
    test = MatchSprt(0, 20)
    with pytest.raises(ValueError, match="minimax-3 against minimax-2 needs --opening-plies"):
        play_match("connect4", "minimax-3", "minimax-2", 40, seed=1, sprt=test)
    with pytest.raises(ValueError, match="cannot go with one seat"):
        play_match("connect4", "random", "novice", 40, seed=1, sprt=test, seat=0)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("elo0=0", "needs elo0 and elo1"),
        ("elo0=0,elo1=x", "elo1 must be a number"),
        ("elo0=0,elo1=5,gamma=1", "use elo0=E,elo1=E"),
        ("elo0=5,elo1=0", "elo0 must be below elo1"),
        ("elo0=0,elo1=5,alpha=0", "alpha and beta"),
        ("elo0=0,elo1=20,alpha=0.5,beta=0.5", "beta must be below 1"),  # (a traceback: bounds of 0)
        ("elo0=0,elo1=20,alpha=0.6,beta=0.6", "beta must be below 1"),  # (bounds crossed: H1 on a loss)
        ("elo0=0,elo1=5,model=bayeselo", "normalized or logistic"),
    ],
)
def test_bad_sprt_specs_are_refused_clearly(spec: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match=message):
        MatchSprt.parse(spec)
    with pytest.raises(SystemExit):
        main(["match", "--game", "connect4", "random", "novice", "--sprt", spec])
    assert message in capsys.readouterr().err


def test_cli_prints_the_sprt(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["match", "--game", "connect4", "novice", "random", "--games", "60", "--seed", "3", "--quiet",
                 "--opening-plies", "2", "--sprt", "elo0=0,elo1=200,model=logistic"])
    out, _ = capsys.readouterr()
    assert code == 0 and "SPRT (logistic Elo, pentanomial" in out
