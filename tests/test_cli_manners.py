"""The command line's manners, as real ``plyhall`` processes: results kept on Ctrl-C, a word while engines warm up,
one line per mistake with the fix, and words that fit what the user did."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from client.tournament import describe_progress
from protocol.wording import counted
from server.tournament.schedule import ScheduleError, TournamentSpec
from tests.conftest import free_port
from tests.helpers import plyhall, running_server, stop


def plyhall_argv(*args: str) -> list[str]:
    """The command line of ``plyhall ARGS``, as :func:`tests.helpers.plyhall` runs it."""
    return [sys.executable, "-m", "plyhall", *args]


def read_err_until(proc: subprocess.Popen, text: str) -> str:
    """``proc``'s standard error, line by line, until a line says ``text`` (the test fails if it ends first)."""
    lines = []
    while line := proc.stderr.readline():
        lines.append(line)
        if text in line:
            return "".join(lines)
    out, err = stop(proc)
    raise AssertionError(f"never said {text!r}: {''.join(lines)}{err}")


def test_ctrl_c_in_a_match_prints_the_results_so_far():
    proc = plyhall("match", "--game", "connect4", "random", "random", "--games", "100000", "--seed", "1")
    try:
        read_err_until(proc, "1/100000")  # a game is over
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        stop(proc)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert "of 100000 games: the results so far" in err, err
    played = int(err.split("interrupted after ")[1].split(" ")[0])
    assert played >= 1 and f"connect4: A = random, B = random, {counted(played, 'game')}, seed 1" in out, out
    assert "A  random" in out and "95% interval" in out


def test_a_match_says_it_warms_up_the_master_engine_and_ctrl_c_acts_during_it():
    proc = plyhall("match", "--game", "santorini", "master", "random", "--games", "2")
    try:
        read_err_until(proc, "warming up the santorini master engine…")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)  # a bound for a hang only: numba's compile is never waited for
    finally:
        stop(proc)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert "interrupted after 0 of 2 games" in err or "the results so far" in err, err


def test_a_bot_with_no_server_says_so_before_its_engine_warms_up():
    url = f"ws://127.0.0.1:{free_port()}/ws"
    proc = plyhall("bot", "--game", "connect4", "--level", "master", "--name", "early", "--url", url)
    try:
        first, second = proc.stdout.readline(), proc.stdout.readline()
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert first.startswith(f"early: no server at {url} (connection refused)"), first + second + out + err
    assert "warming up the master engine" in second  # and then it warms up, and keeps trying
    assert proc.returncode == 130 and "Traceback" not in err, err


def test_tournament_without_a_server_says_so_in_one_line_without_an_errno():
    url = f"ws://127.0.0.1:{free_port()}/ws"
    for action in (["status", "cup"], ["run", "--game", "connect4", "--format", "round-robin", "--players", "ann",
                                       "--local", "novice", "--secret", "s"]):
        run = subprocess.run(plyhall_argv("tournament", *action, "--url", url), capture_output=True, text=True,
                             timeout=60)
        lines = run.stderr.strip().splitlines()
        assert run.returncode == 1 and len(lines) == 1, run.stderr  # as a bot's (2 is for bad arguments)
        assert lines[0] == (f"plyhall tournament: no server at {url} (connection refused); start one with "
                            "`plyhall serve`, or check --url"), lines[0]


