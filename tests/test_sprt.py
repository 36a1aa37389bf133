"""The SPRT that decides a gauntlet: fishtest's pentanomial GSPRT, checked against fishtest's own figures, and
a gauntlet that no longer decides on a handful of games (issue 41)."""

from __future__ import annotations

import pytest

from protocol.statistics import (
    MIN_SPRT_PAIRS,
    SprtStatus,
    llr_logistic,
    llr_normalized,
    pentanomial,
    sprt,
    sprt_pairs,
)
from server.tournament.director import Director, Sprt, TournamentError, define

# (model, elo0, elo1, pentanomial counts LL, LD, LW+DD, DW, WW, the LLR fishtest computes)
# The LLRs were computed once by fishtest's own published functions, LLRcalc.LLR_normalized and
# LLRcalc.LLR_logistic of official-stockfish/fishtest (server/fishtest/stats/LLRcalc.py, with scipy's brentq),
# run from a scratch copy outside this repository; they are data here, not recomputed.
FISHTEST_LLR = [
    ("normalized", 0, 20, (0, 0, 0, 0, 2), 0.1560628074446902),  # two won pairs: the README's 2-2-0 start, at best
    ("normalized", 0, 20, (0, 0, 1, 0, 1), 0.10922062098758739),  # 2 wins, 2 draws, no loss as pairs
    ("normalized", 0, 20, (0, 0, 10, 0, 0), -0.06172283361415809),  # all draws
    ("normalized", 0, 20, (0, 0, 3, 5, 2), 0.5151884180979889),  # no loss at all
    ("normalized", 0, 20, (0, 0, 0, 0, 40), 3.1206812404575293),  # 80 wins in a row: now it decides
    ("normalized", 0, 20, (1, 2, 3, 4, 5), 0.5278829782870824),
    ("normalized", 0, 5, (1187, 7410, 13475, 7378, 1164), -8.125813619160681),
    ("normalized", 0.764, 3.439, (39, 2226, 31451, 2412, 40), 2.162940869584568),  # fishtest's own example
    ("normalized", 0, 20, (40, 0, 0, 0, 0), -3.384922220425549),  # all lost
    ("normalized", -3, 1, (10789, 19328, 33806, 19402, 10543), 0.30086978548354076),
    ("logistic", 0, 20, (0, 0, 0, 0, 2), 0.11192563808330673),
    ("logistic", 0, 20, (0, 0, 10, 0, 0), -0.5854342209858332),  # all draws
    ("logistic", 0, 20, (0, 0, 3, 5, 2), 0.5589706576519111),  # no loss
    ("logistic", -3, 1, (10789, 19328, 33806, 19402, 10543), 2.1310678117940807),
    ("logistic", 0.2, 0.9, (39, 2226, 31451, 2412, 40), 2.1625425800483593),
    ("logistic", 0, 20, (3, 10, 20, 12, 5), 0.33532284017622116),
    ("normalized", 0, 20, (3, 10, 20, 12, 5), 0.30577659410523433),
    ("normalized", 0, 50, (0, 1, 4, 9, 16), 4.394186916058346),
]


@pytest.mark.parametrize(("model", "elo0", "elo1", "counts", "expected"), FISHTEST_LLR)
def test_llr_agrees_with_fishtest(model: str, elo0: float, elo1: float, counts: tuple[int, ...],
                                  expected: float) -> None:
    llr = (llr_normalized if model == "normalized" else llr_logistic)(elo0, elo1, counts)
    assert llr == pytest.approx(expected, rel=1e-8, abs=1e-10)
    assert sprt_pairs(counts, elo0=elo0, elo1=elo1, model=model).llr == pytest.approx(expected, rel=1e-8, abs=1e-10)


