"""Tournament statistics: Elo by maximum likelihood, cutechess-cli's match figures, SPRT, standings.

Every expected figure is computed by hand in the test from the published formula it checks.
"""

from __future__ import annotations

import csv
import io
import json
import math
from statistics import NormalDist

import pytest

from server.tournament import (
    ScoredGame,
    SprtStatus,
    compute_standings,
    elo_from_score,
    elo_ratings,
    estimate_time_left,
    expected_score,
    head_to_head,
    likelihood_of_superiority,
    match_stats,
    sprt,
)

Z = NormalDist().inv_cdf(0.975)
K = math.log(10) / 400  # natural-log units per Elo point


def games(white: str, black: str, wins: int, draws: int, losses: int) -> list[tuple[str, str, float]]:
    """``white``'s wins, draws and losses against ``black`` as (white, black, white_score) games."""
    return [(white, black, 1.0)] * wins + [(white, black, 0.5)] * draws + [(white, black, 0.0)] * losses


# --- one pairing: cutechess-cli's Elo class ------------------------------------------------------------


def test_elo_curve_and_its_inverse():
    assert expected_score(0) == 0.5
    assert expected_score(400) == pytest.approx(10 / 11)
    assert elo_from_score(0.75) == pytest.approx(400 * math.log10(3))  # 1/p - 1 = 1/3
    assert elo_from_score(expected_score(123.4)) == pytest.approx(123.4)
    assert elo_from_score(1.0) == math.inf and elo_from_score(0.0) == -math.inf
    assert math.isnan(elo_from_score(1.5))


def test_match_figures_match_cutechess_formulas_by_hand():
    wins, draws, losses = 10, 3, 5
    n = 18
    mu = (10 + 1.5) / n  # score fraction
    # per-game variance of the score (win 1, draw 1/2, loss 0) around mu, then the mean's standard error
    variance = (10 * (1 - mu) ** 2 + 3 * (0.5 - mu) ** 2 + 5 * (0 - mu) ** 2) / n
    stderr = math.sqrt(variance / n)

    def diff(p: float) -> float:
        return -400 * math.log10(1 / p - 1)

    expected_margin = (diff(mu + Z * stderr) - diff(mu - Z * stderr)) / 2
    stats = match_stats(wins, draws, losses)
    assert stats.elo_diff == pytest.approx(diff(mu))
    assert stats.elo_diff == pytest.approx(99.11, abs=0.01)
    assert stats.margin == pytest.approx(expected_margin)
    assert stats.los == pytest.approx(0.5 * (1 + math.erf(5 / math.sqrt(30))))
    assert stats.draw_ratio == pytest.approx(3 / 18)
    text = stats.describe("alpha", "beta")
    assert text.splitlines()[0] == "Score of alpha vs beta: 10 - 5 - 3  [0.639] 18"
    assert text.splitlines()[1].startswith("Elo difference: 99.1 +/- ")
    assert "LOS: 90.2 %" in text and "DrawRatio: 16.7 %" in text
    # what cutechess-cli prints as "-inf +/- nan" and "+/- nan", said in words
    assert match_stats(3, 0, 0).describe("alpha", "beta").splitlines()[1].startswith(
        "Elo difference: none yet (alpha won every game; a figure needs a game it did not win), LOS: 95.8 %")
    assert "(beta won every game;" in match_stats(0, 0, 2).describe("alpha", "beta")
    assert "Elo difference: 88.7 +/- ? (too few games for a margin)" in match_stats(2, 1, 1).describe("a", "b")
    assert match_stats(0, 0, 0).describe("a", "b").endswith("\nno games played yet: no Elo difference")


def test_match_figures_at_the_edges():
    even = match_stats(5, 0, 5)
    assert even.elo_diff == pytest.approx(0.0) and even.los == pytest.approx(0.5)
    perfect = match_stats(4, 0, 0)
    assert perfect.elo_diff == math.inf
    assert perfect.to_json()["elo_diff"] is None  # JSON has no infinity
    json.dumps(perfect.to_json())
    assert likelihood_of_superiority(0, 0) == 0.5
    assert math.isnan(match_stats(0, 0, 0).elo_diff)
    assert likelihood_of_superiority(30, 10) > 0.99 > likelihood_of_superiority(10, 30) * 100
    with pytest.raises(ValueError, match="wins"):
        match_stats(-1, 0, 0)


