"""`plyhall serve` as a user runs it: a real process, stopped with SIGTERM or SIGINT."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import subprocess
import sys

import pytest

from tests.conftest import free_port
from tests.helpers import login, start_server


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_signal_stops_cleanly_and_keeps_the_running_game(tmp_path, sig):
    db = tmp_path / "serve.db"
    port = free_port()
    proc = await asyncio.to_thread(start_server, db, port)
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
    assert "shutting down" in out and "running games are kept" in out and "0 games ended this run" in out
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT status, player0, player1 FROM games").fetchall()
        moves = conn.execute("SELECT move FROM moves").fetchall()
    assert rows == [("running", "ann", "bob")] and moves == [("b2 d4",)]


def test_serve_refuses_bad_options_and_busy_ports(tmp_path):
    out = subprocess.run([sys.executable, "-m", "client.cli", "serve", "--port", "70000"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "--port must be 0 to 65535" in out.stderr
    out = subprocess.run([sys.executable, "-m", "client.cli", "serve", "--db", str(tmp_path / "no" / "x.db")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "does not exist" in out.stderr
    port = free_port()
    first = start_server(tmp_path / "a.db", port)
    try:
        out = subprocess.run([sys.executable, "-m", "client.cli", "serve", "--port", str(port),
                              "--db", str(tmp_path / "b.db")], capture_output=True, text=True, timeout=60)
        assert out.returncode == 1 and f"cannot listen on 127.0.0.1:{port}" in out.stderr
    finally:
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=30)


def test_export_reports_missing_database_and_game(tmp_path):
    out = subprocess.run([sys.executable, "-m", "client.cli", "export", "--db", str(tmp_path / "none.db")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "no database file" in out.stderr
    db = tmp_path / "empty.db"
    sqlite3.connect(db).close()
    out = subprocess.run([sys.executable, "-m", "client.cli", "export", "--db", str(db), "--id", "abc"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "no game with id abc" in out.stderr
    out = subprocess.run([sys.executable, "-m", "client.cli", "export", "--db", str(db), "--game", "chess"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "connect4" in out.stderr  # --game is a game type, as everywhere else
