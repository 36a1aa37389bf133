"""A newcomer's first hour, as processes: README's server and two bots, in any order and timing, and
the clear one-line answers to the mistakes people make first (wrong --url, no server, one name twice).

Everything runs as the README says it: a real ``plyhall serve`` process and ``plyhall bot`` processes.
"""

from __future__ import annotations

import concurrent.futures
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from client.play_loop import describe_plan, describe_seeking
from tests.conftest import free_port
from tests.helpers import http_json, plyhall, read_until, running_server, stop

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
ORDERS = ("first bot first", "second bot first", "together")
RUNS_PER_GAME = 6  # seeded runs per game, each order twice; two games run side by side, so 12 in all
GAMES = 3


def readme_bot_commands() -> list[list[str]]:
    """The two `plyhall bot` commands of the README's "server and two bots" (without `.venv/bin/`)."""
    demo = README[README.index("The server and two bots"):README.index("## Run a tournament")]
    commands = re.findall(r"^\.venv/bin/plyhall (bot --game .*?)\s*$", demo, re.M)
    assert len(commands) == 2, commands
    return [command.split() for command in commands]


def fast(command: list[str], game: str, name: str, seed: int, url: str) -> list[str]:
    """A README command made fast and unique: a quick level, its own name and game, fewer games."""
    args = list(command)
    args[args.index("--game") + 1] = game
    args[args.index("--level") + 1] = "random" if "master" in args else "novice"
    args[args.index("--name") + 1] = name
    args[args.index("--games") + 1] = str(GAMES)
    return [*args, "--seed", str(seed), "--url", url]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory):
    """One `plyhall serve` process for the module (as a club runs one server all day)."""
    with running_server(tmp_path_factory.mktemp("hour")) as port:
        yield port


def run_pair(url: str, game: str, seed: int) -> tuple[str, list[tuple[int, str, str]]]:
    """Both README bots for ``game``, started in an order and with a gap drawn from ``seed``."""
    rng = random.Random(seed)
    order = ORDERS[seed % len(ORDERS)]  # every order comes up, each with gaps of its own
    commands = readme_bot_commands()
    names = [f"{game[:4]}{seed}a", f"{game[:4]}{seed}b"]
    argv = [fast(command, game, name, seed, url) for command, name in zip(commands, names, strict=True)]
    if order == "second bot first":
        argv.reverse()
    procs = [plyhall(*argv[0])]
    if order != "together":
        time.sleep(rng.uniform(0.0, 0.6))
    procs.append(plyhall(*argv[1]))
    outputs = []
    for proc in procs:
        try:
            out, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            out, err = stop(proc)
            outputs.append((-1, out, err))
            continue
        outputs.append((proc.returncode, out, err))
    return order, outputs


def test_readme_bots_finish_all_their_games_in_any_order_and_timing(live):
    """24 bot processes: each start order twice a game, each time with a seeded gap of its own (48 bots drawing
    their orders at random took twice the time and proved no more)."""
    url = f"ws://127.0.0.1:{live}/ws"
    orders = []
    # two games side by side (connect4 and quarto seekers never meet each other): twice the runs in the time
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        for seed in range(RUNS_PER_GAME):
            runs = [pool.submit(run_pair, url, game, seed) for game in ("connect4", "quarto")]
            for order, outputs in (run.result() for run in runs):
                orders.append(order)
                for code, out, err in outputs:
                    assert code == 0, f"{order}: a bot did not finish (exit {code}):\n{out}\n{err}"
                    # a room a game, so each is game 1 of its room, and the bot's own count goes on
                    ended = re.findall(r"^game 1 in .*: (?:won|drew|lost) against .*'s game (\d+) of (\d+), score ",
                                       out, re.M)
                    assert ended == [(str(n), str(GAMES)) for n in range(1, GAMES + 1)], out
                    assert f"/{GAMES} points" in out, out
                    assert "Traceback" not in err
    assert set(ORDERS) <= set(orders)
    status, body = http_json(live, "/api/games?limit=500")
    assert status == 200 and len(body["games"]) == 2 * RUNS_PER_GAME * GAMES
    status, rooms = http_json(live, "/api/rooms")
    assert rooms["rooms"] == [], "rooms left empty are removed"


def test_a_bot_that_waits_says_so_once(live):
    url = f"ws://127.0.0.1:{live}/ws"
    proc = plyhall("bot", "--game", "santorini", "--name", "lonely", "--url", url, "--games", "1")
    try:
        said = read_until(proc, "lonely: waiting for an opponent")
        time.sleep(2.0)  # the bot goes on waiting (and re-seeking) a while: still said once
    finally:
        out, err = stop(proc)
    out = said + out
    assert out.count("lonely: waiting for an opponent for santorini in the lobby") == 1, out
    assert "Traceback" not in err