# --- Elo for the whole field -----------------------------------------------------------------------------


def test_two_entrants_mle_is_the_score_formula():
    results = games("alpha", "beta", 6, 2, 2)  # 7 points of 10
    ratings = elo_ratings(results, prior=0)
    p, n = 0.7, 10
    diff = -400 * math.log10(1 / p - 1)
    assert ratings["alpha"].elo - ratings["beta"].elo == pytest.approx(diff, abs=1e-6)
    assert ratings["alpha"].elo == pytest.approx(diff / 2, abs=1e-6)  # the mean is 0
    # Fisher information of the difference, n p (1 - p) in natural units; each rating carries half of it
    sd_diff = math.sqrt(1 / (n * p * (1 - p))) / K
    assert ratings["alpha"].margin == pytest.approx(Z * sd_diff / 2)
    assert ratings["alpha"].games == 10 and ratings["alpha"].points == 7.0


def test_the_prior_adds_virtual_draws():
    results = games("alpha", "beta", 3, 0, 0)
    with pytest.raises(ValueError, match="no finite"):
        elo_ratings(results, prior=0)
    ratings = elo_ratings(results)  # 2 virtual draws between the two: 4 points of 5
    assert ratings["alpha"].elo - ratings["beta"].elo == pytest.approx(-400 * math.log10(5 / 4 - 1), abs=1e-6)
    lopsided = elo_ratings(results, prior=2) | {}
    assert math.isfinite(lopsided["alpha"].margin)


def test_field_fit_matches_scores_to_expectations():
    # the maximum-likelihood condition: every entrant's expected score equals its actual score
    results = (games("a", "b", 5, 3, 2) + games("b", "c", 4, 4, 2) + games("c", "a", 3, 2, 5)
               + games("a", "d", 7, 2, 1) + games("d", "b", 2, 2, 6))
    ratings = elo_ratings(results, prior=0)
    for name in "abcd":
        expected = sum(expected_score(ratings[w].elo - ratings[b].elo) if w == name else
                       expected_score(ratings[b].elo - ratings[w].elo)
                       for w, b, _ in results if name in (w, b))
        assert expected == pytest.approx(ratings[name].points, abs=1e-6)
    assert sum(r.elo for r in ratings.values()) == pytest.approx(0, abs=1e-6)
    assert ratings["a"].elo > ratings["b"].elo > ratings["d"].elo


def test_anchor_fixes_one_entrant_and_keeps_differences():
    results = games("a", "b", 5, 3, 2) + games("b", "c", 4, 4, 2)
    free = elo_ratings(results)
    anchored = elo_ratings(results, anchor="c", anchor_elo=1500)
    assert anchored["c"].elo == pytest.approx(1500) and anchored["c"].margin == 0
    assert anchored["a"].elo - anchored["b"].elo == pytest.approx(free["a"].elo - free["b"].elo)
    # the anchored margin of a is that of its difference from c: larger than its margin around the mean
    assert anchored["a"].margin > free["a"].margin
    mean_1500 = elo_ratings(results, anchor_elo=1500)
    assert sum(r.elo for r in mean_1500.values()) / 3 == pytest.approx(1500)


def test_separate_groups_are_each_centred():
    results = games("a", "b", 6, 0, 4) + games("c", "d", 2, 0, 8)
    ratings = elo_ratings(results, prior=0)
    assert ratings["a"].elo == pytest.approx(-ratings["b"].elo)
    assert ratings["c"].elo == pytest.approx(-ratings["d"].elo)
    assert ratings["a"].elo == pytest.approx(-400 * math.log10(1 / 0.6 - 1) / 2)


