"""Shared helpers of the server tests: a hall driven without a network, scripted clients, waiting for a
condition, HTTP, and real `plyhall` processes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from client.sdk import Client
from protocol.codec import CODECS
from protocol.games import get_game
from protocol.messages import ERROR_CODES, SERVER_MESSAGES, ProtocolError, validate
from server.core.env import Env
from server.core.hall import Hall, HallOutbox
from server.storage.records import GameRecord, MoveRecord, Write

Who = int | str
"""A client of a :class:`HallDriver`: any label (a number, or the name it logs in with); each has a
connection of its own."""


class HallDriver:
    """A :class:`server.core.hall.Hall` driven by hand, as the WebSocket layer drives it but without a network.

    A request passes ``validate()`` first, as on the wire: an invalid one is answered with its
    ProtocolError and never reaches the hall. Secret checks run at once. Every message the hall sends
    must fit ``SERVER_MESSAGES`` and survive both codecs; it is kept in ``inbox`` (by client), and every
    durable write in ``writes``. ``step``: seconds the clock moves on with each request and disconnect;
    ``only_valid``: every request must pass validation (a test of the hall's answers, not of validation).
    """

    def __init__(self, hall: Hall | None = None, *, step: float = 0.0, only_valid: bool = False,
                 **hall_options: Any) -> None:
        self.hall = hall or Hall(Env.fixed(), **hall_options)
        self.now = 0.0
        self.step = step
        self.only_valid = only_valid
        self.conns: dict[Who, int] = {}
        self.inbox: dict[Who, list[dict[str, Any]]] = defaultdict(list)
        self.writes: list[Write] = []
        self.seen: dict[str, set[str]] = defaultdict(set)  # message type -> fields seen
        self.errors: list[str] = []  # codes of every error sent
        self.closed: list[tuple[Who, str]] = []  # connections the hall closed, with the reason

    def conn(self, who: Who) -> int:
        """The connection of ``who`` (a new one on first use)."""
        return self.conns.setdefault(who, len(self.conns) + 1)

    def connect(self, who: Who, address: str) -> int:
        """Open the connection of ``who`` from ``address`` (a client fed without it comes from ``?``)."""
        conn = self.conn(who)
        self.hall.connect(conn, address)
        return conn

    def take(self, out: HallOutbox) -> list[tuple[Who, dict[str, Any]]]:
        """Finish ``out``'s secret checks, check and keep every message; the messages by recipient. As the server
        does once ``out``'s writes are committed, what that leads to (:meth:`Hall.committed`) follows."""
        out = self.hall.run_checks(out, self.now)
        out.extend(self.hall.committed(out, self.now))
        self.writes.extend(out.writes)
        clients = {conn: who for who, conn in self.conns.items()}
        self.closed.extend((clients.get(conn, conn), reason) for conn, reason in out.close)
        taken = []
        for conn, msg in out.messages:
            checked = validate(msg, SERVER_MESSAGES)
            assert not isinstance(checked, ProtocolError), f"server sent {msg!r}: {checked.message}"
            self.seen[msg["type"]].update(msg)
            if msg["type"] == "error":
                assert msg["code"] in ERROR_CODES, msg
                self.errors.append(msg["code"])
            for codec in CODECS.values():  # every message survives both codecs unchanged
                assert codec.decode(codec.encode(msg)) == msg
            who = clients.get(conn, conn)
            self.inbox[who].append(msg)
            taken.append((who, msg))
        return taken

    def send(self, who: Who, msg: dict[str, Any], dt: float | None = None) -> list[dict[str, Any]]:
        """Hand a client message to the hall (after validation, as the WebSocket layer does).

        Returns what ``who`` received, less the lobby pushes a lobby watcher gets on the side."""
        self.now += self.step if dt is None else dt
        checked = validate(msg)
        if isinstance(checked, ProtocolError):
            assert not self.only_valid, f"{msg!r} is no valid request: {checked.message}"
            out = HallOutbox(messages=[(self.conn(who), checked.to_message())])
        else:
            out = self.hall.handle(self.conn(who), checked, self.now)
        lobby = msg["type"] in ("list_rooms", "watch_lobby")
        return [m for to, m in self.take(out) if to == who and (lobby or m["type"] != "rooms")]

    def login(self, name: str, **extra: Any) -> dict[str, Any]:
        """Log ``name`` in on a connection of its own (``extra``: more login fields); the first reply."""
        return self.send(name, {"type": "login", "name": name, **extra})[0]

    def disconnect(self, who: Who) -> None:
        """The connection of ``who`` closes."""
        self.now += self.step
        self.take(self.hall.disconnect(self.conn(who), self.now))

    def tick(self, dt: float) -> None:
        """Time moves on ``dt`` seconds and acts on every room whose deadline has come."""
        self.now += dt
        self.take(self.hall.tick(self.now))

    def last(self, who: Who, kind: str) -> dict[str, Any]:
        """The latest message of ``kind`` that ``who`` received."""
        return [m for m in self.inbox[who] if m["type"] == kind][-1]


def assert_clear_error(reply: dict[str, Any], codes: str | set[str], request: Any = "") -> dict[str, Any]:
    """``reply`` (to ``request``) is an ``error`` with one of ``codes`` and a message for people; that error."""
    wanted = {codes} if isinstance(codes, str) else codes
    assert reply["type"] == "error", (str(request)[:80], reply)
    assert reply["code"] in wanted, (str(request)[:80], reply)
    assert reply["code"] in ERROR_CODES
    assert isinstance(reply["message"], str) and reply["message"].strip()
    assert len(reply["message"]) < 2000  # hostile input is never echoed back in full
    return reply


async def wait_until(condition: Callable[[], bool] | asyncio.Event, what: str, timeout: float = 30.0) -> None:
    """Wait until ``condition`` holds (an Event is set, or a function returns true); after ``timeout``
    seconds fail, saying ``what`` never happened. The timeout only catches a hang: it decides nothing."""
    if isinstance(condition, asyncio.Event):
        try:
            await asyncio.wait_for(condition.wait(), timeout)
        except TimeoutError:
            raise AssertionError(f"waited {timeout:g} s in vain until {what}") from None
        return
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"waited {timeout:g} s in vain until {what}")
        await asyncio.sleep(0.01)


