"""Analysis of recorded games: Connect Four verdicts equal the solver's values before and after every move (a known
blunder labelled as one), the same game gives byte-identical JSON, ``plyhall analyse`` prints and writes it, and a
real server analyses finished games in worker processes, stores them, serves them at /api/games/ID/analysis (202
while it works) and exports them.
"""

from __future__ import annotations

import json
import math
import random
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from bots.analysis import Analyser, analyse, label, move_accuracy
from bots.engine.connect4.fieldbook import field_book
from bots.engine.connect4.position import from_moves
from bots.engine.connect4.solver import SolverTables, new_solver_tables, solve_column
from protocol.games import GAMES
from server.io.analysis import MIN_AUTO_PLIES
from tests.helpers import http_json, plyhall, running_server, wait_until

C4 = GAMES["connect4"]
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "connect4"
NODES = 4_000_000


@cache
def solver_tables() -> SolverTables:
    """One solver over the field's book, with no node limit, for every check of this module."""
    return new_solver_tables(book=field_book())


def solved(moves: str) -> tuple[str, int]:
    """The exact outcome for the side to move after ``moves`` (columns 1-7), and the plies to the end, from the
    solver with no node limit."""
    outcome = C4.outcome(C4.start(*moves))
    if outcome is not None:
        return ("draw" if outcome.is_draw else "loss"), 0
    position, mask, stones = from_moves(moves)
    _, score, done = solve_column(np.uint64(position), np.uint64(mask), stones, solver_tables(), math.inf)
    assert done
    if score == 0:
        return "draw", 42 - stones
    winner_stones = 22 - abs(score)
    if score > 0:
        return "win", 2 * (winner_stones - stones // 2) - 1
    return "loss", 2 * (winner_stones - (stones + 1) // 2)


def best_line(moves: str) -> str:
    """``moves`` played on to the end by the solver (fastest win, slowest loss)."""
    while C4.outcome(C4.start(*moves)) is None:
        position, mask, stones = from_moves(moves)
        column, _, done = solve_column(np.uint64(position), np.uint64(mask), stones, solver_tables(), math.inf)
        assert done
        moves += str(column + 1)
    return moves


def a_blunder_game() -> tuple[str, int]:
    """A game in which a player throws away a won position (a known blunder), then both play perfectly: the moves,
    and the blunder's ply."""
    rng = random.Random(7)
    moves = "4453"  # Pons' example position; the side to move (first player) wins
    while True:
        start = moves + str(rng.randint(1, 7)) + str(rng.randint(1, 7))
        if C4.outcome(C4.start(*start)) is not None or solved(start)[0] != "win" or len(start) < 14:
            if len(start) > 20:
                moves = "4453"
            else:
                moves = start if C4.outcome(C4.start(*start)) is None else moves
            continue
        for column in "1234567":
            try:
                after = C4.start(*(start + column))
            except ValueError:
                continue
            if C4.outcome(after) is None and solved(start + column)[0] == "win":  # the opponent wins now
                return best_line(start + column), len(start) + 1
        moves = start


def test_connect4_verdicts_are_the_solvers_values_and_a_blunder_is_one() -> None:
    moves, blunder_ply = a_blunder_game()
    analysis = analyse("connect4", list(moves), nodes=NODES)
    positions = analysis["positions"]
    assert len(positions) == len(moves) + 1 and len(analysis["moves"]) == len(moves)
    assert all(p["exact"] for p in positions)  # every position, from the empty board
    for i in range(len(positions)):
        outcome, plies = solved(moves[:i])
        assert (positions[i]["outcome"], positions[i]["plies"]) == (outcome, plies), i
        assert positions[i]["value"] == {"win": 1.0, "draw": 0.5, "loss": 0.0}[outcome]
    for verdict in analysis["moves"]:
        assert verdict["exact"]
        ply = verdict["ply"]
        before, after = solved(moves[:ply - 1]), solved(moves[:ply])
        assert verdict["outcome_before"] == before[0]
        assert verdict["outcome_after"] == {"win": "loss", "loss": "win", "draw": "draw"}[after[0]]
    verdict = analysis["moves"][blunder_ply - 1]
    assert (verdict["outcome_before"], verdict["outcome_after"], verdict["label"]) == ("win", "loss", "blunder")
    assert verdict["best"] != verdict["move"] and verdict["loss"] == 1.0
    seat = verdict["seat"]
    assert analysis["summary"][str(seat)]["blunders"] >= 1
    perfect = analysis["moves"][blunder_ply:]
    assert perfect and all(v["exact"] and v["label"] in ("best", "good") for v in perfect)  # the solver's line


def test_an_opening_move_that_keeps_the_result_is_best_not_an_inaccuracy() -> None:
    """The game 4 4 4 4 3 (issue 42 saw the reply 4 at ply 2 labelled an inaccuracy): every position is exact from
    the empty board, and each centre stone is the best move (the first stone in the centre wins with the 21st
    stone; every reply to it loses, the centre slowest), until 3 throws the win away."""
    analysis = analyse("connect4", list("44443"), nodes=NODES)
    first = analysis["positions"][0]
    assert (first["exact"], first["outcome"], first["plies"], first["best"]) == (True, "win", 41, "4")
    assert all(p["exact"] for p in analysis["positions"])
    reply = analysis["moves"][1]
    assert (reply["move"], reply["outcome_before"], reply["outcome_after"], reply["plies_before"],
            reply["plies_after"]) == ("4", "loss", "loss", 40, 40)
    assert [v["label"] for v in analysis["moves"]] == ["best"] * 4 + ["blunder"]
    # the replay page says how the values were found: solved, not "N nodes a position"
    assert "solved exactly" in analysis["method"] and "nodes a position" not in analysis["method"]


@pytest.mark.skipif(not (DATA / "Test_L2_R1").exists(), reason="the shared test data is not beside the repository")
def test_exact_values_match_the_public_test_set() -> None:
    """Pons' published scores (an outside source): the analysis' value of each position says the same."""
    analyser = Analyser("connect4", NODES)
    lines = (DATA / "Test_L2_R1").read_text().split("\n")[:25]
    for line in lines:
        moves, score = line.split()
        value = analyser.value(C4.start(*moves))
        assert value.exact
        expected = "win" if int(score) > 0 else "loss" if int(score) < 0 else "draw"
        assert value.outcome == expected, line
        assert value.score == int(score), line


def test_the_same_game_gives_byte_identical_analysis() -> None:
    game = GAMES["magnetic-cave"]
    rng = random.Random(3)
    state, moves = game.initial_state(), []
    while game.outcome(state) is None:
        move = rng.choice(game.legal_moves(state))
        moves.append(game.notation(move))
        state = game.apply(state, move)
    first = json.dumps(analyse("magnetic-cave", moves, nodes=20_000), sort_keys=True)
    again = Analyser("magnetic-cave", 20_000)
    analyse("connect4", list("4455"), nodes=20_000)  # other work in between changes nothing
    assert json.dumps(analyse("magnetic-cave", moves, analyser=again), sort_keys=True) == first
    assert json.dumps(analyse("magnetic-cave", moves, analyser=again), sort_keys=True) == first  # reused engine


def test_labels_and_accuracy() -> None:
    from bots.analysis import Value

    win, draw, loss = (Value(1.0, True, "win", 5), Value(0.5, True, "draw", 9), Value(0.0, True, "loss", 4))
    assert label(win, loss, False) == "blunder" and label(draw, loss, False) == "blunder"
    assert label(win, draw, False) == "mistake" and label(win, win, True) == "best"
    guess = Value(0.6, False)
    assert label(guess, Value(0.25, False), False) == "blunder"
    assert label(guess, Value(0.42, False), False) == "mistake"
    assert label(guess, Value(0.5, False), False) == "inaccuracy"
    assert label(guess, Value(0.58, False), False) == "good"
    assert label(guess, Value(0.58, False), True) == "best"
    assert move_accuracy(0.6, 0.6) == pytest.approx(100.0, abs=0.01)
    assert move_accuracy(0.9, 0.1) < 5 < move_accuracy(0.6, 0.5) < 100


# plyhall analyse, and the server -----------------------------------------------------------------------------

def play_game(port: int, game: str, room: str) -> dict:
    url = f"ws://127.0.0.1:{port}/ws"
    bots = [plyhall("bot", "--game", game, "--level", level, "--name", f"{room}-{level}", "--room", room, "--games",
                    "1", "--seed", "3", "--url", url) for level in ("random", "novice")]
    for bot in bots:
        out, err = bot.communicate(timeout=240)
        assert bot.returncode == 0, out + err
    status, listing = http_json(port, "/api/games?limit=100")
    return next(g for g in listing["games"] if g["room"] == room)


async def test_the_server_analyses_stores_serves_and_exports(tmp_path: Path) -> None:
    with running_server(tmp_path, "--analyse-finished", "--analysis-nodes", "20000") as port:
        game = play_game(port, "magnetic-cave", "auto")
        got: dict = {}

        def stored() -> bool:
            status, body = http_json(port, f"/api/games/{game['id']}/analysis")
            assert status in (200, 202), body
            got.update(body)
            return status == 200

        await wait_until(stored, "the finished game's analysis", timeout=120)
        analysis = got["analysis"]
        assert len(analysis["moves"]) == game["move_count"] and analysis["nodes"] == 20000
        assert set(analysis["summary"]) == {"0", "1"}
        status, body = http_json(port, "/api/games/nosuchgame/analysis?request=1")
        assert status == 404 and "no game" in body["error"]
    exported = subprocess.run([sys.executable, "-m", "plyhall", "export", "--db", str(tmp_path / "plyhall.db")],
                              capture_output=True, text=True, check=True).stdout.splitlines()
    record = json.loads(exported[0])
    assert record["analysis"] == analysis  # stored with the game: exported with it
    printed = subprocess.run([sys.executable, "-m", "plyhall", "analyse", "--db", str(tmp_path / "plyhall.db"),
                              "--id", game["id"]], capture_output=True, text=True, check=True).stdout
    assert f"magnetic-cave game {game['id']}" in printed and "accuracy" in printed  # read back, not analysed again
    for verdict in analysis["moves"]:
        assert f"{verdict['ply']:>4}  " in printed


async def test_analysis_on_request(tmp_path: Path) -> None:
    with running_server(tmp_path, "--analysis-nodes", "20000") as port:
        game = play_game(port, "connect4", "asked")
        path = f"/api/games/{game['id']}/analysis"
        status, body = http_json(port, path)
        assert status == 200 and body["status"] == "none" and "request=1" in body["message"]
        status, body = http_json(port, path + "?request=1")
        assert status in (200, 202)
        assert body["status"] in ("queued", "running", "done")
        await wait_until(lambda: http_json(port, path)[0] == 200, "the requested analysis", timeout=120)
        status, body = http_json(port, path + "?request=1")  # asked again: the stored one, not a second job
        assert status == 200 and len(body["analysis"]["positions"]) == game["move_count"] + 1
        # a game resigned before its first move has nothing to analyse; an unknown event has no accuracy
        from tests.helpers import login

        ann, bob = await login(f"ws://127.0.0.1:{port}/ws", "ann-q"), await login(f"ws://127.0.0.1:{port}/ws", "bob-q")
        await ann.request({"type": "create_room", "game": "connect4", "name": "quick"})
        await ann.request({"type": "join", "room": "quick", "seat": 0})
        await bob.request({"type": "join", "room": "quick"})
        await ann.request({"type": "resign", "room": "quick"})
        over = await bob.expect("game_over", room="quick")
        status, body = http_json(port, f"/api/games/{over['record']}/analysis?request=1")
        assert status == 409 and "no moves" in body["error"]
        await ann.close()
        await bob.close()
        status, body = http_json(port, "/api/tournaments/no-such-cup/analysis")
        assert status == 404 and "no tournament" in body["error"]


def test_the_printed_table_keeps_its_columns_apart_for_the_longest_verdicts() -> None:
    from plyhall.commands.analyse import annotated

    record = {"game": "connect4", "id": "g1", "players": ["deep", "rookie"], "winner": 0, "reason": "four in a row",
              "moves": ["4", "4"]}
    move = {"ply": 1, "seat": 0, "move": "4", "best": "4", "before": 1.0, "after": 1.0, "outcome_before": "win",
            "outcome_after": "win", "plies_before": 41, "plies_after": 41, "label": "best", "only": False}
    reply = {**move, "ply": 2, "seat": 1, "before": 0.0, "after": 0.0, "outcome_before": "loss",
             "outcome_after": "loss", "plies_before": 40, "plies_after": 40}
    summary = {"accuracy": 100.0, "blunders": 0, "mistakes": 0, "inaccuracies": 0}
    lines = annotated(record, {"nodes": 1000, "moves": [move, reply], "summary": {"0": summary, "1": summary}})
    lines = lines.splitlines()
    assert lines[0].startswith("connect4 game g1: deep vs rookie, won by deep")  # it said 'deep v rookie'
    columns = [re.split(r"\s{2,}", line.strip()) for line in lines[1:4]]  # it printed 'win in 41 win in 41'
    assert columns == [["ply", "player", "move", "best", "before", "after", "verdict"],
                       ["1", "deep", "4", "4", "win in 41", "win in 41", "best"],
                       ["2", "rookie", "4", "4", "loss in 40", "loss in 40", "best"]]


def test_plyhall_analyse_prints_and_writes_json(tmp_path: Path) -> None:
    with running_server(tmp_path) as port:
        game = play_game(port, "connect4", "cli")
    db = str(tmp_path / "plyhall.db")

    def analyse_cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "plyhall", "analyse", "--db", db, *args],
                              capture_output=True, text=True, timeout=300)

    text = analyse_cli("--id", game["id"], "--nodes", "100000")
    assert text.returncode == 0, text.stderr
    assert "analysing game 1/1" in text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].startswith(f"connect4 game {game['id']}: ")
    assert lines[0].endswith("master, every position solved exactly (the field's 12-stone book, then the solver to "
                             "the end of the game)")  # whatever the node budget: the solver has no node limit
    assert len([line for line in lines if line[:4].strip().isdigit()]) == game["move_count"]
    assert lines[-2].startswith(game["players"][0] + ": accuracy ")
    as_json = analyse_cli("--id", game["id"], "--nodes", "100000", "--json")
    written = json.loads(as_json.stdout)
    moves = [m["move"] for m in http_json_moves(db, game["id"])]
    assert written["analysis"] == json.loads(json.dumps(analyse("connect4", moves, nodes=100000)))  # same as here
    missing = analyse_cli("--id", "nope")
    assert missing.returncode == 1 and "no game with id nope" in missing.stderr
    nodb = subprocess.run([sys.executable, "-m", "plyhall", "analyse", "--db", str(tmp_path / "none.db"), "--id",
                           "x"], capture_output=True, text=True)
    assert nodb.returncode == 1 and "no database file" in nodb.stderr
    bad = analyse_cli("--id", game["id"], "--nodes", "5")
    assert bad.returncode == 2 and "--nodes must be" in bad.stderr
    # run from a folder with a bots/ folder of its own (an organiser's entrants): the analysing process imported
    # that instead of Plyhall's ("cannot import name 'MASTERS' from 'bots'"), as the server's house bots did
    shadow = tmp_path / "entrants"
    (shadow / "bots").mkdir(parents=True)
    (shadow / "client").mkdir()
    console = Path(sys.executable).with_name("plyhall")  # as a user runs it (python -m puts the folder first itself)
    there = subprocess.run([str(console), "analyse", "--db", db, "--id", game["id"], "--fresh"], cwd=shadow,
                           capture_output=True, text=True, timeout=300)
    assert there.returncode == 0 and "accuracy" in there.stdout, there.stderr[-800:]


