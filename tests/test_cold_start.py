"""A fresh install loses no game for reasons other than play: a master bot warms its engine up (numba
compiles it the first time, ten seconds and more) before it takes a seat, so no clock runs meanwhile.

With an empty numba cache, the README's tournament command at ``--time-control 5``, and events in which
a house master plays Amazons and Santorini at 2 s a move, end with every game played out: none lost on
time, none forfeited.

It takes about a minute, and cannot take less without losing its point: each bot process compiles its engines from
nothing (the compile is what is proved harmless), and the README's cup plays its twelve games as written.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from pathlib import Path

from protocol.games import get_game
from tests.conftest import free_port
from tests.helpers import http_json, plyhall, start_server, stop

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
SECRET = "cup-secret"


def readme_tournament() -> tuple[list[list[str]], list[str]]:
    """The README's tournament section: its two entrant commands and its ``tournament run`` command."""
    section = README[README.index("## Run a tournament"):README.index("`tournament run` creates")]
    commands = [line.split() for line in re.sub(r"\\\n\s*", "", section).splitlines()
                if line.startswith(".venv/bin/plyhall ")]
    bots = [c[1:] for c in commands if c[1] == "bot"]
    run = [c[1:] for c in commands if c[1] == "tournament"]
    assert len(bots) == 2 and len(run) == 1 and "--time-control" in run[0], commands
    assert "serve --organiser-secret cup-secret --house-bots 2" in section
    return bots, run[0]


def short_amazons_opening(plies: int = 56, seed: int = 3) -> str:
    """An opening line of random legal moves, so that a game from it is short (a test, not a benchmark)."""
    amazons, rng = get_game("amazons"), random.Random(seed)
    state, moves = amazons.initial_state(), []
    for _ in range(plies):
        move = rng.choice(amazons.legal_moves(state))
        moves.append(amazons.notation(move))
        state = amazons.apply(state, move)
    assert amazons.outcome(state) is None
    return " ".join(moves)


def played_out(port: int, tournament: str) -> list[dict]:
    status, listing = http_json(port, f"/api/games?tournament={tournament}&status=all&limit=500")
    assert status == 200
    return listing["games"]


def test_cold_masters_lose_no_game_on_time(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))  # empty: every engine compiles anew
    port = free_port()
    url = f"ws://127.0.0.1:{port}/ws"
    server = start_server(tmp_path / "cold.db", port, "--organiser-secret", SECRET, "--house-bots", "2", env=env)
    (tmp_path / "amazons-openings.txt").write_text(short_amazons_opening() + "\n", encoding="utf-8")
    procs: list[subprocess.Popen] = []
    try:
        bots, run = readme_tournament()
        procs += [plyhall(*bot, "--url", url, env=env) for bot in bots]
        cup = subprocess.run([sys.executable, "-m", "plyhall", *run, "--url", url], capture_output=True, text=True,
                             timeout=600, env=env)
        assert cup.returncode == 0, cup.stdout + cup.stderr
        events = []
        for game, extra in (("amazons", ["--openings", str(tmp_path / "amazons-openings.txt")]), ("santorini", [])):
            procs.append(plyhall("bot", "--game", game, "--level", "random", "--name", f"{game}-rnd", "--secret",
                                 "pw", "--tournament", game, "--url", url, env=env))
            events.append(plyhall("tournament", "run", "--secret", SECRET, "--name", game, "--game", game, "--format",
                                  "round-robin", "--players", f"{game}-rnd", "--local", "master", "--time-control", "2",
                                  "--url", url, *extra, env=env))
        for event in events:
            out, err = event.communicate(timeout=600)
            assert event.returncode == 0, out + err
        for tournament, total in (("cup", 12), ("amazons", 2), ("santorini", 2)):
            games = played_out(port, tournament)
            assert len(games) == total
            assert all(g["status"] == "finished" and "time" not in g["reason"] for g in games), \
                [(g["players"], g["status"], g["reason"]) for g in games]
        for proc in procs:
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, out + err
    finally:
        for proc in procs:
            stop(proc)
        stop(server)
    assert re.search(r"house-master-\d+ +[\d.]+ +6 ", cup.stdout), cup.stdout  # the master played all its games
