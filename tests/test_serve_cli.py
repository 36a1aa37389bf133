"""`plyhall serve` as a user runs it: a real process, stopped with SIGTERM or SIGINT."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.conftest import free_port
from tests.helpers import game_record, http_json, login, plyhall, start_server, stop


@pytest.mark.parametrize(("sig", "loop"), [(signal.SIGTERM, "uvloop"), (signal.SIGINT, "asyncio")])
async def test_signal_stops_cleanly_and_keeps_the_running_game(tmp_path, sig, loop):
    """On either event loop: the game is played, the signal stops the server, the running game is kept."""
    db = tmp_path / "serve.db"
    port = free_port()
    proc = await asyncio.to_thread(start_server, db, port, "--event-loop", loop)
    try:
        url = f"ws://127.0.0.1:{port}/ws"
        a = await login(url, "ann")
        b = await login(url, "bob")
        await a.request({"type": "create_room", "game": "santorini", "name": "Mabel Lake"})
        await a.request({"type": "join", "room": "Mabel Lake"})
        await b.request({"type": "join", "room": "Mabel Lake"})
        await a.request({"type": "move", "room": "Mabel Lake", "move": "b2 d4"})
        proc.send_signal(sig)
        notice = await a.expect("error", timeout=20)
        assert notice["code"] == "server_shutdown" and "continue" in notice["message"]
        await asyncio.wait_for(a.closed.wait(), 20)
        assert a.ws.close_code == 1001
        out, err = await asyncio.to_thread(proc.communicate, timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert f"event loop {loop}; Ctrl-C stops" in out
    assert "shutting down" in out and "running games are kept" in out and "0 games ended this run" in out
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT status, player0, player1 FROM games").fetchall()
        moves = conn.execute("SELECT move FROM moves").fetchall()
    assert rows == [("running", "ann", "bob")] and moves == [("b2 d4",)]


def test_serve_refuses_bad_options_and_busy_ports(tmp_path):
    out = subprocess.run([sys.executable, "-m", "plyhall", "serve", "--port", "70000"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "--port must be 0 to 65535" in out.stderr
    out = subprocess.run([sys.executable, "-m", "plyhall", "serve", "--db", str(tmp_path / "no" / "x.db")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "does not exist" in out.stderr
    port = free_port()
    first = start_server(tmp_path / "a.db", port)
    try:
        out = subprocess.run([sys.executable, "-m", "plyhall", "serve", "--port", str(port),
                              "--db", str(tmp_path / "b.db")], capture_output=True, text=True, timeout=60)
        assert out.returncode == 1 and f"cannot listen on 127.0.0.1:{port}" in out.stderr
    finally:
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=30)


def test_export_reports_missing_database_and_game(tmp_path):
    out = subprocess.run([sys.executable, "-m", "plyhall", "export", "--db", str(tmp_path / "none.db")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "no database file" in out.stderr
    from server.storage import open_storage

    db = tmp_path / "empty.db"
    open_storage(str(db)).close()  # a database with no games
    out = subprocess.run([sys.executable, "-m", "plyhall", "export", "--db", str(db), "--id", "abc"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "no game with id abc" in out.stderr
    out = subprocess.run([sys.executable, "-m", "plyhall", "export", "--db", str(db), "--game", "chess"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "connect4" in out.stderr  # --game is a game type, as everywhere else


def test_export_into_a_closed_pipe_stops_quietly(tmp_path):
    """``plyhall export | head -1`` on a database of several games: head exits, and export stops without a
    traceback."""
    from server.storage import open_storage
    from server.storage.records import GameEnded

    db = tmp_path / "many.db"
    storage = open_storage(str(db))
    storage.apply([GameEnded(game_record(f"g{i}", started=100.0 + i)) for i in range(3)])
    storage.close()
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line: every write fails with EPIPE
    try:
        out = subprocess.run([sys.executable, "-m", "plyhall", "export", "--db", str(db)],
                             stdout=write, stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(write)
    assert out.returncode == 141, out.stderr
    assert "Traceback" not in out.stderr and "Error" not in out.stderr


def test_a_series_survives_kill_9_in_its_second_game(tmp_path):
    """The real server, SIGKILLed in the middle of game 2 of a 3-game series between two plyhall bot processes,
    started again on the same database: the series finishes with exactly three recorded games, and game 2
    holds every move, before and after the crash, once."""
    db, port = tmp_path / "series.db", free_port()
    url = f"ws://127.0.0.1:{port}/ws"
    server = start_server(db, port)
    bots = [plyhall("bot", "--game", "connect4", "--level", "minimax-3", "--name", name, "--secret", f"{name}-pw",
                    "--room", "Series", "--series", "3", "--games", "3", "--url", url) for name in ("ann", "bob")]
    try:
        def game_2_under_way() -> bool:  # a few moves in
            rooms = http_json(port, "/api/rooms")[1]["rooms"]
            if rooms and rooms[0]["game_no"] == 2 and rooms[0]["status"] == "playing":
                running = http_json(port, "/api/games?status=running")[1]["games"]
                return bool(running) and running[0]["move_count"] >= 4
            return False

        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if game_2_under_way():
                for bot in bots:  # held still, so that game 2 cannot end before the kill, however slow this is
                    bot.send_signal(signal.SIGSTOP)
                time.sleep(0.2)  # a move on its way meanwhile lands
                if game_2_under_way():
                    break
                for bot in bots:
                    bot.send_signal(signal.SIGCONT)
            time.sleep(0.01)
        else:
            raise AssertionError("game 2 never got going")
        server.send_signal(signal.SIGKILL)
        for bot in bots:
            bot.send_signal(signal.SIGCONT)
        server.communicate(timeout=30)
        with sqlite3.connect(db) as conn:
            game2 = conn.execute("SELECT id FROM games WHERE status = 'running'").fetchone()[0]
            before = conn.execute("SELECT seq, move FROM moves WHERE game_id = ? ORDER BY seq", (game2,)).fetchall()
        server = start_server(db, port)
        outputs = [bot.communicate(timeout=180) for bot in bots]
    finally:
        for bot in bots:
            stop(bot)
        stop(server)
    for bot, (out, err) in zip(bots, outputs, strict=True):
        assert bot.returncode == 0 and "game 3 in Series" in out, out + err
    with sqlite3.connect(db) as conn:
        games = conn.execute("SELECT id, status, move_count FROM games ORDER BY started_at").fetchall()
        after = conn.execute("SELECT seq, move FROM moves WHERE game_id = ? ORDER BY seq", (game2,)).fetchall()
    assert [status for _, status, _ in games] == ["finished"] * 3 and games[1][0] == game2
    assert after[:len(before)] == before and len(after) > len(before)  # the moves before the crash, then more
    assert [seq for seq, _ in after] == list(range(1, len(after) + 1)) == list(range(1, games[1][2] + 1))


def test_event_loop_option_runs_each_loop_and_explains_a_missing_one(monkeypatch):
    """--event-loop picks the loop the server runs on; uvloop (a dependency here) is the default, and a
    machine without it gets told what to do instead of a traceback."""
    import argparse
    import importlib.util

    from plyhall.commands.serve import register, serve_option_errors
    from server.io import event_loop

    async def loop_class() -> str:
        return type(asyncio.get_running_loop()).__module__

    assert event_loop.default_event_loop() == "uvloop"
    assert event_loop.run(loop_class(), "uvloop").startswith("uvloop")
    assert event_loop.run(loop_class(), "asyncio").startswith("asyncio")
    with pytest.raises(ValueError, match="use one of uvloop, asyncio"):
        event_loop.run(loop_class(), "trio")

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["serve", "--event-loop", "uvloop"])
    assert serve_option_errors(args) == []
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "uvloop" else real_find_spec(name, *a))
    assert event_loop.default_event_loop() == "asyncio"
    assert serve_option_errors(args) == ["--event-loop uvloop: it is not installed here (pip install uvloop), "
                                         "or use --event-loop asyncio"]


def test_the_server_runs_without_the_optional_packages(tmp_path) -> None:
    """The README's first command installs Plyhall without extras: no redis (``cluster``), no psycopg
    (``postgres``). The server on its SQLite default must start and serve all the same."""
    blocked = tmp_path / "blocked"
    for name in ("redis", "psycopg"):
        (blocked / name).mkdir(parents=True)
        (blocked / name / "__init__.py").write_text(f"raise ModuleNotFoundError(\"No module named '{name}'\")\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocked), os.environ.get("PYTHONPATH", "")])}
    port = free_port()
    proc = start_server(tmp_path / "plyhall.db", port, env=env)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as response:
            assert response.status == 200 and b"Plyhall" in response.read()
        status, games = http_json(port, "/api/games")
        assert status == 200 and isinstance(games, (list, dict))
    finally:
        stop(proc)