def test_plyhall_analyse_refuses_a_game_with_no_moves_and_leaves_a_tournament_s_forfeits_out(tmp_path: Path) -> None:
    """An aborted game or a forfeit has nothing to analyse: said so (the API answers 409 the same), not an empty
    table; a tournament's analysis leaves such games out and says how many."""
    from server.storage import open_storage
    from tests.helpers import game_record

    db = str(tmp_path / "plyhall.db")
    storage = open_storage(db)
    storage.save_game(game_record("empty", status="aborted", moves=0))
    storage.save_game(game_record("forfeit", status="forfeit", moves=0, tournament="cup"))
    storage.close()
    run = [sys.executable, "-m", "plyhall", "analyse", "--db", db]
    empty = subprocess.run([*run, "--id", "empty"], capture_output=True, text=True, timeout=120)
    assert empty.returncode == 1 and empty.stdout == ""
    assert "game empty has no moves (aborted): there is nothing to analyse" in empty.stderr
    cup = subprocess.run([*run, "--tournament", "cup"], capture_output=True, text=True, timeout=120)
    assert cup.returncode == 1 and cup.stdout == "", cup.stderr
    assert "1 of the tournament's 1 games have no moves (forfeits, aborted games): left out" in cup.stderr
    assert "has a move to analyse" in cup.stderr