def test_decisions_against_wald_bounds() -> None:
    won = sprt_pairs((0, 0, 0, 0, 40), elo0=0, elo1=20)
    assert won.status is SprtStatus.ACCEPT_H1 and "H1 was accepted" in won.describe()
    assert "pentanomial 0-0-0-0-40" in won.describe() and won.to_json()["model"] == "normalized"
    assert sprt_pairs((40, 0, 0, 0, 0), elo0=0, elo1=20).status is SprtStatus.ACCEPT_H0
    assert sprt_pairs((0, 0, 0, 0, 30), elo0=0, elo1=20).status is SprtStatus.CONTINUE  # 60-0 is not yet enough
    assert sprt_pairs((0, 0, 10, 0, 0), elo0=0, elo1=20).status is SprtStatus.CONTINUE  # draws say little


def test_the_readme_start_no_longer_decides() -> None:
    # the run: 2 wins, 2 draws, 0 losses accepted H1 (llr 3.45) under the regularized BayesElo test
    assert sprt(2, 2, 0, elo0=0, elo1=20).status is SprtStatus.CONTINUE  # cutechess-cli's rule: a zero count
    as_pairs = sprt_pairs(pentanomial([1.5, 1.5]), elo0=0, elo1=20)
    assert as_pairs.status is SprtStatus.CONTINUE and as_pairs.llr < 0.2


def test_no_decision_before_the_minimum_of_pairs_even_with_wide_bounds() -> None:
    few = sprt_pairs((0, 0, 0, 0, MIN_SPRT_PAIRS - 1), elo0=0, elo1=200)
    assert few.llr > few.upper_bound and few.status is SprtStatus.CONTINUE
    assert f"{MIN_SPRT_PAIRS} game pairs" in few.waiting and few.waiting in few.describe()
    enough = sprt_pairs((0, 0, 0, 0, MIN_SPRT_PAIRS), elo0=0, elo1=200)
    assert enough.status is SprtStatus.ACCEPT_H1 and not enough.waiting


def test_bad_input_is_refused_with_what_is_accepted() -> None:
    with pytest.raises(ValueError, match="5 counts"):
        sprt_pairs((1, 2, 3), elo0=0, elo1=5)
    with pytest.raises(ValueError, match="whole numbers"):
        sprt_pairs((1, 2, -3, 0, 0), elo0=0, elo1=5)
    with pytest.raises(ValueError, match="normalized or the logistic"):
        sprt_pairs((1, 2, 3, 4, 5), elo0=0, elo1=5, model="bayeselo")
    with pytest.raises(ValueError, match="elo0 must be below elo1"):
        sprt_pairs((1, 2, 3, 4, 5), elo0=5, elo1=0)
    with pytest.raises(ValueError, match="0.5, 1, 1.5 or 2"):
        pentanomial([0.25])
    assert pentanomial([0, 0.5, 1, 1, 1.5, 2, 2]) == (1, 1, 2, 1, 2)
    beyond = sprt_pairs((0, 0, 0, 0, 20), elo0=0, elo1=1000)  # no distribution of pairs has such a t-value
    assert beyond.status is SprtStatus.CONTINUE and "out of the normalized model's reach" in beyond.waiting


def gauntlet(sprt_spec: dict, local: dict[str, str] | None = None, openings: str | None = None,
             cycles: int = 100) -> Director:
    obj = {"game": "connect4", "format": "gauntlet", "name": "Test", "sprt": sprt_spec, "cycles": cycles}
    if openings is not None:
        obj["openings"] = {"text": openings, "plies": 2}
    entrants = ["alpha", "beta"] if local is None else list(local)
    director = Director(define(obj, entrants, local or {}, 0.0))
    director.control("start")
    return director


def play_out(director: Director, winner_of: callable) -> int:
    """Play the due games one by one (``winner_of(game)`` gives the winning seat or None) until the event ends."""
    played = 0
    while director.status == "running":
        for game in director.due():
            director.opened(game.number, f"room{game.number}", 0.0)
            director.ended(game.number, winner_of(game), "finished", f"g{game.number}", 1.0)
            played += 1
    return played


