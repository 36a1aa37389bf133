"""Shared helpers of the server tests: scripted clients, HTTP, and real `plyhall` processes."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from client.sdk import Client
from protocol.games import get_game


async def login(url: str, name: str, coords: str = "algebraic", secret: str | None = None,
                subprotocol: str | None = "plyhall.v1.msgpack", resume: str | None = None, **extra: Any) -> Client:
    """A connected client logged in as ``name`` (``extra``: more login fields, e.g. ``organiser``)."""
    client = Client(url, subprotocol)
    await client.connect()
    await client.login(name, secret, coords, resume, **extra)
    return client


async def play_out(clients: list[Client], room: str, rng: random.Random) -> dict[str, Any]:
    """Both seated clients play random legal moves (each in its own coordinates) until game_over.

    Returns the game_over message as seat 0's client saw it.
    """
    starts = [await c.expect("game_start", room=room) for c in clients]
    by_seat = {s["seat"]: (c, s) for c, s in zip(clients, starts, strict=True)}
    game = get_game(starts[0]["game"])
    states = {seat: game.decode_state(start["state"], by_seat[seat][0].coords) for seat, (_, start) in by_seat.items()}
    to_move = starts[0]["to_move"]
    while True:
        client, _ = by_seat[to_move]
        move = rng.choice(game.legal_moves(states[to_move]))
        await client.send({"type": "move", "room": room, "move": game.format_move(move, client.coords)})
        over = None
        for seat, (c, _) in by_seat.items():
            msg = await c.expect("moved", room=room)
            mine = game.parse_move(msg["move"], states[seat], c.coords)
            assert mine == move, "every player sees the same move, in its own coordinates"
            states[seat] = game.apply(states[seat], mine)
            if msg["to_move"] is None:
                over = await c.expect("game_over", room=room)
                if seat == 0:
                    result = over
        assert states[0] == states[1]
        if over is not None:
            return result
        to_move = msg["to_move"]


def http_json(port: int | Any, path: str, method: str = "GET") -> tuple[int, Any]:
    """Status and JSON body of an HTTP request to 127.0.0.1 (``port`` or a server with ``.port``)."""
    port = getattr(port, "port", port)
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            body = resp.read()
            return resp.status, json.loads(body) if body else None
    except urllib.error.HTTPError as exc:
        body = exc.read()
        try:
            return exc.code, json.loads(body) if body else None
        except ValueError:
            return exc.code, body.decode()


def plyhall(*args: str, **popen: Any) -> subprocess.Popen:
    """``plyhall ARGS`` as a process of its own (output captured as text)."""
    return subprocess.Popen([sys.executable, "-m", "client.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **popen)


def start_server(db: Path, port: int, *extra: str) -> subprocess.Popen:
    """A real ``plyhall serve`` process on 127.0.0.1:``port``, once its /healthz answers."""
    proc = plyhall("serve", "--port", str(port), "--db", str(db), "--quiet", *extra)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited: {proc.stderr.read()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as resp:
                if json.loads(resp.read())["ok"]:
                    return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise AssertionError("server did not come up")


def stop(proc: subprocess.Popen, timeout: float = 30) -> tuple[str, str]:
    """End a process started by these helpers (SIGTERM, then SIGKILL) and return its output."""
    if proc.poll() is None:
        proc.terminate()
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate(timeout=timeout)