def test_perfect_score_in_a_field_stays_finite_and_first():
    results = games("champ", "b", 4, 0, 0) + games("champ", "c", 4, 0, 0) + games("b", "c", 2, 2, 0)
    ratings = elo_ratings(results)
    assert all(math.isfinite(r.elo) and math.isfinite(r.margin) for r in ratings.values())
    assert ratings["champ"].elo > ratings["b"].elo > ratings["c"].elo
    with pytest.raises(ValueError, match="champ"):
        elo_ratings(results, prior=0)
    with pytest.raises(ValueError, match="between 0 and 1"):
        elo_ratings([("a", "b", 2.0)])
    assert elo_ratings([]) == {}


# --- SPRT ---------------------------------------------------------------------------------------------


def sprt_by_hand(wins: int, draws: int, losses: int, elo0: float, elo1: float) -> float:
    """cutechess-cli's Sprt::status written out with the logistic function instead of powers of ten."""
    n = wins + draws + losses
    pw, pl = wins / n, losses / n
    draw_elo = 200 * math.log10((1 - pl) / pl * (1 - pw) / pw)
    x = 10 ** (-draw_elo / 400)
    scale = 4 * x / (1 + x) ** 2

    def logistic(elo: float) -> float:
        return 1 / (1 + math.exp(-K * elo))

    def probabilities(elo: float) -> tuple[float, float, float]:
        bayes = elo / scale
        win, loss = logistic(bayes - draw_elo), logistic(-bayes - draw_elo)
        return win, loss, 1 - win - loss

    (w0, l0, d0), (w1, l1, d1) = probabilities(elo0), probabilities(elo1)
    return wins * math.log(w1 / w0) + losses * math.log(l1 / l0) + draws * math.log(d1 / d0)


def test_sprt_llr_bounds_and_decisions_by_hand():
    result = sprt(300, 500, 200, elo0=0, elo1=10)
    assert result.lower_bound == pytest.approx(math.log(0.05 / 0.95))  # -2.944
    assert result.upper_bound == pytest.approx(math.log(0.95 / 0.05))
    assert result.llr == pytest.approx(sprt_by_hand(300, 500, 200, 0, 10))
    assert result.status is SprtStatus.ACCEPT_H1
    assert "H1 was accepted" in result.describe()

    close = sprt(105, 200, 95, elo0=0, elo1=10)
    assert close.llr == pytest.approx(sprt_by_hand(105, 200, 95, 0, 10))
    assert close.lower_bound < close.llr < close.upper_bound and close.status is SprtStatus.CONTINUE

    worse = sprt(150, 500, 250, elo0=0, elo1=5, alpha=0.1, beta=0.2)
    assert worse.lower_bound == pytest.approx(math.log(0.2 / 0.9))
    assert worse.upper_bound == pytest.approx(math.log(0.8 / 0.1))
    assert worse.status is SprtStatus.ACCEPT_H0 and worse.to_json()["status"] == "H0"


def test_sprt_is_antisymmetric():
    # swapping wins and losses and mirroring the hypotheses negates the log-likelihood ratio
    a = sprt(120, 80, 90, elo0=-2, elo1=8)
    b = sprt(90, 80, 120, elo0=-8, elo1=2)
    assert a.llr == pytest.approx(-b.llr)


def test_sprt_without_draws():
    # cutechess-cli's rule: no decision while wins, draws or losses is zero (a regularized zero made drawElo
    # huge, and 2 wins and 2 draws accepted H1); games without draws are tested on pairs (tests/test_sprt.py)
    for counts in ((120, 0, 40), (2, 2, 0), (0, 10, 3)):
        result = sprt(*counts, elo0=0, elo1=20)
        assert result.llr == 0 and result.status is SprtStatus.CONTINUE and "zero" in result.waiting
    assert sprt(0, 0, 0, elo0=0, elo1=5).status is SprtStatus.CONTINUE


def test_sprt_rejects_bad_parameters():
    with pytest.raises(ValueError, match="elo0 must be below elo1"):
        sprt(1, 1, 1, elo0=5, elo1=0)
    with pytest.raises(ValueError, match="alpha"):
        sprt(1, 1, 1, elo0=0, elo1=5, alpha=0)