def test_a_gauntlet_decides_on_pairs_not_on_four_games() -> None:
    # alpha wins as white and draws as black: 2 wins, 2 draws after 4 games, the start
    director = gauntlet({"elo0": 0, "elo1": 20})
    played = play_out(director, lambda game: 0 if game.white == "alpha" else None)
    test = director.sprt()
    assert test is not None and test["status"] == "H1" and test["model"] == "normalized"
    assert played == test["games"] >= 2 * MIN_SPRT_PAIRS and played > 4
    assert test["pentanomial"] == [0, 0, 0, played // 2, 0]  # every pair a win and a draw
    assert f"after {played} games" in director.stopped_early
    assert "pentanomial" in director.to_text(0.0)


def test_a_legacy_gauntlet_waits_for_a_loss() -> None:
    director = gauntlet({"elo0": 0, "elo1": 20, "model": "bayeselo"}, cycles=20)
    played = play_out(director, lambda game: 0 if game.white == "alpha" else None)
    test = director.sprt()
    assert test is not None and test["status"] == "continue" and played == 40  # no loss: it never decides
    assert "zero" in test["waiting"]


def test_sprt_settings_are_checked() -> None:
    assert Sprt.parse({"elo0": 0, "elo1": 5}).model == "normalized"
    assert Sprt.parse({"elo0": 0, "elo1": 5, "model": "logistic"}).to_json()["model"] == "logistic"
    with pytest.raises(TournamentError, match="normalized, logistic, bayeselo"):
        Sprt.parse({"elo0": 0, "elo1": 5, "model": "glicko"})


def test_plyhall_tournament_sprt_chooses_its_model_on_the_command_line() -> None:
    from client.tournament import TournamentCliError, parse_sprt

    parsed = parse_sprt("elo0=0, elo1=20, model=logistic")
    assert parsed == {"elo0": 0.0, "elo1": 20.0, "model": "logistic"}
    assert Sprt.parse(parsed).model == "logistic" and Sprt.parse(parse_sprt("elo0=0,elo1=5")).model == "normalized"
    assert Sprt.parse(parse_sprt("elo0=0,elo1=5,alpha=0.1,model=bayeselo")).to_json()["model"] == "bayeselo"
    with pytest.raises(TournamentCliError, match="model must be one of normalized, logistic, bayeselo, not 'elo'"):
        parse_sprt("elo0=0,elo1=20,model=elo")
    with pytest.raises(TournamentCliError, match="model=M"):
        parse_sprt("elo0=0,elo1=20,drawelo=3")


def test_an_sprt_between_fixed_depth_levels_needs_openings() -> None:
    local = {"house-minimax-4-1": "minimax-4", "house-minimax-3-1": "minimax-3"}
    with pytest.raises(TournamentError, match="needs --openings"):
        gauntlet({"elo0": 0, "elo1": 20}, local)
    assert gauntlet({"elo0": 0, "elo1": 20}, local, openings="4 4\n3 4\n").settings.openings
    assert gauntlet({"elo0": 0, "elo1": 20}, {"house-master-1": "master", "house-minimax-4-1": "minimax-4"})


def test_an_sprt_on_game_pairs_needs_an_even_number_of_games_a_pairing() -> None:
    """With one game a pairing the pentanomial stayed 0-0-0-0-0: all 60 games were played and the test never decided."""
    for per in (1, 3):
        obj = {"game": "connect4", "format": "gauntlet", "name": "Odd", "sprt": {"elo0": 0, "elo1": 50},
               "games_per_pairing": per}
        with pytest.raises(TournamentError, match=f"{per} games? a pairing leave a game without its pair"):
            define(obj, ["alpha", "beta"], {}, 0.0)
        single = define({**obj, "sprt": {"elo0": 0, "elo1": 50, "model": "bayeselo"}}, ["alpha", "beta"], {}, 0.0)
        assert single.sprt is not None and single.sprt.model == "bayeselo"  # single games: any number a pairing
    assert define({**obj, "games_per_pairing": 4}, ["alpha", "beta"], {}, 0.0).sprt is not None