def http_json_moves(db: str, game_id: str) -> list[dict]:
    from server.storage import open_existing

    storage = open_existing(db)
    try:
        return storage.get_game(game_id)["moves"]
    finally:
        storage.close()


async def test_a_tournaments_games_are_analysed_with_each_entrants_accuracy(tmp_path: Path) -> None:
    """A small round robin on a server that analyses every finished game: the event's page data gives each
    entrant's accuracy and counts over its games, and ``plyhall analyse --tournament`` prints every game."""
    secret = "organiser-secret"
    with running_server(tmp_path, "--organiser-secret", secret, "--analyse-finished", "--analysis-nodes",
                        "20000") as port:
        url = f"ws://127.0.0.1:{port}/ws"
        names = ("t-rand", "t-nov", "t-nov2")
        bots = [plyhall("bot", "--game", "connect4", "--level", "random" if name == "t-rand" else "novice",
                        "--name", name, "--secret", f"{name}-pw", "--tournament", "cup", "--url", url)
                for name in names]
        run = subprocess.run([sys.executable, "-m", "plyhall", "tournament", "run", "--url", url, "--secret",
                              secret, "--name", "Cup", "--game", "connect4", "--format", "round-robin", "--players",
                              ",".join(names), "--time-control", "10"], capture_output=True, text=True, timeout=240)
        for bot in bots:
            bot.communicate(timeout=60)
        assert run.returncode == 0, run.stdout + run.stderr
        status, games = http_json(port, "/api/games?tournament=cup&limit=100")
        assert len(games["games"]) >= 3
        # a novice may beat the random bot in 7 plies: games that short are not analysed by themselves
        long = [game for game in games["games"] if game["move_count"] >= MIN_AUTO_PLIES]
        expected = {name: sum(name in game["players"] for game in long) for name in names}
        found: dict = {}

        def all_analysed() -> bool:
            status, body = http_json(port, "/api/tournaments/cup/analysis")
            assert status == 200
            found.update(body["players"])
            return sum(p["games"] for p in body["players"].values()) == 2 * len(long)

        await wait_until(all_analysed, f"every game of the event analysed ({len(long)} long enough)", timeout=180)
        assert {name: figures["games"] for name, figures in found.items()} == {
            name: count for name, count in expected.items() if count}
        for figures in found.values():
            assert 0 <= figures["accuracy"] <= 100 and figures["moves"] > 0 and figures["blunders"] >= 0
    printed = subprocess.run([sys.executable, "-m", "plyhall", "analyse", "--db", str(tmp_path / "plyhall.db"),
                              "--tournament", "cup", "--json"], capture_output=True, text=True, timeout=120)
    assert printed.returncode == 0, printed.stderr
    lines = [json.loads(line) for line in printed.stdout.splitlines()]
    assert {line["id"] for line in lines} == {g["id"] for g in games["games"]}
    made = {game["id"] for game in games["games"] if f", {game['id']}, " in printed.stderr}  # "analysing game …"
    assert made == {game["id"] for game in games["games"]} - {game["id"] for game in long}  # the server's read back