# --- results and standings -----------------------------------------------------------------------------


def test_game_result_validation():
    with pytest.raises(ValueError, match="not a game result"):
        ScoredGame("a", "b", "2-0")
    with pytest.raises(ValueError, match="double forfeit"):
        ScoredGame("a", "b", "0-0")
    with pytest.raises(ValueError, match="itself"):
        ScoredGame("a", "a", "1-0")
    assert ScoredGame("a", "b", "½-½").result == "1/2-1/2"
    forfeit = ScoredGame("a", "b", "1-0", round=2, forfeit=True)
    assert not forfeit.is_played and forfeit.score("a") == 1
    assert ScoredGame.from_json(json.loads(json.dumps(forfeit.to_json()))) == forfeit
    bye = ScoredGame.bye("c", 3)
    assert bye.is_bye and not bye.is_played and bye.score("c") == 1


def small_event() -> list[ScoredGame]:
    """A three-entrant double round robin (one game each colour), with a forfeit and a draw."""
    return [
        ScoredGame("alpha", "beta", "1-0", round=1, duration=60),
        ScoredGame("beta", "alpha", "1/2-1/2", round=1, duration=100),
        ScoredGame("beta", "gamma", "1-0", round=2, duration=80),
        ScoredGame("gamma", "beta", "0-1", round=2, forfeit=True),
        ScoredGame("gamma", "alpha", "1-0", round=3, duration=40),
        ScoredGame("alpha", "gamma", "1/2-1/2", round=3, duration=20),
    ]


def test_points_wdl_and_sonneborn_berger_by_hand():
    table = compute_standings(small_event(), ["alpha", "beta", "gamma"])
    alpha, beta, gamma = table["alpha"], table["beta"], table["gamma"]
    assert (alpha.points, beta.points, gamma.points) == (2.0, 2.5, 1.5)
    assert (beta.wins, beta.draws, beta.losses) == (2, 1, 1)
    assert beta.forfeit_wins == 1 and gamma.forfeit_losses == 1
    assert beta.played == 3 and beta.games == 4 and gamma.played == 3
    # SB: sum over games of (score x opponent's points)
    assert beta.tiebreak == 0 * 2.0 + 0.5 * 2.0 + 1 * 1.5 + 1 * 1.5
    assert alpha.tiebreak == 1 * 2.5 + 0.5 * 2.5 + 0 * 1.5 + 0.5 * 1.5
    assert [row.name for row in table.rows] == ["beta", "alpha", "gamma"]
    assert [row.rank for row in table.rows] == [1, 2, 3]
    assert table.crosstable["beta"]["gamma"] == ["1", "+"]
    assert table.crosstable["gamma"]["beta"] == ["0", "-"]
    assert table.crosstable["alpha"]["beta"] == ["1", "="]
    # Elo comes from played games only: the forfeit is not among beta's played games
    assert table.to_json()["rows"][0]["played"] == 3


def test_buchholz_median_buchholz_and_byes():
    results = [
        ScoredGame("a", "b", "1-0", round=1), ScoredGame.bye("c", 1),
        ScoredGame("c", "a", "1-0", round=2), ScoredGame.bye("b", 2),
        ScoredGame("b", "c", "1/2-1/2", round=3), ScoredGame.bye("a", 3),
        ScoredGame("a", "d", "1-0", round=4), ScoredGame("b", "c", "0-1", round=4),
    ]
    table = compute_standings(results, ["a", "b", "c", "d"], tiebreak="buchholz")
    points = {row.name: row.points for row in table.rows}
    assert points == {"a": 3.0, "b": 1.5, "c": 3.5, "d": 0.0}
    assert table["a"].byes == 1 and table["a"].wins == 3
    assert table["a"].tiebreak == points["b"] + points["c"] + points["d"]  # a bye adds nothing
    assert table["c"].tiebreak == points["a"] + points["b"] + points["b"]
    median = compute_standings(results, ["a", "b", "c", "d"], tiebreak="median-buchholz")
    assert median["a"].tiebreak == points["b"]  # without the best (c) and the worst (d)
    assert median["d"].tiebreak == points["a"]  # fewer than 3 opponents: no cut