def test_a_waiting_bot_says_how_many_games_it_will_play(live):
    """Asked for 3 games (one a room), the bot's waiting line says 3 games, not the room's series of 1; asked for 4
    in series of 2, it says both; asked to play on, it says so."""
    url = f"ws://127.0.0.1:{live}/ws"
    for extra, plan in ((["--games", "3"], "3 games"), (["--games", "4", "--series", "2"], "4 games, in series of 2"),
                        (["--series", "2"], "series of 2 games, one after another"), ([], "game after game")):
        proc = plyhall("bot", "--game", "quarto", "--name", "counted", "--url", url, "--per-move", "7", *extra)
        try:
            said = read_until(proc, "counted: waiting for an opponent")
        finally:
            out, err = stop(proc)
        assert f"counted: waiting for an opponent for quarto in the lobby (7 s a move, {plan})\n" in said, said
        assert "Traceback" not in err
    # in a room of its own, too
    proc = plyhall("bot", "--game", "quarto", "--name", "counted", "--url", url, "--room", "Counted Room", "--games",
                   "3")
    try:
        said = read_until(proc, "counted: waiting in Counted Room")
    finally:
        stop(proc)
    assert "counted: waiting in Counted Room for a second player (3 games)\n" in said, said
    # waiting again after a game, it counts what is left
    assert describe_plan(1, 3, played=1) == "2 more games"
    assert describe_plan(2, 4, played=3) == "1 more game, in series of 2"
    # on the ladder (one game a room) too, the bot says what it will play, not the ladder's series
    seeking = {"seek": {"game": "quarto", "ladder": True, "games": 1, "time_control": {"per_move": 5}},
               "ladder": {"rating": 1500, "deviation": 350, "provisional": True, "waiting": 2, "playing": 4}}
    assert describe_seeking(seeking, describe_plan(1, 3)) == (
        "on the ladder of quarto (5 s a move, 3 games), rating 1500 ± 350?: waiting for an opponent (2 waiting, "
        "4 playing)")


def test_ctrl_c_stops_a_bot_cleanly(live):
    url = f"ws://127.0.0.1:{live}/ws"
    proc = plyhall("bot", "--game", "amazons", "--level", "novice", "--name", "interrupted", "--url", url)
    said = read_until(proc, "interrupted: waiting for an opponent")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    out = said + out
    assert proc.returncode == 130 and "stopped" in out
    assert "Traceback" not in err and "leaked" not in err and "KeyboardInterrupt" not in err, err


def test_the_same_name_and_secret_twice_says_who_logged_in_elsewhere(live):
    url = f"ws://127.0.0.1:{live}/ws"
    args = ["bot", "--game", "magnetic-cave", "--name", "twin", "--secret", "twin-pw", "--url", url]
    first = plyhall(*args)
    read_until(first, "twin: waiting for an opponent")  # logged in: the second one comes from elsewhere
    second = plyhall(*args)
    try:
        out, err = first.communicate(timeout=60)
    finally:
        stop(second)
    assert first.returncode == 1
    assert "twin logged in from another connection" in err and "this one stops" in err, err