def test_a_proven_amazons_result_gives_no_distance_it_cannot_vouch_for() -> None:
    """Amazons' engine proves a race decided before the game ends (separated regions whose turn counts say who runs
    out first), and its mate distance counted plies to that proof: a position with white to move read "black wins
    in 1", which no game can do (a win takes an odd number of plies from the winner's turn, a loss an even one). A
    random game to its end, analysed: every distance given keeps that parity (at the end, 0), and the proven
    results before the end give none."""
    import random as random_module

    from protocol.games import get_game

    game, rng = get_game("amazons"), random_module.Random(1)
    state, moves = game.initial_state(), []
    while legal := game.legal_moves(state):
        move = rng.choice(legal)
        moves.append(game.notation(move))
        state = game.apply(state, move)
    positions = analyse("amazons", moves, nodes=5000)["positions"]
    exact = [(i, p["outcome"], p["plies"]) for i, p in enumerate(positions) if p["exact"]]
    assert len(exact) > 1 and exact[-1] == (len(moves), "loss", 0), exact  # proven before the end, and at it
    wrong = [(i, outcome, plies) for i, outcome, plies in exact
             if plies is not None and (plies % 2 == 1) != (outcome == "win")]
    assert wrong == [], f"distances no game can have: {wrong}"
    assert all(plies is None for _, _, plies in exact[:-1])