def test_ranking_ties_by_tiebreak_then_name_and_shared_ranks():
    results = [ScoredGame("zed", "amy", "1/2-1/2", round=1), ScoredGame("bob", "cat", "1/2-1/2", round=1)]
    table = compute_standings(results, ["zed", "amy", "bob", "cat", "dan"])
    assert [row.name for row in table.rows] == ["amy", "bob", "cat", "zed", "dan"]
    assert [row.rank for row in table.rows] == [1, 1, 1, 1, 5]
    assert table["dan"].elo is None and table["dan"].games == 0
    with pytest.raises(ValueError, match="not in the event"):
        compute_standings(results, ["zed", "amy"])


def test_text_and_csv_renderings():
    table = compute_standings(small_event(), ["alpha", "beta", "gamma"], total_games=8, concurrency=2)
    text = table.to_text()
    lines = text.splitlines()
    assert lines[0].split() == ["Rank", "Name", "Points", "Games", "W-D-L", "Elo", "+/-", "SB"]
    assert lines[1].split()[:5] == ["1", "beta", "2.5", "4", "2-1-1"]
    # right-aligned numeric columns end at the same place on every row
    assert len({line.index("W-D-L") + len("W-D-L") for line in lines[:1]} | {
        lines[k].index(row) + len(row) for k, row in ((1, "2-1-1"), (2, "1-2-1"), (3, "1-1-2"))}) == 1
    assert lines[-1].startswith("6 of 8 games done: 5 played, 1 forfeited, about ")  # (small_event has a forfeit)
    rows = list(csv.DictReader(io.StringIO(table.to_csv())))
    assert [r["name"] for r in rows] == ["beta", "alpha", "gamma"]
    assert rows[0]["points"] == "2.5" and rows[0]["sonneborn-berger"] == "4.0"
    json.dumps(table.to_json())
    assert "beta" in table.crosstable_text().splitlines()[1]


def test_progress_and_time_left_by_hand():
    table = compute_standings(small_event(), total_games=10, concurrency=2, running_elapsed=[10.0])
    mean = (60 + 100 + 80 + 40 + 20) / 5  # the forfeit has no duration
    left = 10 - 6
    assert table.progress.done == 6 and table.progress.fraction == 0.6
    assert table.progress.seconds_left == pytest.approx(((mean - 10) + (left - 1) * mean) / 2)
    assert estimate_time_left([100.0], 1, 4, [30.0]) == pytest.approx(70.0)  # one game: its remaining time
    assert estimate_time_left([100.0], 3, 4) == pytest.approx(100.0)  # never below one whole game
    assert estimate_time_left([], 3) is None
    assert estimate_time_left([50.0], 0) == 0.0
    with pytest.raises(ValueError, match="concurrency"):
        estimate_time_left([1.0], 1, 0)


def test_head_to_head_ignores_forfeits():
    stats = head_to_head(small_event(), "beta", "gamma")
    assert (stats.wins, stats.draws, stats.losses) == (1, 0, 0)
    stats = head_to_head(small_event(), "alpha", "beta")
    assert (stats.wins, stats.draws, stats.losses) == (1, 1, 0)


def test_sprt_plays_on_without_a_decisive_game_and_never_fails_on_a_lopsided_sample():
    # a run of draws says nothing about who is stronger: one draw used to "accept H0", five raised ValueError
    for draws in (1, 5, 50, 500):
        result = sprt(0, draws, 0, elo0=0, elo1=20)
        assert result.status == SprtStatus.CONTINUE and result.llr == 0.0
    for wins, draws, losses in ((1, 400, 0), (0, 400, 1), (1000, 0, 0), (0, 0, 1000)):
        assert sprt(wins, draws, losses, elo0=0, elo1=20).status in tuple(SprtStatus)