@pytest.mark.parametrize(("url", "words"), [
    ("http://127.0.0.1:{port}/ws", ["is a web address", "use ws://127.0.0.1:{port}/ws"]),
    ("http://127.0.0.1:{port}/", ["is a web address", "use ws://127.0.0.1:{port}/ws "]),
    ("127.0.0.1:{port}/ws", ["has no ws:// scheme", "use ws://127.0.0.1:{port}/ws"]),
    ("ws://127.0.0.1:{port}", ["add /ws", "ws://127.0.0.1:{port}/ws"]),
    ("ws://127.0.0.1:{port}/wss", ["its endpoint is /ws (ws://127.0.0.1:{port}/ws)"]),  # (it said add: .../wss/ws)
    ("wss://127.0.0.1:{port}/ws", ["TLS", "ws://127.0.0.1:{port}/ws"]),
])
def test_wrong_urls_get_one_clear_line(live, url, words):
    url = url.format(port=live)
    proc = plyhall("bot", "--game", "connect4", "--name", "lost", "--url", url)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode in (1, 2), (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for word in words:
        assert word.format(port=live) in lines[0], lines[0]


def test_no_server_says_so_and_keeps_trying_within_the_backoff_bound():
    port = free_port()
    url = f"ws://127.0.0.1:{port}/ws"
    proc = plyhall("bot", "--game", "connect4", "--name", "early", "--url", url)
    lines = []
    try:
        while len(lines) < 4:
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            lines.append(line.strip())
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert lines[0].endswith("trying again in a moment"), lines[0]  # said at once, before any warm-up
    for line in lines:
        assert line.startswith(f"early: no server at {url} (connection refused)"), line
        assert "connection lost" not in line
    for line in lines[1:]:
        delay = float(re.search(r"trying again in ([0-9.]+) s", line).group(1))
        assert 0 < delay <= 10.0  # the documented bound (BOTS.md)
    assert proc.returncode == 130 and "Traceback" not in err, err


def test_help_lists_every_level_and_http_refuses_unknown_games(live):
    for command in ("match", "play", "bot"):
        out = subprocess.run([*plyhall_argv(), command, "--help"], capture_output=True, text=True, timeout=60)
        assert "master" in out.stdout and "minimax-N" in out.stdout, command
    status, body = http_json(live, "/api/games?game=chess")
    assert status == 400 and "chess" in body["error"] and "connect4" in body["error"]


def plyhall_argv() -> list[str]:
    return [sys.executable, "-m", "plyhall"]


@pytest.mark.parametrize("command", [["analyse", "--id", "g1"], ["export"], ["ratings", "--game", "connect4"]])
def test_every_command_that_reads_the_database_honours_plyhall_db(tmp_path, command):
    """$PLYHALL_DB names the database for every command that reads one, as for `serve`."""
    db = tmp_path / "elsewhere.db"
    proc = plyhall(*command, cwd=tmp_path, env={**os.environ, "PLYHALL_DB": str(db)})
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, (out, err)
    assert str(db) in err and "plyhall.db" not in err.replace(str(db), ""), err


def test_a_url_written_with_a_slash_after_ws_reaches_the_endpoint(live):
    """``ws://HOST:PORT/ws/`` (as a URL is often written) got a bare "HTTP 404", from plyhall bot and the COSC 322
    library alike: the server takes ``/ws/`` for its endpoint too."""
    proc = plyhall("bot", "--game", "connect4", "--name", "slash", "--url", f"ws://127.0.0.1:{live}/ws/")
    try:
        read_until(proc, "waiting for an opponent")
    finally:
        stop(proc)


@pytest.mark.parametrize(("flags", "said"), [
    (["--engine", "x", "--engine-start-timeout", "nan"], "--engine-start-timeout must be a positive number"),
    (["--engine", "x", "--engine-start-timeout", "inf"], "--engine-start-timeout must be a positive number"),
    (["--tournament", "cup", "--room", "R"], "--tournament cannot go with --room"),
    (["--retries", "-1"], "--retries must be 0 to 100000 reconnection attempts"),
    (["--series", "0"], "--series must be 1 to 1000"),
    (["--games", "0"], "--games must be at least 1"),
])
def test_plyhall_bot_refuses_flags_it_would_quietly_get_wrong(flags: list[str], said: str):
    """``--engine-start-timeout nan`` was taken, and an engine that never said ready then hung the bot for ever;
    ``--tournament T --room R`` dropped --room without a word."""
    import argparse

    from client.runner import bot
    from plyhall.commands import bot as bot_command

    parser = argparse.ArgumentParser()
    bot_command.register(parser.add_subparsers())
    args = parser.parse_args(["bot", "--game", "connect4", "--name", "x", *flags])
    assert (bot._usage_problem(args) or "").startswith(said)


def test_a_tournament_entrant_waits_about_ten_minutes_for_its_server():
    """A bot gave up after 8 attempts in a row, about 35 s of a server that was not there: a tournament restarted
    after 40 s forfeited every game left of its entrants. An entrant tries 60 times (waits of up to 10 s: about ten
    minutes), and ``plyhall bot --retries N`` sets it."""
    import argparse

    from client.play_loop import PlayerRunner, RunOptions
    from plyhall.commands import bot as bot_command

    def retries(**options: object) -> int:
        return PlayerRunner(lambda: None, RunOptions(name="x", game="connect4", **options))._retries()

    assert (retries(), retries(tournament="Cup"), retries(tournament="Cup", max_retries=3)) == (8, 60, 3)
    parser = argparse.ArgumentParser()
    bot_command.register(parser.add_subparsers())
    assert parser.parse_args(["bot", "--name", "x", "--retries", "120"]).retries == 120