def test_santorini_distances_count_the_plies_to_the_real_end() -> None:
    """Santorini's engine decides a climb at hand, and a threat nobody can dome, a ply or two before the game ends, and
    its distances left those plies out: "win in 1" where no move wins at once, "loss in 1", "win in 2". Random games
    to their end, analysed: a win takes an odd number of plies, a loss an even one, and a win in 1 has its move."""
    from protocol.games import get_game

    game, checked = get_game("santorini"), 0
    for seed in range(3):
        rng, state, states, moves = random.Random(seed), game.initial_state(), [], []
        while game.outcome(state) is None and (legal := game.legal_moves(state)):
            states.append(state)
            move = rng.choice(legal)
            moves.append(game.notation(move))
            state = game.apply(state, move)
        positions = analyse("santorini", moves, nodes=20000)["positions"]
        for index, (position, before) in enumerate(zip(positions, states, strict=False)):
            if not position["exact"] or position["outcome"] == "draw":
                continue
            checked += 1
            plies, won = position["plies"], position["outcome"] == "win"
            assert (plies % 2 == 1) == won, (seed, index, position)
            at_once = [m for m in game.legal_moves(before) if game.outcome(game.apply(before, m)) is not None]
            assert (plies == 1) == (won and bool(at_once)), (seed, index, position, at_once)
    assert checked >= 6, checked