def test_a_mistyped_game_is_one_line_and_game_ids_take_any_case():
    run = subprocess.run(plyhall_argv("bot", "--game", "Chess", "--name", "typo"), capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 2 and run.stderr.strip().splitlines() == [
        "plyhall bot: unknown game 'chess'; games: connect4, santorini, amazons, magnetic-cave, quarto"], run.stderr
    url = f"ws://127.0.0.1:{free_port()}/ws"
    proc = plyhall("bot", "--game", "Connect4", "--name", "cased", "--url", url)  # as --level Random is taken
    try:
        first = proc.stdout.readline()
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert first.startswith(f"cased: no server at {url}"), first + out + err
    run = subprocess.run(plyhall_argv("match", "--game", "Quarto", "random", "random", "--games", "1", "--quiet"),
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "quarto: A = random, B = random, 1 game, seed" in run.stdout, run.stderr


def test_tournament_progress_never_says_0m00s_left_and_a_cycle_of_one_round_is_singular():
    event = {"name": "Cup", "status": "running", "schedule": [], "standings": {"rows": []},
             "progress": {"done": 1, "total": 12, "seconds_left": 0.4}}
    assert describe_progress(event) == "Cup: 1/12 games, under a minute left"
    event["progress"]["seconds_left"] = 754.0
    assert describe_progress(event) == "Cup: 1/12 games, about 12m 34s left"
    with pytest.raises(ScheduleError) as info:
        TournamentSpec("round-robin", ["ann", "bob"], rounds=3)
    assert "each cycle is 1 round)" in str(info.value)


def test_each_game_a_bot_reports_has_the_number_it_was_announced_with(tmp_path):
    with running_server(tmp_path) as port:
        url = f"ws://127.0.0.1:{port}/ws"
        procs = [plyhall("bot", "--game", "connect4", "--name", name, "--games", "2", "--url", url)
                 for name in ("numa", "numb")]
        try:
            outputs = [proc.communicate(timeout=120)[0] for proc in procs]
        finally:
            for proc in procs:
                stop(proc)
    for out in outputs:
        ended = re.findall(r"^(game \d+) in (.+?): (?:won|lost|drew)", out, re.M)
        assert len(ended) == 2, out
        for number, room in ended:
            assert f"playing {number} in {room} against" in out, out  # the same number as it was announced


def test_every_name_in_the_docs_commands_comes_with_one_secret():
    """README.md and docs/*.md run top to bottom on one database: a name used with two secrets (or with a secret,
    then none) is refused the second time as claimed. Bots' names in fenced commands and examples, with their
    secrets (the COSC 322 client's second argument is its password)."""
    root = Path(__file__).resolve().parent.parent
    secrets: dict[str, set[str | None]] = {}
    for doc in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        for block in re.findall(r"^```[\w-]*\n(.*?)^```", text, re.S | re.M):
            for line in block.splitlines():
                named = re.search(r"plyhall (?:bot|cosc322 entrant) .*?--name (\S+)", line)
                if named and "COSC322Test" not in line:  # (an entrant's bot logs in with the password it is given)
                    secret = re.search(r"--secret (\S+)", line)
                    secrets.setdefault(named.group(1), set()).add(secret.group(1) if secret else None)
                java = re.search(r"COSC322Test (\S+) (\S+?)\)?\s*$", line)  # (or the end of a subshell)
                if java:
                    secrets.setdefault(java.group(1), set()).add(java.group(2))
                python = re.search(r'name="([\w.-]+)"', line)
                if python:
                    secrets.setdefault(python.group(1), set())
        for name, secret in re.findall(r'name="([\w.-]+)",.*?\n\s*secret="([^"]+)"', text):
            secrets.setdefault(name, set()).add(secret)
    assert {"nova", "lookahead", "alice", "my-bot", "c-random"} <= set(secrets), secrets
    twice = {name: sorted(map(str, found)) for name, found in secrets.items() if len(found) > 1}
    assert not twice, f"names with more than one secret across the docs: {twice}"


def test_a_server_error_in_a_bots_log_names_the_bot(caplog):
    import asyncio
    import logging

    from client.play_loop import PlayerRunner, RunOptions
    from client.player import FunctionPlayer

    runner = PlayerRunner(FunctionPlayer(lambda turn: None), RunOptions(name="lad", game="connect4"))
    with caplog.at_level(logging.WARNING, logger="plyhall"):
        asyncio.run(runner._on_message(None, {"type": "error", "code": "rate_limited", "message": "too fast"}))
    assert "lad: server error: rate_limited too fast" in caplog.text


def test_tournament_commands_refused_say_what_to_do_instead(tmp_path):
    """``status nope`` pointed a command-line user at /api/tournaments; ``pause`` of an event only created said
    'T1 is created: it cannot pause' and no more."""
    from tests.helpers import running_server

    secret = "walkthrough-secret"
    with running_server(tmp_path, "--organiser-secret", secret) as port:
        url = f"ws://127.0.0.1:{port}/ws"

        def cli(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run(plyhall_argv("tournament", *args, "--url", url, "--secret", secret),
                                  capture_output=True, text=True, timeout=60)

        made = cli("create", "--name", "T1", "--game", "connect4", "--format", "round-robin", "--players", "a,b")
        assert made.returncode == 0, made.stderr
        for action, words in (("pause", "T1 is created: it cannot pause; start it first: plyhall tournament start "
                                         f"t1 --url {url}"),
                              ("resume", "T1 is created: it cannot resume; start it first: plyhall tournament start "
                                         f"t1 --url {url}")):
            refused = cli(action, "T1")
            assert refused.returncode == 1, refused.stderr
            assert refused.stderr.strip() == f"plyhall tournament: the server refused: {words}", refused.stderr
        assert cli("start", "T1").returncode == 0
        again = cli("start", "T1")
        assert again.returncode == 1
        assert again.stderr.strip().endswith(f"it cannot start; its progress: plyhall tournament status t1 --url {url}")
        for action in ("status", "results"):
            missing = cli(action, "nope")
            assert missing.returncode == 2
            assert missing.stderr.strip() == (f"plyhall tournament: no tournament 'nope' on {url}; `plyhall "
                                              f"tournament list --url {url}` lists them"), missing.stderr
