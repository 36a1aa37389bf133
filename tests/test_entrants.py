"""What a bot author and an organiser see when something is off: a bot for the wrong game, a bot that is no
entrant, seeks that cannot pair, a server restart under `tournament run`, a cancelled game, TOML files
written as people write them. Real processes, as the README runs them."""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from client.tournament import SETTINGS, TournamentCliError, definition
from tests.conftest import free_port
from tests.helpers import http_json, plyhall, read_until, start_server, stop

SECRET = "organiser-secret"
PLYHALL = [sys.executable, "-m", "plyhall"]


@pytest.fixture
def organised(tmp_path):
    port = free_port()
    proc = start_server(tmp_path / "cup.db", port, "--organiser-secret", SECRET)
    yield port
    stop(proc)


def create(port: int, *args: str) -> None:
    made = subprocess.run([*PLYHALL, "tournament", "create", "--url", f"ws://127.0.0.1:{port}/ws", "--secret", SECRET,
                           *args], capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr


def bot(port: int, *args: str) -> subprocess.Popen:
    return plyhall("bot", "--url", f"ws://127.0.0.1:{port}/ws", *args)


def test_a_bot_for_another_game_or_not_entered_says_so_in_one_line(organised):
    create(organised, "--name", "Cup", "--game", "amazons", "--format", "round-robin", "--players", "ann,bob")
    wrong = bot(organised, "--game", "connect4", "--name", "ann", "--tournament", "cup")
    out, err = wrong.communicate(timeout=60)
    assert wrong.returncode == 1 and "Traceback" not in err
    assert err.strip() == "plyhall bot: the tournament Cup plays amazons, and this bot plays connect4: start it " \
                          "with --game amazons"
    stranger = bot(organised, "--game", "amazons", "--name", "zed", "--tournament", "cup")
    out, err = stranger.communicate(timeout=60)
    assert stranger.returncode == 1 and "Traceback" not in err
    assert "zed is not an entrant of the tournament Cup; its entrants: ann, bob" in err


def test_seeks_that_cannot_pair_say_what_waits(organised):
    fast = bot(organised, "--game", "connect4", "--name", "fast", "--per-move", "5")
    try:
        read_until(fast, "waiting for an opponent for connect4")
        long = bot(organised, "--game", "connect4", "--name", "long", "--series", "3")
        try:
            said = read_until(long, "not pairing with")
            assert "fast (5 s a move, one game a room)" in said and "their settings differ" in said
            said = read_until(fast, "not pairing with")  # the first one is told too
            assert "long (30 s a move, series of 3)" in said
        finally:
            stop(long)
    finally:
        stop(fast)


def test_tournament_run_goes_on_after_the_server_restarts_and_a_cancelled_game_is_no_draw(tmp_path):
    port, db = free_port(), tmp_path / "restart.db"
    url = f"ws://127.0.0.1:{port}/ws"
    server = start_server(db, port, "--organiser-secret", SECRET)
    entrants = [bot(port, "--game", "connect4", "--level", "minimax-2", "--name", name, "--secret", f"{name}-pw",
                    "--tournament", "cup") for name in ("m1", "m2")]
    run = plyhall("tournament", "run", "--url", url, "--secret", SECRET, "--name", "Cup", "--game", "connect4",
                  "--format", "round-robin", "--players", "m1,m2", "--games-per-pairing", "4", "--time-control", "30")
    try:
        read_until(run, "1/4 games", timeout=120)
        server.send_signal(signal.SIGKILL)
        server.communicate(timeout=30)
        server = start_server(db, port, "--organiser-secret", SECRET)
        out, err = run.communicate(timeout=240)
        assert run.returncode == 0, out + err
        assert "reconnecting" in out and "reconnected" in out and "4/4 games" in out and "(finished)" in out
        for entrant in entrants:
            entrant.communicate(timeout=60)
        # a second event, cancelled while its game runs: the bots say aborted, not drew
        slow = [bot(port, "--game", "connect4", "--level", "minimax-8", "--name", name, "--secret", f"{name}-pw",
                    "--tournament", "slow") for name in ("s1", "s2")]  # seconds a move: the game is still on
        create(port, "--name", "Slow", "--game", "connect4", "--format", "round-robin", "--players", "s1,s2",
               "--time-control", "600", "--start")
        deadline = time.monotonic() + 60
        while [r["status"] for r in http_json(port, "/api/tournaments/slow")[1]["running"]] != ["playing"]:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        cancel = subprocess.run([*PLYHALL, "tournament", "cancel", "Slow", "--url", url, "--secret", SECRET],
                                capture_output=True, text=True, timeout=60)
        assert cancel.returncode == 0, cancel.stderr
        outputs = [b.communicate(timeout=60)[0] for b in slow]
        played = http_json(port, "/api/games?tournament=slow&status=all")[1]["games"]
        assert [g["status"] for g in played] == ["aborted"]
        for out in outputs:
            assert "aborted (the tournament was cancelled); not counted" in out and "drew" not in out, out
    finally:
        for proc in [*entrants, run]:
            stop(proc)
        stop(server)


def toml_definition(tmp_path: Path, text: str) -> dict:
    (tmp_path / "cup.toml").write_text(text, encoding="utf-8")
    args = argparse.Namespace(file=str(tmp_path / "cup.toml"), **dict.fromkeys(SETTINGS))
    return definition(args)


def test_toml_values_take_the_forms_of_the_flags(tmp_path):
    request = toml_definition(tmp_path, 'game = "connect4"\nformat = "swiss"\nplayers = "a,b,c,d"\nrounds = "3"\n'
                                        'time_control = 5\nconcurrency = "2"\ngrace = "45"\n')
    assert request["rounds"] == 3 and request["concurrency"] == 2 and request["grace"] == 45.0
    assert request["time_control"] == {"per_move": 5.0} and request["players"] == ["a", "b", "c", "d"]
    request = toml_definition(tmp_path, 'game = "connect4"\nformat = "gauntlet"\nplayers = ["a", "b"]\n'
                                        'time_control = "5m+2s"\nsprt = { elo0 = 0, elo1 = 20 }\n')
    assert request["time_control"] == {"initial": 300.0, "increment": 2.0} and request["sprt"]["elo1"] == 20
    for bad, words in (('rounds = "three"', "rounds must be a whole number"),
                       ("time_control = true", "time_control is 30"),
                       ("grace = [1]", "grace must be a number")):
        with pytest.raises(TournamentCliError, match=words):
            toml_definition(tmp_path, f'game = "connect4"\nformat = "swiss"\nplayers = ["a", "b"]\n{bad}\n')


def test_a_master_bot_warms_up_before_it_logs_in(organised):
    master = bot(organised, "--game", "connect4", "--level", "master", "--name", "deep")
    try:
        said = read_until(master, "waiting for an opponent", timeout=120)
        lines = said.splitlines()
        warming = next(i for i, line in enumerate(lines) if "warming up the master engine" in line)
        ready = next(i for i, line in enumerate(lines) if "the master engine ready in" in line)
        assert warming < ready < len(lines) - 1
    finally:
        stop(master)
    warm = subprocess.run([*PLYHALL, "bot", "--warm-up", "--game", "connect4"], capture_output=True, text=True,
                          timeout=300)
    assert warm.returncode == 0 and "warming up the connect4 master engine" in warm.stdout and "ready in" in warm.stdout