@pytest.mark.parametrize("game_id", ["magnetic-cave", "amazons"])
def test_the_engines_own_moves_are_best_and_lose_nothing(game_id: str) -> None:
    """A game in which every move is the analysing engine's own best move: every verdict is "best" with no loss
    (Magnetic Cave's evaluation favours the side to move; judged naively, every move lost about 0.2)."""
    game = GAMES[game_id]
    analyser = Analyser(game_id, 20_000)
    analyser.fresh()
    state, moves = game.initial_state(), []
    for _ in range(8):
        best = analyser.value(state).best
        moves.append(game.notation(best))
        state = game.apply(state, best)
    analysis = analyse(game_id, moves, nodes=20_000)
    assert [v["label"] for v in analysis["moves"]] == ["best"] * len(moves)
    assert all(v["loss"] == 0 for v in analysis["moves"])


def test_a_reused_analyser_gives_each_game_the_values_it_gets_alone() -> None:
    """The worker keeps one analyser for many games: what it analysed before never changes a game's values (the
    Connect Four solver's table is emptied between games as the search's is)."""
    first = list("4453326")
    second = list("44533267")
    alone = json.dumps(analyse("connect4", second, nodes=360_000), sort_keys=True)
    worker = Analyser("connect4", 360_000)
    analyse("connect4", first, analyser=worker)
    assert json.dumps(analyse("connect4", second, analyser=worker), sort_keys=True) == alone


