"""Connect Four checked against an outside solver: BitBully (``bitbully``, AGPL, a test-only dependency: the
``oracle`` extra) scores every move of every position of seeded games from the empty board; the analysis
(what ``plyhall analyse`` prints) and master's moves must agree with it everywhere.

Also: the package itself never imports ``bitbully``, and the server never loads the opening book.
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bots.analysis import analyse
from bots.base import TimeBudget
from bots.engine.connect4.master import Connect4Master
from protocol.games import GAMES

bitbully = pytest.importorskip("bitbully", reason="the oracle extra (pip install -e '.[test]') is not installed")

GAME = GAMES["connect4"]
ROOT = Path(__file__).resolve().parents[1]
SEEDS = (1, 2, 6)  # 6: draws and a mistake (a win let go to a draw) too
SLIP = 0.15
"""How often a seeded game's move is any legal move rather than one keeping the result (wins and losses, not
only draws, get checked)."""


@pytest.fixture(scope="module")
def oracle() -> object:
    return bitbully.BitBully()


def oracle_scores(oracle: object, moves: str) -> dict[int, int]:
    """BitBully's exact score of every legal column (0-based) after ``moves`` (columns 1-7)."""
    board = bitbully.Board("".join(str(int(c) - 1) for c in moves))
    return oracle.score_all_moves(board)


def sign(score: int) -> int:
    return (score > 0) - (score < 0)


def seeded_game(oracle: object, seed: int) -> str:
    """A game from the empty board: mostly moves that keep the result (the slower ones, so games run long), now
    and then any legal move."""
    rng = random.Random(seed)
    moves = ""
    while GAME.outcome(GAME.start(*moves)) is None:
        scores = oracle_scores(oracle, moves)
        best = max(scores.values())
        if rng.random() < SLIP:
            column = rng.choice(sorted(scores))
        else:
            keeping = [c for c, s in scores.items() if sign(s) == sign(best)]
            slowest = min(abs(scores[c]) for c in keeping)
            column = rng.choice(sorted(c for c in keeping if abs(scores[c]) == slowest))
        moves += str(column + 1)
    return moves


def outcome_of(score: int) -> str:
    return "win" if score > 0 else "loss" if score < 0 else "draw"


@pytest.mark.parametrize("seed", SEEDS)
def test_the_analysis_and_master_agree_with_bitbully_on_every_position(oracle: object, seed: int) -> None:
    moves = seeded_game(oracle, seed)
    analysis = analyse("connect4", list(moves))
    master = Connect4Master("connect4", "master", seed=seed)
    master.new_game()
    for ply, position in enumerate(analysis["positions"]):
        state = GAME.start(*moves[:ply])
        assert position["exact"], (moves[:ply], position)
        if GAME.outcome(state) is not None:
            continue
        scores = oracle_scores(oracle, moves[:ply])
        best = max(scores.values())
        assert position["score"] == best and position["outcome"] == outcome_of(best), (moves[:ply], position, scores)
        assert scores[int(position["best"]) - 1] == best, (moves[:ply], position, scores)
        # master, given the time to finish (positions past the openings may take the solver seconds)
        column = master.choose(state, TimeBudget(per_move=120.0)).column
        assert scores[column] == best, (moves[:ply], column, scores)
        verdict = analysis["moves"][ply] if ply < len(moves) else None
        if verdict is None:
            continue
        played = scores[int(moves[ply]) - 1]
        if played == best:
            assert verdict["label"] == "best", (moves[:ply + 1], verdict, scores)
        elif sign(played) < sign(best):
            assert verdict["label"] == ("blunder" if played < 0 else "mistake"), (moves[:ply + 1], verdict, scores)
        else:
            assert verdict["label"] == "good", (moves[:ply + 1], verdict, scores)  # the result kept, more slowly
    assert all(v["label"] != "inaccuracy" for v in analysis["moves"])


def test_the_package_never_imports_bitbully() -> None:
    """bitbully is AGPL: only the tests use it; the package reads the MIT bitbully-databases book itself."""
    pattern = re.compile(r"^\s*(import bitbully\b|from bitbully\b(?!_databases))", re.MULTILINE)
    offenders = [str(path.relative_to(ROOT)) for package in ("protocol", "server", "client", "bots")
                 for path in (ROOT / package).rglob("*.py") if pattern.search(path.read_text())]
    assert offenders == []


def test_the_server_never_loads_the_opening_book() -> None:
    """The book (21 MB) lives in bot and analysis worker processes: starting a server imports neither it nor the
    package that ships it."""
    code = ("import sys, plyhall.commands.serve, server.io.server, server.io.analysis; "
            "loaded = [m for m in sys.modules if m.startswith(('bitbully', 'bots'))]; print(loaded); "
            "sys.exit(1 if loaded else 0)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
