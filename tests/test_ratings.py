"""Glicko-2 (protocol/glicko2.py) against Glickman's worked example, and the rules of rated play
(protocol/ratings.py): per-game updates, inactivity, provisional ratings, fair play, anchors, replay."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from protocol.glicko2 import SCALE, Rating, Result, expected_score, grown_deviation, update
from protocol.ratings import (
    ANCHOR_DEVIATION,
    ANCHOR_LEVELS,
    MIN_DEVIATION,
    PAIR_DAILY_LIMIT,
    PAIR_FADE,
    PROVISIONAL_DEVIATION,
    RATING_PERIOD,
    Book,
    RatedGame,
    Standing,
    anchor_level,
    anchor_name,
    anchor_rating,
    current_deviation,
    pair_weight,
    rate,
    rateable_name,
    replay,
)

PLAYER = Rating(1500, 200, 0.06)
PERIOD = [Result(Rating(1400, 30), 1), Result(Rating(1550, 100), 0), Result(Rating(1700, 300), 0)]


def test_glickmans_worked_example():
    """"Example of the Glicko-2 system", section "Example calculation": the paper rounds every intermediate
    value to four places and gives mu' = -0.2069, phi' = 0.8722, sigma' = 0.05999, hence r' = 1464.06 and
    RD' = 151.52. Computed without rounding, r' is 1464.0507 (the paper's 1464.06 is -0.2069 * 173.7178 + 1500)
    and sigma' 0.059996."""
    new = update(PLAYER, PERIOD)
    mu, phi = (new.rating - 1500) / SCALE, new.deviation / SCALE
    assert round(mu, 4) == -0.2069
    assert round(phi, 4) == 0.8722
    assert new.volatility == pytest.approx(0.05999, abs=1e-5)  # the paper writes 0.059996 cut to 0.05999
    assert round(round(mu, 4) * SCALE + 1500, 2) == 1464.06
    assert round(round(phi, 4) * SCALE, 2) == 151.52
    assert new.rating == pytest.approx(1464.06, abs=0.01)
    assert new.deviation == pytest.approx(151.52, abs=0.01)


def test_the_examples_expected_scores():
    # step 3 of the paper: E = 0.639, 0.432, 0.303
    assert [round(expected_score(PLAYER, r.opponent), 3) for r in PERIOD] == [0.639, 0.432, 0.303]


def test_updates_within_a_period_do_not_depend_on_the_order_of_its_games():
    rng = random.Random(7)
    results = [Result(Rating(rng.uniform(1000, 2000), rng.uniform(30, 350)), rng.choice([0, 0.5, 1]))
               for _ in range(6)]
    first = update(PLAYER, results)
    for order in itertools.islice(itertools.permutations(results), 0, 720, 37):
        other = update(PLAYER, order)
        assert other.rating == pytest.approx(first.rating, abs=1e-9)
        assert other.deviation == pytest.approx(first.deviation, abs=1e-9)
        assert other.volatility == pytest.approx(first.volatility, abs=1e-12)


def test_a_period_without_games_only_widens_the_deviation():
    idle = update(PLAYER, [])
    assert idle.rating == 1500 and idle.volatility == 0.06
    assert idle.deviation == pytest.approx(math.sqrt(200 ** 2 + (0.06 * SCALE) ** 2))
    assert update(PLAYER, [Result(Rating(1400, 30), 1, weight=0.0)]) == idle  # a weightless game is no game
    assert grown_deviation(PLAYER, 10_000) == 350  # never past a newcomer's
    assert grown_deviation(PLAYER, 0) == pytest.approx(200)


def test_a_game_of_weight_one_is_the_papers_game_and_less_weight_moves_less():
    full = update(PLAYER, [Result(Rating(1400, 30), 1)])
    assert full == update(PLAYER, [Result(Rating(1400, 30), 1, weight=1.0)])
    half = update(PLAYER, [Result(Rating(1400, 30), 1, weight=0.5)])
    assert 1500 < half.rating < full.rating and half.deviation > full.deviation


def test_deviation_grows_with_inactivity_and_the_rating_turns_provisional():
    settled = Rating(1700, MIN_DEVIATION, 0.06)
    assert current_deviation(settled, 0.0, 0.0) == MIN_DEVIATION
    month = current_deviation(settled, 0.0, 30 * RATING_PERIOD)
    year = current_deviation(settled, 0.0, 365 * RATING_PERIOD)
    assert MIN_DEVIATION < month < year <= 350
    standing = Standing(settled, games=40, wins=20, draws=10, losses=10, last_played=0.0)
    assert not standing.to_json(0.0)["provisional"]
    assert standing.to_json(365 * RATING_PERIOD)["provisional"]
    assert Standing().to_json(0.0)["provisional"] and Standing().rating.deviation > PROVISIONAL_DEVIATION


def _game(number: int, a: str, b: str, winner: int | None, at: float, game: str = "connect4") -> RatedGame:
    return RatedGame(f"g{number}", game, (a, b), winner, at)


def test_one_rated_game_moves_both_players_against_each_others_rating_before_it():
    change = rate(_game(1, "alice", "bob", 0, 100.0), (None, None), 0)
    alice, bob = change.after
    assert alice.rating.rating > 1500 > bob.rating.rating
    assert alice.rating.rating - 1500 == pytest.approx(1500 - bob.rating.rating)  # newcomers: symmetric
    assert (alice.games, alice.wins, bob.losses, alice.last_played) == (1, 1, 1, 100.0)
    assert change.change[0] == pytest.approx(alice.rating.rating - 1500) and change.weight == 1.0
    draw = rate(_game(2, "alice", "bob", None, 200.0), change.after, 1)
    assert draw.after[0].draws == 1 and draw.after[0].rating.rating < alice.rating.rating  # expected more than ½


def test_deviation_keeps_a_floor_however_many_games():
    book = Book()
    for n in range(300):
        book.add(_game(n, f"p{n % 7}", f"q{n % 5}", n % 2, float(n)))
    assert min(s.rating.deviation for s in book.standings.values()) >= MIN_DEVIATION


def test_fair_play_weights_past_the_daily_limit():
    weights = [pair_weight(n) for n in range(PAIR_DAILY_LIMIT + PAIR_FADE + 2)]
    assert weights[:PAIR_DAILY_LIMIT] == [1.0] * PAIR_DAILY_LIMIT
    assert weights[PAIR_DAILY_LIMIT:PAIR_DAILY_LIMIT + PAIR_FADE] == [0.5, 0.25, 0.125, 0.0625]
    assert weights[PAIR_DAILY_LIMIT + PAIR_FADE:] == [0.0, 0.0]
    book = Book()
    changes = [book.add(_game(n, "farmer", "victim", 0, 60.0 * n)) for n in range(PAIR_DAILY_LIMIT + PAIR_FADE + 1)]
    assert [c.weight for c in changes] == weights[:PAIR_DAILY_LIMIT + PAIR_FADE + 1]
    assert changes[-1].change == (0.0, 0.0) and changes[-1].after[0].wins == PAIR_DAILY_LIMIT + PAIR_FADE + 1
    # a day later they count again; other opponents never counted against the pair
    assert book.add(_game(99, "farmer", "victim", 0, 60.0 * 25 + 86400.0)).weight == 1.0
    assert book.add(_game(100, "farmer", "someone", 0, 60.0 * 26)).weight == 1.0


def test_house_bots_are_rated_only_as_anchors_pinned_to_their_level():
    assert not rateable_name("house-master-7", "connect4", claimed=False)
    assert not rateable_name("house-master-quarto", "connect4", claimed=True)
    assert rateable_name("house-master-connect4", "connect4", claimed=False)
    assert rateable_name("alice", "connect4", claimed=True) and not rateable_name("guest", "connect4", claimed=False)
    assert anchor_name("minimax-3", "magnetic-cave") == "house-minimax-3-magnetic-cave"
    assert anchor_level("house-minimax-3-magnetic-cave", "magnetic-cave") == "minimax-3"
    with pytest.raises(ValueError, match="unknown anchor level"):
        anchor_name("grandmaster", "connect4")
    change = rate(_game(1, "house-novice-connect4", "alice", 1, 5.0), (None, None), 0)
    anchor, alice = change.after
    pinned = anchor_rating("novice", "connect4")
    assert anchor.rating == Rating(pinned, ANCHOR_DEVIATION, 0.06) and change.change[0] == 0.0
    assert anchor.losses == 1 and alice.rating.rating > 1500
    # beating an anchor pinned below 1500 is worth less than beating a 1500 newcomer
    assert pinned < 1500
    assert alice.rating.rating < rate(_game(2, "bob", "alice", 1, 5.0), (None, None), 0).after[1].rating.rating


def test_anchor_levels_are_the_house_levels():
    from server.core.house import HOUSE_LEVELS

    assert ANCHOR_LEVELS == HOUSE_LEVELS


def test_replay_is_a_deterministic_function_of_the_results_in_order():
    rng = random.Random(3)
    names = [f"bot{i}" for i in range(6)] + ["house-master-connect4"]
    games = [_game(n, *rng.sample(names, 2), rng.choice([0, 1, None]), 1000.0 + 37.0 * n + rng.random())
             for n in range(400)]
    standings, changes = replay(games)
    again, changes_again = replay(list(games))
    assert standings == again and changes == changes_again
    assert {key[1] for key in standings} == set(names)
    assert sum(s.games for s in standings.values()) == 2 * len(games)
    other_order, _ = replay(games[1:] + games[:1])
    assert other_order != standings  # per-game updates: the order is part of the record (documented)


def test_a_gap_of_thousands_of_points_updates_without_dividing_by_zero():
    """At a gap of some 6,000 points the expected score rounds to exactly 0 or 1; the update still gives finite
    ratings (it raised ZeroDivisionError inside the result's transaction, stalling every write after it)."""
    from protocol.glicko2 import Rating, Result, update

    strong, weak = Rating(9000.0, 30.0, 0.06), Rating(100.0, 30.0, 0.06)
    for player, opponent, score in ((strong, weak, 1.0), (weak, strong, 0.0), (weak, strong, 1.0)):
        after = update(player, [Result(opponent, score)])
        assert all(math.isfinite(x) for x in (after.rating, after.deviation, after.volatility))


def test_a_game_capped_by_the_servers_rules_counts_with_that_weight_and_replays_so():
    """The hall caps a game's weight when one address has few rating points left with a name (server.core.rated):
    the cap multiplies fair play's weight, is stored with the game, and the replay applies it the same way."""
    from dataclasses import replace

    from server.core.rated import weight_within, worst_change

    full = rate(_game(1, "alice", "bob", 0, 100.0), (None, None), 0)
    capped = rate(replace(_game(1, "alice", "bob", 0, 100.0), cap=0.5), (None, None), 0)
    assert capped.weight == 0.5 and 0 < capped.change[0] < full.change[0]
    assert rate(replace(_game(1, "alice", "bob", 0, 100.0), cap=0.5), (None, None), 20).weight == 0.25  # × fair play
    newcomer, settled = (1500.0, 350.0), (1500.0, 60.0)
    assert worst_change(newcomer, newcomer) > 100  # a newcomer's first result moves it more than a day's limit
    weight = weight_within(100.0, newcomer, newcomer)
    assert 0.3 < weight < 1 and 99 < worst_change(newcomer, newcomer, weight) <= 100
    assert weight_within(100.0, settled, newcomer) == 1.0 and weight_within(0.5, settled, settled) < 0.1
    _, changes = replay([replace(_game(1, "alice", "bob", 0, 100.0), cap=weight)])
    assert changes[0].weight == weight and abs(changes[0].change[1]) <= 100


def test_the_leaderboard_lists_provisional_ratings_after_the_established_ones():
    """Nine names with one lucky win each topped a board above every established rating: a provisional rating is
    listed after them, ranked on from there."""
    from protocol.ratings import Standing, leaderboard_json

    now = 1_000_000.0
    entries = [("lucky", Standing(Rating(1900.0, 300.0, 0.06), 1, 1, 0, 0, now), False),
               ("steady", Standing(Rating(1600.0, 60.0, 0.06), 80, 50, 10, 20, now), False),
               ("house-novice-connect4", Standing(Rating(1200.0, 50.0, 0.06), 30, 10, 0, 20, now), True),
               ("new", Standing(Rating(1500.0, 320.0, 0.06), 1, 0, 0, 1, now), False)]
    board = leaderboard_json(entries, now)
    assert [(row["rank"], row["name"], row["provisional"]) for row in board] == [
        (1, "steady", False), (2, "house-novice-connect4", False), (3, "lucky", True), (4, "new", True)]