async def test_a_failing_job_never_stops_the_queue() -> None:
    """A database error reading one game, or a worker that dies, fails that job (said, and asked again later) and the
    queue goes on with the next game."""
    import concurrent.futures
    import sqlite3

    from server.io.analysis import AnalysisQueue

    echo = ("import json, sys\n"
            "for line in sys.stdin:\n"
            "    r = json.loads(line)\n"
            "    if r['moves'] == ['crash']: sys.exit(3)\n"
            "    print(json.dumps({'id': r['id'], 'progress': [1, 1]}), flush=True)\n"
            "    print(json.dumps({'id': r['id'], 'analysis': {'moves': r['moves']}}), flush=True)\n")
    records = {"ok": {"status": "finished", "game": "connect4", "moves": [{"move": "4"}]},
               "dies": {"status": "finished", "game": "connect4", "moves": [{"move": "crash"}]}}

    def read(game_id: str) -> dict:
        if game_id == "locked":
            raise sqlite3.OperationalError("database is locked")
        return records[game_id]

    saved: dict = {}
    with concurrent.futures.ThreadPoolExecutor(1) as reads:
        queue = AnalysisQueue(read, reads, saved.__setitem__, command=[sys.executable, "-c", echo])
        queue.start()
        try:
            for game_id in ("locked", "dies", "ok"):
                queue.request(game_id)
            await queue.wait("ok")
        finally:
            await queue.stop()
    assert saved == {"ok": {"moves": ["4"]}}
    assert queue.status("locked")["status"] == "failed" and queue.status("dies")["status"] == "failed"
    assert "exit code 3" in queue.status("dies")["error"]


async def test_a_flood_of_analysis_requests_is_bounded() -> None:
    """Anybody may ask for analyses over HTTP: each game is queued once however often it is asked for, and past
    MAX_QUEUED games waiting (from however many addresses) a request is refused (the route answers 429 with
    Retry-After) instead of growing the queue; tests/test_fair_share.py checks each address's share."""
    import concurrent.futures

    from server.io.analysis import MAX_QUEUED, AnalysisQueue, QueueFull

    with concurrent.futures.ThreadPoolExecutor(1) as reads:
        queue = AnalysisQueue(lambda game_id: None, reads, lambda game_id, data: None)  # not started: nothing leaves
        for _ in range(3):
            queue.request("same", "10.0.0.1")
        assert len(queue.jobs) == 1
        for n in range(MAX_QUEUED - 1):
            queue.request(f"g{n}", f"10.1.{n // 100}.{n % 100}")
        with pytest.raises(QueueFull, match="ask again later") as refused:
            queue.request("one-too-many", "10.2.0.1")
        assert len(queue.jobs) == MAX_QUEUED and refused.value.retry_after >= 1