async def login(url: str, name: str, coords: str = "algebraic", secret: str | None = None,
                subprotocol: str | None = "plyhall.v1.msgpack", resume: str | None = None, source: str | None = None,
                **extra: Any) -> Client:
    """A connected client logged in as ``name`` (``extra``: more login fields, e.g. ``organiser``; ``source``: the
    loopback address its connection comes from, e.g. 127.0.0.2, as if from another machine)."""
    from tests.cluster_nodes import next_url

    client = Client(next_url(url), subprotocol)
    await client.connect(**({"local_addr": (source, 0)} if source else {}))
    await client.login(name, secret, coords, resume, **extra)
    return client


async def play_out(clients: list[Client], room: str, rng: random.Random, script: list[str] | None = None
                   ) -> dict[str, Any]:
    """Both seated clients play random legal moves (each in its own coordinates) until game_over; with ``script``,
    those moves (notation) in order, and random ones after them.

    Returns the game_over message as seat 0's client saw it.
    """
    script = list(script or [])
    starts = [await c.expect("game_start", room=room) for c in clients]
    by_seat = {s["seat"]: (c, s) for c, s in zip(clients, starts, strict=True)}
    game = get_game(starts[0]["game"])
    states = {seat: game.decode_state(start["state"], by_seat[seat][0].coords) for seat, (_, start) in by_seat.items()}
    to_move = starts[0]["to_move"]
    while True:
        client, _ = by_seat[to_move]
        move = game.parse_move(script.pop(0), states[to_move]) if script else rng.choice(
            game.legal_moves(states[to_move]))
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
    return subprocess.Popen([sys.executable, "-m", "plyhall", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **popen)


def read_until(proc: subprocess.Popen, text: str | list[str], timeout: float = 60) -> str:
    """Read ``proc``'s output line by line until a line says ``text`` (a list: until every one of them has been
    said, in any order); the lines read so far.

    A process that never says it is killed after ``timeout`` seconds, and the test fails; the
    timeout only catches a hang."""
    watchdog = threading.Timer(timeout, proc.kill)
    watchdog.start()
    lines: list[str] = []
    try:
        while line := proc.stdout.readline():
            lines.append(line)
            if text in line if isinstance(text, str) else all(each in "".join(lines) for each in text):
                return "".join(lines)
    finally:
        watchdog.cancel()
    raise AssertionError(f"the process ended before it said {text!r}:\n{''.join(lines)}{proc.stderr.read()}")


def poll_until(condition: Callable[[], bool], timeout: float, every: float = 0.1) -> bool:
    """Call ``condition`` until it is true or ``timeout`` seconds have passed; its last answer. The timeout
    only bounds a wait for something another process or thread does: the caller's assertion decides."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(every)
    return True


def child_pids(pid: int) -> list[int]:
    """The processes whose parent is ``pid``, as Linux's /proc lists them."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return found


def start_server(db: Path, port: int, *extra: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    """A real ``plyhall serve`` process on 127.0.0.1:``port``, once its /healthz answers (``env``: its
    environment, for instance an empty numba cache). Its plain HTTP is not limited per address unless ``extra``
    says so (--http-rate N): tests poll it faster than any reader should."""
    proc = plyhall("serve", "--port", str(port), "--db", str(db), "--quiet", "--http-rate", "0", *extra, env=env)
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


@contextlib.contextmanager
def running_server(folder: Path, *extra: str) -> Iterator[int]:
    """A real ``plyhall serve`` on a free port with its database in ``folder``, for a ``with`` block (a test
    module's fixture): yields the port, and stops the server after the block."""
    from tests.conftest import free_port

    port = free_port()
    proc = start_server(folder / "plyhall.db", port, *extra)
    try:
        yield port
    finally:
        stop(proc)


def stop(proc: subprocess.Popen, timeout: float = 30) -> tuple[str, str]:
    """End a process started by these helpers (SIGTERM, then SIGKILL) and return its output."""
    if proc.poll() is None:
        proc.terminate()
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate(timeout=timeout)


def game_record(game_id: str, status: str = "finished", moves: int = 3, tournament: str | None = None,
                started: float = 100.0) -> GameRecord:
    """A Connect Four record between ann and bob for storage tests: ``moves`` moves, won by ann when finished."""
    return GameRecord(game_id, "Lake", "connect4", {"first": 0}, {"per_move": 30.0}, ["ann", "bob"],
                      [MoveRecord(i + 1, i % 2, str(i % 7 + 1), 10 * i, [29.5, 30.0]) for i in range(moves)],
                      0 if status == "finished" else None, "four in a row" if status == "finished" else "",
                      status, started, None if status == "running" else started + 60, tournament,
                      1 if tournament else None)


def play_moves(desk: HallDriver, room_name: str, plies: int = 4) -> None:
    """Play ``plies`` moves in the running game of ``room_name`` (each player's first legal move in turn): enough,
    by default, for a Connect Four game to count as played (a rated game needs two moves by each player)."""
    room = desk.hall.rooms[room_name]
    for _ in range(plies):
        seat = room.game.to_move(room.state)
        move = room.game.format_move(room.game.legal_moves(room.state)[0])
        desk.send(room.players[seat], {"type": "move", "room": room_name, "move": move})


LOOPBACK_RATED = ("--rated-networks", "127.0.0.1")
"""``plyhall serve`` options for tests whose players all connect from 127.0.0.1 but stand for different people
(names that play from one address do not rate each other unless the operator says the address holds many)."""


async def open_game(seated: dict[int, Client], room: str, to_move: int, plies: int = 4) -> int:
    """Play ``plies`` moves of a Connect Four game in ``room`` (columns 1, 2, 3, ... in turn; ``seated``: the client
    of each seat): by default the two moves each a game needs to be rated. The seat to move after them."""
    for ply in range(plies):
        await seated[to_move].send({"type": "move", "room": room, "move": str(ply % 7 + 1)})
        for client in seated.values():
            await client.expect("moved", room=room, timeout=30)
        to_move = 1 - to_move
    return to_move
