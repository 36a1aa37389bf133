"""Server load: saturation throughput against a bare relay, and latency and memory at scale.

    .venv/bin/python benchmarks/server_load.py                      # both phases, defaults
    .venv/bin/python benchmarks/server_load.py --rooms 20 --seconds 3 --games 100 --scale-seconds 10

Every party runs in a process of its own on loopback: the Plyhall server (a
``PlyhallServer`` on a temporary SQLite file, on the event loop ``plyhall serve``
picks: uvloop where installed; ``--event-loop asyncio --event-loop uvloop``
compares the two), the bare websockets relay used as the ceiling (on asyncio,
websockets' own loop, unless ``--relay-loop``), and the load generators (raw
websockets + msgpack, on uvloop where installed; they track each game with the
reference rules in ``protocol.games``).

* Saturation: ``--rooms`` Connect Four rooms (a long series each, ``per_move``
  of a day) whose two players answer every move at once with a random legal
  move, for ``--seconds``. Prints moves a second and server CPU seconds a move;
  then the same number of client pairs ping-pong a message of a similar size
  through a relay server that forwards each frame to the partner connection,
  and the ratio of the two throughputs.
* Scale: ``--games`` concurrent games (two players and ``--spectators`` per
  game) whose bots think about a second before every move. Prints the move
  relay latency (the mover sends, the opponent receives ``moved``; sender and
  receiver live in one process, so one monotonic clock times both) p50/p99
  over ``--scale-seconds``, and the server's memory (RSS from /proc).

* ``--scale-relay`` then runs the bare relay under the scale phase's load: as
  many groups as games, each of two players and the spectators, the players
  thinking alike, every message written to every member of its group (the
  writes of a move: the mover's copy, the opponent's, each spectator's). Its
  CPU a message at that load is the scale phase's yardstick, as the relay's
  at saturation is that phase's::

    .venv/bin/python benchmarks/server_load.py --only scale --games 5000 --pin --scale-relay

* Two trees, alternately: ``--baseline-tree DIR --runs N`` runs the saturation
  phase ``N`` times with DIR's own ``benchmarks/server_load.py`` (a checkout of
  the tree before a change, e.g. ``git worktree add /tmp/before COMMIT``) and
  ``N`` times with this one's, alternating (before, after, before, ...), each in
  a process of its own with the same options, and prints every run's Plyhall
  CPU a move over the relay's CPU a message, its throughput ratio, and the range
  and median of each tree::

    .venv/bin/python benchmarks/server_load.py --only saturation --baseline-tree /tmp/before --runs 5

  With ``--only scale`` the same alternation runs the scale phase, and prints
  every run's share of a core, CPU a move and p99, and each tree's median and
  range and how many of its runs stayed under the goal's 60% of a core; the
  runs of one tree can move by a fifth within the hour, so a change is judged by
  pairs and medians, not by one run. ``--runs N`` with ``--only scale`` and no
  baseline runs this tree alone ``N`` times in a row::

    .venv/bin/python benchmarks/server_load.py --only scale --games 5000 --pin --baseline-tree /tmp/before --runs 4

* ``--pin`` puts the server (Plyhall's, then the relay) on one CPU and the load
  processes on the others, in both parts of the saturation phase. Left to the
  scheduler, the relay's cost a message swings by two or more between runs on a
  machine of two virtual CPUs (docs/SCALING.md, "the fourth round, measured on a
  quiet machine"), and the ratio with it. In the scale phase, the same for its
  measured window (the set-up runs unpinned): the server's CPU then counts no
  time shared with its own load on one CPU.

* ``--sections`` times the server's hot sections inside it (``sections.py``: frames in, the hall, the commit,
  SQLite's parts, delivery, the pushes) and prints each one's share of its CPU and its microseconds a move:
  where a move's CPU goes, without a sampling profiler slowing the server.

Progress goes to stderr, the table to stdout. A benchmark prints figures; it
passes or fails nothing. Figures depend on the machine and on whatever else
runs on it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import multiprocessing as mp
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import msgpack
from common import ROOT, cpu_seconds, heading, log, percentiles, scratch, script_parser
from sections import print_sections

from plyhall import compiled

# Plyhall's server process runs the compiled core where `plyhall compile` built it ($PLYHALL_CORE), as `plyhall serve`
# would; this process, the relay and the load processes run the Python core whatever is built, so that the yardstick
# and the load are the same in every tree (compiled load processes drive the relay harder, which lowers its CPU a
# message). A spawned process imports this module again: the variable below says which one it is.
SERVER_ROLE = "PLYHALL_BENCH_SERVER"
CORE = compiled.describe(compiled.build_dir())
compiled.use(None if os.environ.get(SERVER_ROLE) else "python")  # before the server's modules

from websockets.asyncio.client import ClientConnection, connect  # noqa: E402
from websockets.asyncio.server import ServerConnection, broadcast, serve  # noqa: E402
from websockets.exceptions import ConnectionClosed  # noqa: E402
from websockets.protocol import State  # noqa: E402

from protocol.codec import MAX_MESSAGE_BYTES, MSGPACK  # noqa: E402
from protocol.games import get_game  # noqa: E402
from server.io import event_loop  # noqa: E402
from server.io.frames import frame_header  # noqa: E402
from server.io.gc_policy import ServingGC  # noqa: E402
from server.io.keepalive import KeepaliveSweep  # noqa: E402
from server.io.transport import DirectConnection, DirectMessages  # noqa: E402

SETUP_CONCURRENCY = 50  # connections a load process opens at once
SETUP_REPORT = 250  # games a load process sets up between two progress lines
SATURATION_RATE = 100_000.0  # the saturation phase measures throughput, not the rate limiter
PAUSE_EDGES = (1, 2, 5, 10, 20, 50, 100)  # ms: the GC pause histogram's bucket edges
RELAY_IO = {"websockets": "websockets' own I/O", "plyhall": "Plyhall's I/O"}  # --relay-io, as the tables name it


def leave_interrupts_to_the_parent() -> None:
    """In a child process: Ctrl-C is for the parent, which stops the children (thousands of connections each
    printing a traceback otherwise)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def raise_open_files(wanted: int) -> int:
    """Raise the soft open-file limit towards ``wanted`` (up to the hard limit); the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    return soft


# /proc ------------------------------------------------------------------------------------------


def run_delay(pid: int) -> float:
    """Seconds the process's main thread (its event loop) has spent runnable but waiting for a CPU."""
    try:
        with open(f"/proc/{pid}/task/{pid}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):  # no schedstats in this kernel
        return float("nan")


def memory_kb(pid: int) -> dict[str, int]:
    """VmRSS (resident now) and VmHWM (peak resident) in kB."""
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0])
    return values


class LatenessProbe:
    """How late an event loop wakes up from a 10 ms sleep: a direct reading of how busy (or
    how starved of CPU by other processes) the loop is, to set the latencies against."""

    def __init__(self, watch_gc: bool = False) -> None:
        self.samples: list[tuple[float, float]] = []
        self.task: asyncio.Task | None = None
        self.gc_pauses: list[tuple[float, float, float, int]] = []  # (start, seconds, CPU seconds, generation)
        self._gc_started = (0.0, 0.0)
        if watch_gc:
            gc.callbacks.append(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = (time.monotonic(), time.thread_time())
        else:
            began, cpu = self._gc_started
            self.gc_pauses.append((began, time.monotonic() - began, time.thread_time() - cpu, info["generation"]))

    def start(self) -> LatenessProbe:
        self.task = asyncio.create_task(self._run())
        return self

    async def _run(self) -> None:
        while True:
            began = time.monotonic()
            await asyncio.sleep(0.01)
            self.samples.append((began, time.monotonic() - began - 0.01))

    def within(self, start: float, end: float) -> list[float]:
        return [late for t, late in self.samples if start <= t < end]

    def gc_within(self, start: float, end: float) -> dict[str, Any]:
        """Garbage-collector pauses in the window: count, total and longest (wall ms; CPU ms of the
        collector itself, which tells collection work from time the process waited for a CPU), the
        full collections, and a histogram of the pauses (wall ms, by PAUSE_EDGES)."""
        pauses = [(d, c, g) for t, d, c, g in self.gc_pauses if start <= t < end]
        histogram = [0] * (len(PAUSE_EDGES) + 1)
        for d, _, _ in pauses:
            histogram[sum(1000 * d >= edge for edge in PAUSE_EDGES)] += 1
        return {"count": len(pauses), "total_ms": 1000 * sum(d for d, _, _ in pauses), "histogram": histogram,
                "cpu_ms": 1000 * sum(c for _, c, _ in pauses),
                "max_ms": 1000 * max((d for d, _, _ in pauses), default=0.0),
                "max_cpu_ms": 1000 * max((c for _, c, _ in pauses), default=0.0),
                "full": len([1 for _, _, g in pauses if g == 2]),
                "full_max_ms": 1000 * max((d for d, _, g in pauses if g == 2), default=0.0)}

    def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()


def loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


# Server processes ---------------------------------------------------------------------------------


def tracked_objects() -> int:
    """Objects the garbage collector tracks, frozen ones included."""
    return len(gc.get_objects()) + gc.get_freeze_count()


def plyhall_server_main(db: str, rate: float | None, rooms: int, loop: str, clients: int, sections: bool, ready: Any,
                        stop: Any, control: Any, open_files: int) -> None:
    """Child process: a PlyhallServer on a free port, on the event loop ``loop``, until ``stop`` is set;
    it counts the objects the collector tracks once all ``clients`` connections are there, and times its hot
    sections (``sections.py``) when ``sections`` is set."""
    import logging

    from server.core.hall import Limits
    from server.io.server import PlyhallServer, RateLimit
    from server.storage import open_storage

    logging.basicConfig(level=logging.WARNING)
    if compiled.active() != CORE.startswith("compiled"):
        raise RuntimeError(f"the server process runs the {compiled.LAST}, where the tables say {CORE}")
    leave_interrupts_to_the_parent()
    raise_open_files(open_files)
    clock = None
    if sections:
        from sections import SectionClock

        clock = SectionClock()
        clock.install()

    async def main() -> None:
        limit = RateLimit() if rate is None else RateLimit(rate=rate, burst=2 * rate)
        # one address (127.0.0.1) plays every game here: the per-address quotas are off, as for a trusted proxy
        limits = Limits(max_rooms=max(rooms, Limits().max_rooms), max_connections_per_address=0,
                        max_opening_per_address=0, max_rooms_per_address=0)
        srv = PlyhallServer(open_storage(db), host="127.0.0.1", port=0, rate_limit=limit, limits=limits,
                            serving_gc=True)  # as `plyhall serve` does
        await srv.start()
        probe = LatenessProbe(watch_gc=True).start()
        idle = tracked_objects()
        ready.put(srv.port)
        # (connections, tracked objects) once every client is connected, counted once: gc.get_objects()
        # walks the heap, a quarter of a second at 15,000 connections that the loop waits through
        busiest = (0, idle)
        while not stop.is_set():
            await asyncio.sleep(0.2)
            if not busiest[0] and len(srv.connections) >= clients:
                busiest = (len(srv.connections), tracked_objects())
        probe.stop()
        report_probe(probe, control, ready, {"idle_objects": idle, "objects": busiest[1],
                                             "connections": busiest[0]}, clock)
        await srv.stop()

    event_loop.run(main(), loop)


def report_probe(probe: LatenessProbe, control: Any, out: Any, extra: dict[str, Any] | None = None,
                 clock: Any = None, window: tuple[float, float] | None = None) -> None:
    """Put the probe's lateness over the window the parent sent (if it sent one; ``window`` if it was read
    already), with the sections' times over it when ``clock`` (a ``sections.SectionClock``) timed them."""
    try:
        start, end = window or control.get(timeout=1)
    except Exception:  # queue.Empty: no window measured
        out.put(([], {**probe.gc_within(0, 0), **(extra or {})}))
        return
    timed = {} if clock is None else {"sections": clock.report(start, end)}
    out.put((probe.within(start, end), {**probe.gc_within(start, end), **(extra or {}), **timed}))


class DirectRelayConnection(DirectConnection):
    """The relay's connections with ``--relay-io plyhall``: the Plyhall server's connection class (whole small frames
    taken straight from a read, whole messages handed straight from the parser), its frames written straight to the
    transport as the server's pushes write them, kept alive by the server's own sweep."""

    def relay_to(self, members: list[ServerConnection], padding: bytes) -> None:
        """From now on write every message this connection sends, ``padding`` after it, to each of ``members``
        (those still open: a half-closed one refuses writes at the end of a run)."""
        def forward(payload: bytes | str) -> None:
            assert isinstance(payload, bytes)
            frame = frame_header(True, len(payload) + len(padding)) + payload + padding
            for member in members:
                if member.protocol.state is State.OPEN and not member.transport.is_closing():
                    member.transport.write(frame)
        self.on_message = forward


class Kept:
    """What ``KeepaliveSweep`` keeps alive: a connection's ``ws`` (the server's ``Connection`` has more)."""

    __slots__ = ("ws",)

    def __init__(self, ws: DirectConnection) -> None:
        self.ws = ws


def relay_server_main(loop: str, io: str, serving_gc: bool, ready: Any, stop: Any, control: Any,
                      open_files: int) -> None:
    """Child process: the ceiling. A bare websockets server on the event loop ``loop``. The first frame of each
    connection names its group: ``pair N`` (saturation) forwards every frame of one connection of the pair to the
    other; ``room N/K`` (the scale phase's yardstick) sends every frame of a member to all K members, the sender
    included, with websockets' own ``broadcast``: the writes of a Plyhall move (the mover's copy, the opponent's,
    each spectator's) without its rules, clocks or storage; a small message comes in (a move's size), and
    :data:`ROOM_PADDING` after it makes what goes out a ``moved`` message's size.

    ``serving_gc``: once the parent names the window (the load set up), the collector is Plyhall's ``ServingGC``,
    as in the Plyhall server; the interpreter's default, fine at saturation's few hundred connections, pauses the
    relay for up to a second at 15,000. ``io``: ``websockets``, its own ``recv`` and ``send`` (and ``broadcast``)
    and its own keepalive (a task a connection); ``plyhall``, the Plyhall server's way
    (:class:`DirectRelayConnection`, its ``KeepaliveSweep`` with the same interval and timeout)."""
    leave_interrupts_to_the_parent()
    raise_open_files(open_files)
    partners: dict[bytes, list[ServerConnection]] = {}
    sweep = KeepaliveSweep(20.0, 20.0) if io == "plyhall" else None  # PlyhallServer's defaults

    async def handler(ws: ServerConnection) -> None:
        key = await ws.recv()
        assert isinstance(key, bytes)
        group = partners.setdefault(key, [])
        group.append(ws)
        room = key.startswith(b"room ")
        size = int(key.rpartition(b"/")[2]) if room else 2
        try:
            while len(group) < size:
                await asyncio.sleep(0.01)
            await ws.send(b"ready")
            if isinstance(ws, DirectRelayConnection):
                assert sweep is not None
                sweep.add(Kept(ws), time.monotonic())  # type: ignore[arg-type]  # it reads .ws only
                ws.relay_to(group if room else [m for m in group if m is not ws], ROOM_PADDING if room else b"")
                await ws.wait_closed()
            elif room:
                async for frame in ws:
                    broadcast(group, frame + ROOM_PADDING)
            else:
                other = group[1] if group[0] is ws else group[0]
                async for frame in ws:
                    await other.send(frame)
        except ConnectionClosed:
            pass

    async def main() -> None:
        own = {"create_connection": DirectRelayConnection, "ping_interval": None, "ping_timeout": None}
        async with serve(handler, "127.0.0.1", 0, subprotocols=[MSGPACK], compression=None,
                         max_size=MAX_MESSAGE_BYTES, max_queue=64, **(own if io == "plyhall" else {})) as server:
            keepalive = None if sweep is None else asyncio.create_task(sweep.run())
            probe = LatenessProbe(watch_gc=True).start()
            ready.put(list(server.sockets)[0].getsockname()[1])
            window = None
            while not stop.is_set():
                await asyncio.sleep(0.2)
                if serving_gc and window is None and not control.empty():
                    window = control.get()
                    ServingGC().start()
            probe.stop()
            if keepalive is not None:
                keepalive.cancel()
            report_probe(probe, control, ready, window=window)

    event_loop.run(main(), loop)


class ServerProcess:
    """A server in a child process: its port, pid and /proc figures."""

    def __init__(self, target: Any, *args: Any) -> None:
        ctx = mp.get_context("spawn")
        self.ready = ctx.Queue()
        self.stop_event = ctx.Event()
        self.control = ctx.Queue()
        self.lateness: list[float] = []
        self.gc: dict[str, Any] = {}
        self.process = ctx.Process(target=target, args=(*args, self.ready, self.stop_event, self.control, 20_000),
                                   daemon=True)
        self.plyhall = target is plyhall_server_main

    def start(self) -> ServerProcess:
        if self.plyhall:  # what the spawned process reads as it imports this module again (see CORE)
            os.environ[SERVER_ROLE] = "1"
        try:
            self.process.start()
        finally:
            os.environ.pop(SERVER_ROLE, None)
        self.port = self.ready.get(timeout=60)
        return self

    @property
    def pid(self) -> int:
        assert self.process.pid is not None
        return self.process.pid

    def stop(self) -> None:
        self.stop_event.set()
        with contextlib.suppress(Exception):
            self.lateness, self.gc = self.ready.get(timeout=30)
        self.process.join(60)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(10)


# Load processes -------------------------------------------------------------------------------------


def pack(msg: dict[str, Any]) -> bytes:
    return msgpack.packb(msg, use_bin_type=True)


def unpack(frame: bytes | str) -> dict[str, Any]:
    return msgpack.unpackb(frame, raw=False)


class DirectClient(DirectMessages, ClientConnection):
    """A websockets client connection that, once :meth:`attach` has given it a handler, hands every whole
    message to it as soon as it is parsed (the server's :class:`DirectMessages`), and sends prebuilt
    frames straight to the transport. One load process stands in for thousands of bot processes:
    websockets' per-message recv future, task step and send context would make it, not the server,
    the busiest party on the machine."""

    def attach(self, handler: Callable[[bytes], None]) -> None:
        """From now on give every message to ``handler``, starting with those already queued for recv()."""
        queued = self.recv_messages.frames.queue  # websockets' own queue: frames that came before the handler
        while queued:
            handler(bytes(queued.popleft().data))
        self.on_message = handler  # type: ignore[assignment]  # msgpack: binary messages only

    def send_now(self, payload: bytes) -> None:
        """Write one binary message as a single masked frame. The mask is all zeros: RFC 6455 asks clients
        for an unpredictable one (against proxies' cache poisoning, which loopback has none of); servers
        unmask whatever it is, and zeros leave the payload as it is (no copy, no XOR pass)."""
        if self.transport.is_closing():  # a timer that fires after the window: nobody listens any more
            return
        header = bytearray(frame_header(True, len(payload)))
        header[1] |= 0x80  # the mask bit
        self.transport.write(bytes(header) + b"\0\0\0\0" + payload)


async def open_ws(url: str) -> DirectClient:
    for attempt in range(5):
        try:
            return await connect(url, subprotocols=[MSGPACK], compression=None, max_size=2**22,
                                 open_timeout=60, ping_interval=None, create_connection=DirectClient)
        except (OSError, TimeoutError):
            if attempt == 4:
                raise
            await asyncio.sleep(0.5 * (attempt + 1))
    raise AssertionError("unreachable")


async def request(ws: ClientConnection, msg: dict[str, Any], reply: str) -> dict[str, Any]:
    """Send ``msg`` and read until a message of type ``reply`` (or an error) arrives."""
    await ws.send(pack(msg))
    while True:
        got = unpack(await ws.recv())
        if got["type"] == "error":
            raise RuntimeError(f"{msg['type']}: {got['code']}: {got['message']}")
        if got["type"] == reply:
            return got


@dataclass
class Table:
    """One game as the load process follows it: the reference state, shared by both players."""

    name: str
    state: Any = None
    sent_at: float = 0.0  # when the last move was sent (monotonic, this process)
    sent_seq: int = 0


@dataclass
class Stats:
    moves: int = 0  # moves accepted (counted when the mover's own copy of "moved" arrives)
    latencies: list[float] = field(default_factory=list)
    spectator_latencies: list[float] = field(default_factory=list)
    spectator_moves: int = 0
    games: int = 0
    errors: int = 0
    window: tuple[float, float] = (float("inf"), float("inf"))
    held: list[Bot] | None = None  # bots whose first move waits for the whole load to be set up (saturation)

    def timed(self, seq: int, sent_seq: int, sent_at: float) -> bool:
        """Whether a copy of move ``seq`` times a latency: the table's last move, sent inside the window."""
        return seq == sent_seq and self.window[0] <= sent_at < self.window[1]


class Bot:
    """One player (seat 0 or 1) or spectator (seat None) of one table."""

    def __init__(self, ws: DirectClient, table: Table, seat: int | None, stats: Stats, think: tuple[float, float],
                 rng: random.Random) -> None:
        self.ws = ws
        self.table = table
        self.seat = seat
        self.stats = stats
        self.think = think
        self.rng = rng
        self.game = get_game("connect4")
        ws.attach(self.on_frame)

    def on_frame(self, frame: bytes) -> None:
        try:
            self.on_message(unpack(frame))
        except Exception as exc:  # a bug here would silently stall a table: say so
            self.stats.errors += 1
            log(f"bot of {self.table.name} failed: {type(exc).__name__}: {exc}")

    def on_message(self, msg: dict[str, Any]) -> None:
        kind = msg["type"]
        if kind == "moved":
            now = time.monotonic()
            table = self.table
            to_move = msg["to_move"]
            if self.seat is None:
                self.stats.spectator_moves += 1
                if self.stats.timed(msg["seq"], table.sent_seq, table.sent_at):
                    self.stats.spectator_latencies.append(now - table.sent_at)
                return
            if msg["seat"] == self.seat:
                self.stats.moves += 1  # our own move, accepted: every move counts once
                return
            if to_move != self.seat:
                return  # the move ended the game
            if self.stats.timed(msg["seq"], table.sent_seq, table.sent_at):
                self.stats.latencies.append(now - table.sent_at)
            table.state = self.game.apply(table.state, self.game.parse_move(msg["notation"], table.state))
            self.play()
        elif kind == "game_start":
            if self.seat == 0:
                self.stats.games += 1
            if self.seat is not None and msg["to_move"] == self.seat and not msg["moves"]:
                self.table.state = self.game.decode_state(msg["state"], "algebraic")
                self.table.sent_seq = 0
                self.play()
        elif kind == "error":
            self.stats.errors += 1
            if self.stats.errors <= 5:
                log(f"server error: {msg.get('code')}: {msg.get('message')}")

    def play(self) -> None:
        if self.stats.held is not None:
            self.stats.held.append(self)
        elif self.think[1] <= 0:
            self.send_move()
        else:  # a timer while thinking
            asyncio.get_running_loop().call_later(self.rng.uniform(*self.think), self.send_move)

    def send_move(self) -> None:
        table = self.table
        move = self.rng.choice(self.game.legal_moves(table.state))
        table.sent_seq += 1
        table.sent_at = time.monotonic()
        self.ws.send_now(pack({"type": "move", "room": table.name, "move": self.game.notation(move)}))


async def set_up_table(url: str, index: int, tag: str, spectators: int, stats: Stats, think: tuple[float, float],
                       rng: random.Random, room_settings: dict[str, Any]) -> list[Bot]:
    """Log in two players (and spectators), create and fill a room; its bots (each reading from the moment
    it exists: the first move is played as soon as both players are seated)."""
    table = Table(f"{tag} {index}")
    a = await open_ws(url)
    await request(a, {"type": "login", "name": f"{tag}{index}a"}, "welcome")
    await request(a, {"type": "create_room", "game": "connect4", "name": table.name, **room_settings}, "room")
    await request(a, {"type": "join", "room": table.name, "seat": 0}, "joined")
    bots = [Bot(a, table, 0, stats, think, rng)]
    b = await open_ws(url)
    await request(b, {"type": "login", "name": f"{tag}{index}b"}, "welcome")
    bots.append(Bot(b, table, 1, stats, think, rng))
    b.send_now(pack({"type": "join", "room": table.name, "seat": 1}))
    for s in range(spectators):
        ws = await open_ws(url)
        await request(ws, {"type": "login", "name": f"{tag}{index}s{s}"}, "welcome")
        bots.append(Bot(ws, table, None, stats, think, rng))
        ws.send_now(pack({"type": "join", "room": table.name, "role": "spectator"}))
    return bots


async def gather_limited(coros: list[Any], limit: int) -> list[Any]:
    semaphore = asyncio.Semaphore(limit)

    async def one(coro: Any) -> Any:
        async with semaphore:
            return await coro

    return await asyncio.gather(*(one(c) for c in coros))


def load_main(mode: str, url: str, indexes: list[int], params: dict[str, Any], out: Any, control: Any) -> None:
    """Child process: generate one share of the load and report what it saw."""
    leave_interrupts_to_the_parent()
    raise_open_files(20_000)
    event_loop.run(_load(mode, url, indexes, params, out, control))  # uvloop where installed: a lighter load


async def _load(mode: str, url: str, indexes: list[int], params: dict[str, Any], out: Any, control: Any) -> None:
    loop = asyncio.get_running_loop()
    probe = LatenessProbe(watch_gc=True).start()
    rng = random.Random(params["seed"] * 1000 + (indexes[0] if indexes else 0))
    stats = Stats()
    sockets: list[DirectClient] = []
    if mode == "relay room":
        think = tuple(params["think"])
        tables = await gather_limited([relay_room(url, i, params["spectators"], sockets) for i in indexes],
                                      SETUP_CONCURRENCY)
        ServingGC().start()  # as the Plyhall load below does (its comment says why)
        out.put(("ready", os.getpid()))
        start, end = await loop.run_in_executor(None, control.get)
        stats.window = (start, end)
        for members in tables:
            RelayTable(members, stats, think, rng).start()
        out.put(("result", await played_window(stats, probe, start, end, params, len(sockets))))
    elif mode == "relay":
        counter = [0]
        pairs = await gather_limited([relay_pair(url, i, counter, sockets) for i in indexes], SETUP_CONCURRENCY)
        out.put(("ready", os.getpid()))
        start, end = await loop.run_in_executor(None, control.get)
        for i, (a, b) in zip(indexes, pairs, strict=True):
            relay_play(a, b, i, counter)
        await asyncio.sleep(max(0.0, start - time.monotonic()))
        count0, cpu0 = counter[0], time.process_time()
        await asyncio.sleep(max(0.0, end - time.monotonic()))
        count1, cpu1 = counter[0], time.process_time()
        out.put(("result", {"moves": count1 - count0, "cpu": cpu1 - cpu0, "lateness": probe.within(start, end)}))
    else:
        think = tuple(params["think"])
        settings = params["room"]
        made = [0]
        if think[1] <= 0:  # flat-out games set up first would take the server from the logins of the rest
            stats.held = []

        async def counted(index: int) -> list[Bot]:
            table = await set_up_table(url, index, params["tag"], params["spectators"], stats, think, rng, settings)
            made[0] += 1
            if made[0] % SETUP_REPORT == 0:
                out.put(("set up", (os.getpid(), made[0])))
            return table

        tables = await gather_limited([counted(i) for i in indexes], SETUP_CONCURRENCY)
        bots = [bot for table in tables for bot in table]
        sockets = [bot.ws for bot in bots]
        # One load process stands in for thousands of bot processes, each with a small heap. With the
        # interpreter's default collector its full passes over 7,500 connections took up to 450 ms,
        # counted as relay latency though the server had relayed the move long before; so it runs
        # the server's serving collector too.
        collector = ServingGC()
        collector.start()
        out.put(("ready", os.getpid()))
        start, end = await loop.run_in_executor(None, control.get)
        stats.window = (start, end)
        held, stats.held = stats.held or [], None
        for bot in held:
            bot.send_move()
        out.put(("result", await played_window(stats, probe, start, end, params, len(sockets))))
    probe.stop()
    closing = [asyncio.create_task(ws.close()) for ws in sockets]
    if closing:
        await asyncio.wait(closing, timeout=10)


async def played_window(stats: Stats, probe: LatenessProbe, start: float, end: float, params: dict[str, Any],
                        connections: int) -> dict[str, Any]:
    """Wait out the window (and the tail after it, for the moves sent just before its end to arrive); what a load
    process of games (or of the relay's groups) reports of it."""
    await asyncio.sleep(max(0.0, start - time.monotonic()))
    before = stats.moves, stats.games, stats.spectator_moves, time.process_time()
    await asyncio.sleep(max(0.0, end - time.monotonic()))
    after = stats.moves, stats.games, stats.spectator_moves, time.process_time()
    await asyncio.sleep(params.get("tail", 0.0))
    moves, games, spectator_moves, cpu = (b - a for a, b in zip(before, after, strict=True))
    return {
        "moves": moves, "games": games, "cpu": cpu, "errors": stats.errors,
        "latencies": stats.latencies, "spectator_latencies": stats.spectator_latencies,
        "spectator_moves": spectator_moves, "connections": connections,
        "lateness": probe.within(start, end), "gc": probe.gc_within(start, end),
    }


ROOM_MOVE = {"type": "move", "seq": 0, "seat": 0, "move": "4"}  # a scale relay's message in: about a move's size
ROOM_PADDING = bytes(108)
"""What the scale relay writes after each message: it goes out the size of a Connect Four ``moved`` (135-138 bytes
against a move's 29-31 in). The readers take the message and leave the padding (msgpack's ``ExtraData``)."""

RELAY_MESSAGE = {  # about the size of a Connect Four "moved" message
    "type": "moved", "room": "sat 17", "seq": 12, "seat": 1, "move": {"column": 4}, "notation": "4",
    "clocks": {"left": [86399.9, 86400.0], "running": 0, "control": {"per_move": 86400.0}}, "to_move": 0,
}


async def relay_pair(url: str, index: int, counter: list[int],
                     sockets: list[DirectClient]) -> tuple[DirectClient, DirectClient]:
    a = await open_ws(url)
    b = await open_ws(url)
    sockets += [a, b]
    key = f"pair {index}".encode()
    await a.send(key)
    await b.send(key)
    assert await a.recv() == b"ready" and await b.recv() == b"ready"
    return a, b


def relay_play(a: DirectClient, b: DirectClient, index: int, counter: list[int]) -> None:
    """Ping-pong one message through the relay; each side decodes what it gets and answers at once."""

    def side(ws: DirectClient) -> Callable[[bytes], None]:
        def answer(frame: bytes) -> None:
            got = unpack(frame)
            counter[0] += 1
            got["seq"] += 1
            ws.send_now(pack(got))
        return answer

    a.attach(side(a))
    b.attach(side(b))
    a.send_now(pack(dict(RELAY_MESSAGE, room=f"sat {index}")))


async def relay_room(url: str, index: int, spectators: int, sockets: list[DirectClient]) -> list[DirectClient]:
    """One table of the scale phase's yardstick: two players and ``spectators`` connections in one relay group."""
    size = 2 + spectators
    members = [await open_ws(url) for _ in range(size)]
    sockets += members
    key = f"room {index}/{size}".encode()
    for ws in members:
        await ws.send(key)
    for ws in members:
        assert await ws.recv() == b"ready"
    return members


class RelayTable:
    """A game's worth of messages through the relay: the players take turns, each thinking as the scale phase's
    bots do before it sends (the first after up to one think, so that the tables' turns spread as the games' do);
    every member gets every message (the sender its own copy, as a Plyhall mover gets ``moved``). Counted and timed
    as :class:`Bot` counts and times moves."""

    def __init__(self, members: list[DirectClient], stats: Stats, think: tuple[float, float],
                 rng: random.Random) -> None:
        self.members = members
        self.stats = stats
        self.think = think
        self.rng = rng
        self.sent_at = 0.0
        self.seq = 0
        for place, ws in enumerate(members):
            ws.attach(self.reader(place))

    def start(self) -> None:
        """The first player's first message, up to one think from now."""
        asyncio.get_running_loop().call_later(self.rng.uniform(0.0, self.think[1]), self.send, 0)

    def reader(self, place: int) -> Callable[[bytes], None]:
        """The handler of member ``place``: 0 and 1 are the players, the others spectators."""
        def on_frame(frame: bytes) -> None:
            try:
                self.on_message(place, unpack_padded(frame))
            except Exception as exc:  # a bug here would silently stall a table: say so
                self.stats.errors += 1
                log(f"relay table of {place} failed: {type(exc).__name__}: {exc}")
        return on_frame

    def on_message(self, place: int, msg: dict[str, Any]) -> None:
        now = time.monotonic()
        stats = self.stats
        timed = stats.timed(msg["seq"], self.seq, self.sent_at)
        if place > 1:
            stats.spectator_moves += 1
            if timed:
                stats.spectator_latencies.append(now - self.sent_at)
        elif msg["seat"] == place:
            stats.moves += 1  # the sender's own copy: every message counts once
        else:
            if timed:
                stats.latencies.append(now - self.sent_at)
            asyncio.get_running_loop().call_later(self.rng.uniform(*self.think), self.send, place)

    def send(self, seat: int) -> None:
        self.seq += 1
        self.sent_at = time.monotonic()
        self.members[seat].send_now(pack(dict(ROOM_MOVE, seq=self.seq, seat=seat)))


def unpack_padded(frame: bytes) -> dict[str, Any]:
    """The message at the start of ``frame``, whatever follows it (:data:`ROOM_PADDING`)."""
    try:
        return msgpack.unpackb(frame, raw=False)
    except msgpack.ExtraData as extra:
        return extra.unpacked


class LoadProcesses:
    """Load generator processes splitting ``indexes`` between them."""

    running: ClassVar[list[mp.process.BaseProcess]] = []  # every load process started, until stop_all

    @classmethod
    def stop_all(cls) -> None:
        """End the load processes still running (after an interrupt: a finished phase has joined its own)."""
        for process in cls.running:
            if process.is_alive():
                process.terminate()
        for process in cls.running:
            process.join(10)
        cls.running.clear()

    def __init__(self, mode: str, url: str, indexes: list[int], procs: int, params: dict[str, Any]) -> None:
        ctx = mp.get_context("spawn")
        self.out = ctx.Queue()
        self.controls = [ctx.Queue() for _ in range(procs)]
        shares = self.shares = [indexes[i::procs] for i in range(procs)]
        self.processes = [ctx.Process(target=load_main, args=(mode, url, share, params, self.out, control),
                                      daemon=True)
                          for share, control in zip(shares, self.controls, strict=True)]

    def start(self, timeout: float, what: str = "") -> list[int]:
        """Start the load processes; their pids once every one is ready. A line on stderr every
        ``SETUP_REPORT`` games set up (``what``: the phase, for those lines)."""
        for p in self.processes:
            p.start()
            LoadProcesses.running.append(p)
        pids: list[int] = []
        made: dict[int, int] = {}  # load process's pid -> games it has set up so far
        total = sum(len(share) for share in self.shares)
        deadline = time.monotonic() + timeout
        while len(pids) < len(self.processes):
            kind, value = self.out.get(timeout=max(0.1, deadline - time.monotonic()))
            if kind == "ready":
                pids.append(value)
                continue
            pid, count = value
            made[pid] = count
            log(f"{what}: {sum(made.values())} of {total} games set up (load {loadavg()})")
        return pids

    def window(self, start: float, end: float) -> None:
        for control in self.controls:
            control.put((start, end))

    def results(self, timeout: float) -> list[dict[str, Any]]:
        results = []
        for _ in self.processes:
            kind, result = self.out.get(timeout=timeout)
            assert kind == "result"
            results.append(result)
        for p in self.processes:
            p.join(30)
            if p.is_alive():
                p.terminate()
        return results


# Phases ----------------------------------------------------------------------------------------------


def pin(pid: int, cpus: set[int]) -> None:
    """Keep every thread of process ``pid`` on ``cpus`` (``sched_setaffinity`` of a pid moves one thread only)."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(ProcessLookupError):
            os.sched_setaffinity(int(task.name), cpus)


def measure(server: ServerProcess, load: LoadProcesses, load_pids: list[int], warmup: float,
            seconds: float, tail: float, pinned: bool = False) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Run the window: server CPU and memory over it, and every load process's report. ``pinned``: the server on
    the first CPU this process may use, the load processes on the others, so that the Plyhall server and the relay
    are measured with their load placed alike (left to the scheduler, the relay's cost a message swings by two)."""
    if pinned:
        cpus = sorted(os.sched_getaffinity(0))
        pin(server.pid, {cpus[0]})
        for pid in load_pids:
            pin(pid, set(cpus[1:]))
    start = time.monotonic() + warmup
    end = start + seconds
    load.window(start, end)
    server.control.put((start, end))
    time.sleep(max(0.0, start - time.monotonic()))
    cpu0, wait0 = cpu_seconds(server.pid), run_delay(server.pid)
    load_cpu0 = sum(cpu_seconds(pid) for pid in load_pids)
    load_wait0 = sum(run_delay(pid) for pid in load_pids)
    time.sleep(max(0.0, end - time.monotonic()))
    cpu1, wait1 = cpu_seconds(server.pid), run_delay(server.pid)
    load_cpu1 = sum(cpu_seconds(pid) for pid in load_pids)
    load_wait1 = sum(run_delay(pid) for pid in load_pids)
    memory = memory_kb(server.pid)
    results = load.results(timeout=tail + 120)
    return {"cpu": cpu1 - cpu0, "load_cpu": load_cpu1 - load_cpu0, "seconds": seconds,
            "wait": (wait1 - wait0) / seconds, "load_wait": (load_wait1 - load_wait0) / seconds / len(load_pids),
            **memory}, results


def saturation(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    log(f"saturation: {args.rooms} rooms, Plyhall server starting")
    server = ServerProcess(plyhall_server_main, database(args, tmp, "saturation"), SATURATION_RATE,
                           args.rooms, args.loop, 2 * args.rooms, args.sections).start()
    url = f"ws://127.0.0.1:{server.port}/ws"
    params = {"seed": args.seed, "think": (0.0, 0.0), "spectators": 0, "tag": "sat",
              "room": {"time_control": {"per_move": 86400}, "games": 1000}}
    try:
        load = LoadProcesses("play", url, list(range(args.rooms)), args.load_procs, params)
        pids = load.start(timeout=300)
        log(f"saturation: {2 * args.rooms} players connected; measuring {args.seconds:g} s (load {loadavg()})")
        server_figures, results = measure(server, load, pids, 1.0, args.seconds, 0.0, args.pin)
    finally:
        LoadProcesses.stop_all()  # before the server, which would refuse the logins of a set-up under way
        server.stop()
    log(f"saturation: Plyhall measured (load {loadavg()})")
    moves = sum(r["moves"] for r in results)
    errors = sum(r["errors"] for r in results)
    plyhall = {"moves": moves, "rate": moves / args.seconds, "cpu_per_move": server_figures["cpu"] / max(1, moves),
               "server_cpu": server_figures["cpu"] / args.seconds,
               "load_cpu": server_figures["load_cpu"] / args.seconds,
               "games": sum(r["games"] for r in results), "errors": errors,
               "server_late": percentiles(server.lateness), "gc": server.gc,
               "wait": server_figures["wait"], "load_wait": server_figures["load_wait"],
               "load_late": percentiles([x for r in results for x in r["lateness"]])}
    log(f"saturation: Plyhall {plyhall['rate']:.0f} moves/s; relay server starting")
    relay = ServerProcess(relay_server_main, args.relay_loop, args.relay_io, False).start()
    try:
        load = LoadProcesses("relay", f"ws://127.0.0.1:{relay.port}/ws", list(range(args.rooms)), args.load_procs,
                             {"seed": args.seed})
        pids = load.start(timeout=300)
        log(f"saturation: {args.rooms} relay pairs connected; measuring {args.seconds:g} s (load {loadavg()})")
        relay_figures, results = measure(relay, load, pids, 1.0, args.seconds, 0.0, args.pin)
    finally:
        LoadProcesses.stop_all()
        relay.stop()
    relayed = sum(r["moves"] for r in results)
    echo = {"moves": relayed, "rate": relayed / args.seconds, "cpu_per_move": relay_figures["cpu"] / max(1, relayed),
            "server_cpu": relay_figures["cpu"] / args.seconds, "load_cpu": relay_figures["load_cpu"] / args.seconds,
            "server_late": percentiles(relay.lateness),
            "wait": relay_figures["wait"], "load_wait": relay_figures["load_wait"],
            "load_late": percentiles([x for r in results for x in r["lateness"]])}
    log(f"saturation: relay {echo['rate']:.0f} messages/s (load {loadavg()})")
    return {"plyhall": plyhall, "echo": echo}


def scale(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    log(f"scale: {args.games} games, {args.spectators} spectator(s) each; Plyhall server starting")
    target = database(args, tmp, "scale")
    server = ServerProcess(plyhall_server_main, target, None, args.games, args.loop,
                           args.games * (2 + args.spectators), args.sections).start()
    think = (1.0 - args.jitter, 1.0 + args.jitter)
    params = {"seed": args.seed, "think": think, "spectators": args.spectators, "tag": "sc", "tail": 2.0,
              "room": {"time_control": {"per_move": 60}, "games": 1000}}
    idle = memory_kb(server.pid)
    result = scale_window(args, server, "play", f"ws://127.0.0.1:{server.port}/ws", params, "scale",
                          wal=target + "-wal" if args.database == "sqlite" else None)
    result["idle_mb"] = idle.get("VmRSS", 0) / 1024
    if args.scale_relay:
        log(f"scale: the bare relay under the same load ({args.games} groups of {2 + args.spectators} connections)")
        relay = ServerProcess(relay_server_main, args.relay_loop, args.relay_io, True).start()
        result["relay"] = scale_window(args, relay, "relay room", f"ws://127.0.0.1:{relay.port}/ws", params,
                                       "scale relay")
    return result


def scale_window(args: argparse.Namespace, server: ServerProcess, mode: str, url: str, params: dict[str, Any],
                 what: str, wal: str | None = None) -> dict[str, Any]:
    """Set up the scale phase's load on ``server`` (Plyhall's, or the relay as its yardstick: as many groups as
    games, each of two players and the spectators, the players thinking alike), measure the window, stop both;
    ``wal``: the SQLite write-ahead log whose size to take at the window's end (the server's stop empties it)."""
    wal_mb = None
    try:
        load = LoadProcesses(mode, url, list(range(args.games)), args.scale_procs, params)
        began = time.monotonic()
        pids = load.start(timeout=3600, what=what)
        setup = time.monotonic() - began
        log(f"{what}: {args.games * (2 + args.spectators)} connections ready in {setup:.1f} s; "
            f"warming up 3 s, then measuring {args.scale_seconds:g} s (load {loadavg()})")
        figures, results = measure(server, load, pids, 3.0, args.scale_seconds, 2.0, args.pin)
        if wal is not None and os.path.exists(wal):
            wal_mb = os.path.getsize(wal) / 1e6
    finally:
        LoadProcesses.stop_all()  # before the server, which would refuse the logins of a set-up under way
        server.stop()
    log(f"{what}: measured (load {loadavg()})")
    return dict(scale_figures(args, server, figures, results), setup=setup, wal_mb=wal_mb)


def scale_figures(args: argparse.Namespace, server: ServerProcess, figures: dict[str, Any],
                  results: list[dict[str, Any]]) -> dict[str, Any]:
    """What a scale window of ``server`` (Plyhall's or the relay) measured, from its figures and the load's
    reports."""
    latencies = sorted(x for r in results for x in r["latencies"])
    watched = sorted(x for r in results for x in r["spectator_latencies"])
    return {
        "connections": sum(r["connections"] for r in results),
        "moves": sum(r["moves"] for r in results), "seconds": args.scale_seconds,
        "spectator_moves": sum(r["spectator_moves"] for r in results),
        "latency": percentiles(latencies), "spectator_latency": percentiles(watched),
        "rss_mb": figures.get("VmRSS", 0) / 1024, "hwm_mb": figures.get("VmHWM", 0) / 1024,
        "server_cpu": figures["cpu"] / args.scale_seconds,
        "load_cpu": figures["load_cpu"] / args.scale_seconds, "errors": sum(r["errors"] for r in results),
        "games": sum(r["games"] for r in results), "server_late": percentiles(server.lateness), "gc": server.gc,
        "load_late": percentiles([x for r in results for x in r["lateness"]]),
        "load_gc": {"count": sum(r["gc"]["count"] for r in results),
                    "max_ms": max((r["gc"]["max_ms"] for r in results), default=0.0),
                    "total_ms": sum(r["gc"]["total_ms"] for r in results)},
        "wait": figures["wait"], "load_wait": figures["load_wait"], "loadavg": loadavg(),
    }


def database(args: argparse.Namespace, tmp: Path, phase: str) -> str:
    """The database of a phase's server: a fresh SQLite file, or the given database server's (emptied)."""
    if args.database == "sqlite":
        return os.path.join(tmp, f"{phase}-{args.loop}.db")
    from server.storage import open_storage

    storage = open_storage(args.database)
    storage.wipe()
    storage.close()
    return args.database


def database_label(target: str) -> str:
    """The database for the printed tables (no password)."""
    if target == "sqlite":
        return "SQLite (embedded)"
    head, _, tail = target.partition("@")
    return f"PostgreSQL ({tail or head})"


# Output ---------------------------------------------------------------------------------------------------


def print_saturation(args: argparse.Namespace, result: dict[str, Any]) -> None:
    p, e = result["plyhall"], result["echo"]
    ratio = p["rate"] / e["rate"] if e["rate"] else float("nan")
    heading(f"Saturation on {database_label(args.database)}, Plyhall on {args.loop} ({CORE}), "
            f"relay on {args.relay_loop} ({RELAY_IO[args.relay_io]}): "
            f"{args.rooms} connect4 rooms / client pairs, "
            f"{args.seconds:g} s window, {args.load_procs} load process(es)", separator=", ")
    print(f"{'server':<34}{'moves/s':>10}{'CPU ms/move':>13}{'server CPU':>12}{'load CPU':>10}")
    print(f"{'Plyhall (move -> 2x moved)':<34}{p['rate']:>10.0f}{p['cpu_per_move'] * 1000:>13.3f}"
          f"{p['server_cpu']:>11.0%} {p['load_cpu']:>9.0%}")
    print(f"{'bare websockets relay (1 -> 1)':<34}{e['rate']:>10.0f}{e['cpu_per_move'] * 1000:>13.3f}"
          f"{e['server_cpu']:>11.0%} {e['load_cpu']:>9.0%}")
    print(f"event-loop wake-up lateness p50/p99 (ms): Plyhall server {p['server_late']['p50']:.2f}/"
          f"{p['server_late']['p99']:.2f}, its load {p['load_late']['p50']:.2f}/{p['load_late']['p99']:.2f}; "
          f"relay server {e['server_late']['p50']:.2f}/{e['server_late']['p99']:.2f}, "
          f"its load {e['load_late']['p50']:.2f}/{e['load_late']['p99']:.2f}")
    print(f"share of the window the event loops waited for a CPU (taken by other processes): Plyhall server "
          f"{p['wait']:.0%}, its load {p['load_wait']:.0%}; relay server {e['wait']:.0%}, "
          f"its load {e['load_wait']:.0%}")
    if p["gc"]:
        g = p["gc"]
        print(f"Plyhall server GC pauses: {g['count']}, {g['total_ms']:.0f} ms wall ({g['cpu_ms']:.0f} ms CPU) in all, "
              f"longest {g['max_ms']:.0f} ms wall ({g['max_cpu_ms']:.1f} ms CPU)")
    verdict = "meets" if ratio >= 0.5 else "misses"
    print(f"Plyhall / relay throughput: {ratio:.0%} ({verdict} the 50% target); "
          f"{p['moves']} moves, {p['games']} games started, {p['errors']} error replies")
    if args.sections:
        print_sections(p["gc"].get("sections", {}), p["rate"])
    if p["cpu_per_move"] and e["cpu_per_move"]:
        print(f"Plyhall / relay per server CPU second (moves vs messages a CPU second, "
              f"{1 / p['cpu_per_move']:.0f} vs {1 / e['cpu_per_move']:.0f}): "
              f"{e['cpu_per_move'] / p['cpu_per_move']:.0%}")


def print_scale(args: argparse.Namespace, r: dict[str, Any]) -> None:
    lat, spec = r["latency"], r["spectator_latency"]
    print(f"\nScale on {database_label(args.database)}, server on {args.loop} ({CORE}): {args.games} games x "
          f"(2 players + {args.spectators} "
          f"spectators) = {r['connections']} connections, "
          f"bots think {1 - args.jitter:g}-{1 + args.jitter:g} s, {args.scale_seconds:g} s window, "
          f"{args.scale_procs} load processes (set up in {r['setup']:.1f} s)"
          f"{'; the server on one CPU, the load on the others' if args.pin else ''}")
    print(f"{'figure':<44}{'value':>12}  target")
    print(f"{'moves relayed in the window':<44}{r['moves']:>12}")
    print(f"{'moves a second':<44}{r['moves'] / r['seconds']:>12.0f}")
    print(f"{'move relay latency p50 (ms)':<44}{lat['p50']:>12.2f}")
    target = 20 if args.games <= 1000 else 50  # the goals: 20 ms at 1,000 games, 50 ms at 5,000
    ok = "ok" if lat["p99"] < target else "MISSED"
    print(f"{'move relay latency p99 (ms)':<44}{lat['p99']:>12.2f}  < {target} ms: {ok}")
    print(f"{'move relay latency max (ms)':<44}{lat['max']:>12.2f}")
    print(f"{'  samples (mover -> opponent)':<44}{lat['n']:>12}")
    print(f"{'spectator latency p50 / p99 (ms)':<44}{spec['p50']:>6.2f} /{spec['p99']:>5.2f}")
    ok = "ok" if r["rss_mb"] < 500 else "MISSED"
    print(f"{'server RSS at the end of the window (MB)':<44}{r['rss_mb']:>12.1f}  < 500 MB: {ok}")
    print(f"{'server peak RSS (VmHWM, MB)':<44}{r['hwm_mb']:>12.1f}")
    print(f"{'server RSS before any client (MB)':<44}{r['idle_mb']:>12.1f}")
    if r["wal_mb"] is not None:  # the file keeps its largest size, up to 64 MiB (docs/OPERATING.md, "Backups")
        print(f"{'SQLite write-ahead log at the end (MB)':<44}{r['wal_mb']:>12.1f}")
    print(f"{'server CPU / load processes CPU':<44}{r['server_cpu']:>11.0%} / {r['load_cpu']:.0%}")
    per_move = r["server_cpu"] * r["seconds"] / max(1, r["moves"])
    print(f"{'server CPU a move (µs)':<44}{per_move * 1e6:>12.0f}")
    print(f"{'games started in the window / error replies':<44}{r['games']:>12} / {r['errors']}")
    sl, ll = r["server_late"], r["load_late"]
    print(f"{'10 ms timer lateness p50/p99 (ms): server':<44}{sl['p50']:>6.2f} /{sl['p99']:>6.2f}")
    print(f"{'                                   load':<44}{ll['p50']:>6.2f} /{ll['p99']:>6.2f}")
    print(f"{'                             max: server / load':<44}{sl['max']:>6.0f} /{ll['max']:>6.0f}")
    lg = r["load_gc"]
    print(f"{'load processes GC pauses (count, longest ms)':<44}{lg['count']:>12}  longest {lg['max_ms']:.0f} ms, "
          f"{lg['total_ms']:.0f} ms in all (the load's pauses delay its own sends and reads)")
    print(f"{'share of the window waiting for a CPU: server':<44}{r['wait']:>11.0%}  "
          f"(load processes {r['load_wait']:.0%}; load average {r['loadavg']})")
    g = r["gc"]
    if g:
        print(f"{'server GC pauses in the window':<44}{g['count']:>12}  {g['total_ms']:.0f} ms wall "
              f"({g['cpu_ms']:.0f} ms CPU) in all, longest {g['max_ms']:.0f} ms wall ({g['max_cpu_ms']:.1f} ms CPU); "
              f"{g['full']} full, longest {g['full_max_ms']:.0f} ms")
        ok = "ok" if g["max_ms"] < 20 else "MISSED"
        print(f"{'longest GC pause (ms)':<44}{g['max_ms']:>12.1f}  < 20 ms: {ok}")
        edges = ("<1", *(f"{a}-{b}" for a, b in zip(PAUSE_EDGES, PAUSE_EDGES[1:], strict=False)),
                 f">={PAUSE_EDGES[-1]}")
        print(f"{'GC pause histogram (ms: count)':<44}  " + "  ".join(
            f"{edge}: {count}" for edge, count in zip(edges, g["histogram"], strict=True)))
        if g.get("connections"):
            per = (g["objects"] - g["idle_objects"]) / g["connections"]
            print(f"{'objects tracked by the GC per connection':<44}{per:>12.1f}  "
                  f"({g['objects']} tracked with {g['connections']} connections, {g['idle_objects']} before any "
                  "client)")
    if args.sections:
        print_sections(g.get("sections", {}), r["moves"] / r["seconds"])
    if "relay" in r:
        print_scale_relay(args, r, r["relay"])


def print_scale_relay(args: argparse.Namespace, r: dict[str, Any], e: dict[str, Any]) -> None:
    """The relay's window under the same load, beside Plyhall's."""
    def per_message(x: dict[str, Any]) -> float:
        return x["server_cpu"] * x["seconds"] / max(1, x["moves"]) * 1e6

    def p50_p99(x: dict[str, Any]) -> str:
        return f"{x['latency']['p50']:.2f} / {x['latency']['p99']:.1f}"

    writes = 2 + args.spectators
    print(f"\nThe bare websockets relay (on {args.relay_loop}, {RELAY_IO[args.relay_io]}) under the same load: "
          f"{e['connections']} connections in {args.games} groups, each message written to all {writes} of its "
          f"group (set up in {e['setup']:.1f} s)")
    print(f"{'figure':<44}{'Plyhall':>16}{'relay':>16}")
    print(f"{'moves (messages) a second':<44}{r['moves'] / r['seconds']:>16.0f}{e['moves'] / e['seconds']:>16.0f}")
    print(f"{'copies a spectator got, a move (message)':<44}{r['spectator_moves'] / max(1, r['moves']):>16.2f}"
          f"{e['spectator_moves'] / max(1, e['moves']):>16.2f}")
    print(f"{'server CPU':<44}{r['server_cpu']:>16.0%}{e['server_cpu']:>16.0%}")
    print(f"{'load processes CPU':<44}{r['load_cpu']:>16.0%}{e['load_cpu']:>16.0%}")
    print(f"{'server CPU a move (message), µs':<44}{per_message(r):>16.0f}{per_message(e):>16.0f}")
    print(f"{'latency to the opponent p50 / p99 (ms)':<44}{p50_p99(r):>16}{p50_p99(e):>16}")
    print(f"{'share of the window waiting for a CPU':<44}{r['wait']:>16.0%}{e['wait']:>16.0%}")

    def pauses(x: dict[str, Any]) -> str:
        return f"{x['gc'].get('count', 0)}, {x['gc'].get('max_ms', 0.0):.0f} ms" if x["gc"] else "-"

    print(f"{'server GC pauses, longest':<44}{pauses(r):>16}{pauses(e):>16}")
    print(f"{'server RSS at the end of the window (MB)':<44}{r['rss_mb']:>16.1f}{e['rss_mb']:>16.1f}")
    if e["moves"] and r["moves"]:
        print(f"Plyhall's CPU a move / the relay's a message at this load: {per_message(r) / per_message(e):.2f}x; "
              f"errors seen by the relay's load: {e['errors']}")


def main(argv: list[str] | None = None) -> int:
    """Run the phases asked for, on each database and event loop asked for, and print their tables."""
    parser = script_parser(__doc__)
    parser.add_argument("--rooms", type=int, default=100, help="saturation: rooms and relay pairs (default 100)")
    parser.add_argument("--seconds", type=float, default=10.0, help="saturation: seconds measured (default 10)")
    parser.add_argument("--games", type=int, default=1000, help="scale: concurrent games (default 1000)")
    parser.add_argument("--spectators", type=int, default=1, help="scale: spectators per game (default 1)")
    parser.add_argument("--scale-seconds", type=float, default=30.0, help="scale: seconds measured (default 30)")
    parser.add_argument("--jitter", type=float, default=0.25, help="scale: think 1 s +- this (default 0.25)")
    parser.add_argument("--only", choices=["saturation", "scale"], help="run one phase only")
    parser.add_argument("--load-procs", type=int, default=1, help="saturation: load processes (default 1)")
    parser.add_argument("--scale-procs", type=int, default=2, help="scale: load processes (default 2)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--db", action="append", default=[],
                        help="a database to run the phases on: sqlite (a fresh file per phase, the default) or "
                             "postgresql://user@127.0.0.1:5432/bench (emptied first!); give it twice to compare")
    parser.add_argument("--event-loop", action="append", default=[], choices=event_loop.EVENT_LOOPS,
                        help="the servers' event loop (default: as plyhall serve, "
                             f"{event_loop.default_event_loop()} here); give it twice to compare")
    parser.add_argument("--relay-loop", choices=event_loop.EVENT_LOOPS, default="asyncio",
                        help="the bare relay's event loop (default asyncio, websockets' own: the yardstick of "
                             "every saturation figure so far)")
    parser.add_argument("--relay-io", choices=list(RELAY_IO), default="websockets",
                        help="the bare relay's way with a message: websockets' own recv and send (default: the "
                             "yardstick of every figure so far), or the Plyhall server's (each message handed "
                             "straight from the parser, its frame written straight to the transport)")
    parser.add_argument("--scale-relay", action="store_true",
                        help="scale: then run the bare relay under the same load (its connections grouped as the "
                             "games are, each message written to every member of its group: a move's writes "
                             "without its rules, clocks or storage) and print the two side by side")
    parser.add_argument("--baseline-tree", type=Path, metavar="DIR",
                        help="run DIR's server_load.py and this one's alternately, --runs times each (the saturation "
                             "phase, or the scale phase with --only scale), and print each run's figures and each "
                             "tree's range and median")
    parser.add_argument("--sections", action="store_true",
                        help="time the server's hot sections in it and print where its CPU went (sections.py; the "
                             "wrappers cost a little: compare CPU a move only between runs without it)")
    parser.add_argument("--runs", type=int, default=None,
                        help="with --baseline-tree: runs of each tree (default 5); with --only scale alone: runs of "
                             "this tree in a row, each in a process of its own, and their median")
    parser.add_argument("--pin", action="store_true",
                        help="the server (Plyhall's, then the relay) on one CPU, the load processes on the others: in "
                             "both parts of saturation (a fairer yardstick: the relay's cost a message then swings "
                             "less), and in the scale phase's window")
    args = parser.parse_args(argv)
    if args.pin and len(os.sched_getaffinity(0)) < 2:
        parser.error("--pin needs at least two CPUs (one for the server, the others for its load)")
    if args.baseline_tree is not None:
        script = args.baseline_tree / "benchmarks" / "server_load.py"
        if not script.is_file():
            parser.error(f"--baseline-tree {args.baseline_tree}: no benchmarks/server_load.py there; give the root "
                         "of a checkout of this project (e.g. made by git worktree add)")
        if args.pin and "--pin" not in script.read_text():
            parser.error(f"--pin: {script} has no --pin (a tree from before it); compare without it")
        if args.relay_io != "websockets" and "--relay-io" not in script.read_text():
            parser.error(f"--relay-io: {script} has no --relay-io (a tree from before it); compare without it")
        if args.only is None or args.scale_relay or args.sections or (args.runs is not None and args.runs < 1):
            parser.error("--baseline-tree compares one phase (--only saturation or --only scale; no --scale-relay "
                         "or --sections), --runs at least 1")
        args.runs = 5 if args.runs is None else args.runs
        return compare_scale(args, script) if args.only == "scale" else compare_trees(args, script)
    if args.runs is not None:
        if args.only != "scale" or args.scale_relay or args.sections or args.runs < 1:
            parser.error("--runs is for --baseline-tree, or for --only scale alone (no --scale-relay or --sections): "
                         "at least 1")
        return compare_scale(args, None)
    if args.scale_relay and args.only == "saturation":
        parser.error("--scale-relay is part of the scale phase: drop --only saturation")
    if min(args.rooms, args.games, args.load_procs, args.scale_procs) < 1 or args.spectators < 0:
        parser.error("--rooms, --games and the process counts must be at least 1, --spectators at least 0")
    if not 0 <= args.jitter < 1 or args.seconds <= 0 or args.scale_seconds <= 0:
        parser.error("--jitter must be in [0, 1) and the windows positive")
    limit = raise_open_files(20_000)
    needed = max(2 * args.rooms, args.games * (2 + args.spectators)) // min(args.load_procs, args.scale_procs) + 100
    if limit < needed:
        log(f"warning: the open-file limit is {limit}; about {needed} are needed per process")
    loops = args.event_loop or [event_loop.default_event_loop()]
    missing = [name for name in [*loops, args.relay_loop] if not event_loop.installed(name)]
    if missing:
        parser.error(f"--event-loop {missing[0]}: it is not installed here")
    try:
        run_phases(args, loops)
    except KeyboardInterrupt:
        log("interrupted: the servers and load processes are stopped; no figures")
        return 130
    print("\n(loopback, one machine: the server, the relay and the load processes share its CPUs)")
    return 0


def run_phases(args: argparse.Namespace, loops: list[str]) -> None:
    """Each phase asked for, on each database and event loop asked for, its table printed as it ends."""
    with scratch("load") as tmp:
        for target in args.db or ["sqlite"]:
            args.database = target
            for args.loop in loops:
                if args.only in (None, "saturation"):
                    print_saturation(args, saturation(args, tmp))
                    sys.stdout.flush()
                if args.only in (None, "scale"):
                    print_scale(args, scale(args, tmp))
                    sys.stdout.flush()


# Two trees, alternately -----------------------------------------------------------------------------------------

PLYHALL_ROW = "Plyhall (move -> 2x moved)"
RELAY_ROW = "bare websockets relay (1 -> 1)"


def table_rows(text: str, rows: tuple[str, ...], table: str) -> dict[str, list[str]]:
    """The values after each of ``rows``' titles, where a line of ``text`` starts with one; ValueError (no ``table``
    table in the output) unless every row is there."""
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        for row in rows:
            if line.startswith(row):
                found[row] = line[len(row):].split()
    if len(found) < len(rows):
        raise ValueError(f"no {table} table in the output")
    return found


def saturation_figures(text: str) -> tuple[float, float, float, float]:
    """Plyhall's moves a second and CPU ms a move, the relay's messages a second and CPU ms a message, read from a
    saturation table as :func:`print_saturation` prints it (in any tree that prints these two rows)."""
    found = table_rows(text, (PLYHALL_ROW, RELAY_ROW), "saturation")
    return (float(found[PLYHALL_ROW][0]), float(found[PLYHALL_ROW][1]), float(found[RELAY_ROW][0]),
            float(found[RELAY_ROW][1]))


def one_saturation_run(script: Path, args: argparse.Namespace) -> tuple[float, float, float, float] | None:
    """One saturation phase by ``script`` (a tree's own server_load.py) in a process of its own; its four figures,
    or None (with its error output shown) when it printed no table."""
    phase = ["--only", "saturation", "--rooms", str(args.rooms), "--seconds", str(args.seconds),
             "--load-procs", str(args.load_procs), "--seed", str(args.seed), "--relay-loop", args.relay_loop]
    if args.relay_io != "websockets":  # a tree from before --relay-io takes the default only
        phase += ["--relay-io", args.relay_io]
    return run_tree(script, args, phase, saturation_figures)


T = TypeVar("T")


def run_tree(script: Path, args: argparse.Namespace, phase: list[str], figures: Callable[[str], T]) -> T | None:
    """``script`` (a tree's own server_load.py) with the ``phase`` options and this run's ``--pin``, database and
    event loop, in a process of its own; what ``figures`` reads from its output, or None (with its error output
    shown) when that is no table."""
    command = [sys.executable, str(script), *phase]
    if args.pin:
        command.append("--pin")
    for target in args.db[:1]:
        command += ["--db", target]
    for name in args.event_loop[:1]:
        command += ["--event-loop", name]
    done = subprocess.run(command, capture_output=True, text=True, cwd=script.parent.parent, check=False)
    try:
        return figures(done.stdout)
    except ValueError:
        log(f"{script}: exit status {done.returncode}, no figures; its last error lines:\n"
            + "\n".join(done.stderr.splitlines()[-15:]))
        return None


def compare_trees(args: argparse.Namespace, baseline: Path) -> int:
    """The saturation phase ``--runs`` times with each tree, alternating, the baseline first; every run's figures
    and each tree's range of Plyhall CPU a move / relay CPU a message."""
    trees = [("before", baseline.resolve()), ("after", Path(__file__).resolve())]
    ratios: dict[str, list[float]] = {"before": [], "after": []}
    heading(f"Saturation, two trees alternately ({args.runs} runs each, {args.rooms} rooms, {args.seconds:g} s "
            f"windows): before = {baseline.parent.parent.resolve()}, after = {ROOT}", separator=", ")
    print(f"{'run':<5}{'tree':<8}{'moves/s':>9}{'CPU µs/move':>13}{'relay msg/s':>13}{'relay CPU µs':>14}"
          f"{'CPU ratio':>11}{'throughput':>12}{'load avg':>18}")
    for run in range(1, args.runs + 1):
        for label, script in trees:
            log(f"run {run} of {args.runs}: the {label} tree ({script.parent.parent})")
            figures = one_saturation_run(script, args)
            if figures is None:
                print(f"{run:<5}{label:<8}  (no figures: see the error output)")
                continue
            rate, cpu, relay_rate, relay_cpu = figures
            ratio = cpu / relay_cpu if relay_cpu else float("nan")
            ratios[label].append(ratio)
            print(f"{run:<5}{label:<8}{rate:>9.0f}{cpu * 1000:>13.1f}{relay_rate:>13.0f}{relay_cpu * 1000:>14.1f}"
                  f"{ratio:>10.2f}x{rate / relay_rate if relay_rate else float('nan'):>12.0%}{loadavg():>18}")
            sys.stdout.flush()
    print("\nPlyhall server CPU a move / relay server CPU a message (the goal: at most 2x in every run):")
    for label, values in ratios.items():
        if values:
            print(f"  {label:<7} {', '.join(f'{v:.2f}' for v in values)}: range {min(values):.2f}-{max(values):.2f}x, "
                  f"median {statistics.median(values):.2f}x")
        else:
            print(f"  {label:<7} no run gave figures")
    return 0 if all(ratios.values()) else 1


SCALE_CPU_ROW = "server CPU / load processes CPU"
SCALE_MOVE_ROW = "server CPU a move (µs)"
SCALE_P99_ROW = "move relay latency p99 (ms)"
SCALE_GOAL = 0.60
"""The scale phase's goal (issue 44): 5,000 games with their spectators under 60% of a core."""


def scale_table_figures(text: str) -> tuple[float, float, float]:
    """The server's share of a core, its CPU µs a move and the p99 latency in ms, read from a scale table as
    :func:`print_scale` prints it (in any tree that prints these three rows)."""
    found = table_rows(text, (SCALE_CPU_ROW, SCALE_MOVE_ROW, SCALE_P99_ROW), "scale")
    return (float(found[SCALE_CPU_ROW][0].rstrip("%")) / 100, float(found[SCALE_MOVE_ROW][0]),
            float(found[SCALE_P99_ROW][0]))


def one_scale_run(script: Path, args: argparse.Namespace) -> tuple[float, float, float] | None:
    """One scale phase by ``script`` (a tree's own server_load.py) in a process of its own; its three figures, or
    None (with its error output shown) when it printed no table."""
    return run_tree(script, args, ["--only", "scale", "--games", str(args.games), "--spectators", str(args.spectators),
                                   "--scale-seconds", str(args.scale_seconds), "--jitter", str(args.jitter),
                                   "--scale-procs", str(args.scale_procs), "--seed", str(args.seed)],
                    scale_table_figures)


def compare_scale(args: argparse.Namespace, baseline: Path | None) -> int:
    """The scale phase ``--runs`` times with each tree, alternating, the baseline first (or with this tree alone):
    every run's share of a core, CPU a move and p99, and each tree's medians, ranges and runs under the goal."""
    this = Path(__file__).resolve()
    trees = [("this", this)] if baseline is None else [("before", baseline.resolve()), ("after", this)]
    runs: dict[str, list[tuple[float, float, float] | None]] = {label: [] for label, _ in trees}
    which = "this tree" if baseline is None else f"two trees alternately: before = {baseline.parent.parent.resolve()}"
    heading(f"Scale, {which} ({args.runs} runs{' each' if baseline else ''}, {args.games} games x (2 players + "
            f"{args.spectators} spectators), {args.scale_seconds:g} s windows{', pinned' if args.pin else ''})"
            + ("" if baseline is None else f", after = {ROOT}"), separator=", ")
    print(f"{'run':<5}{'tree':<8}{'% of a core':>12}{'CPU µs/move':>13}{'p99 ms':>9}{'started':>10}{'load avg':>18}")
    for run in range(1, args.runs + 1):
        for label, script in trees:
            log(f"run {run} of {args.runs}: the {label} tree ({script.parent.parent})")
            started = time.strftime("%H:%M:%S")
            figures = one_scale_run(script, args)
            runs[label].append(figures)
            if figures is None:
                print(f"{run:<5}{label:<8}  (no figures: see the error output)")
                continue
            share, cpu, p99 = figures
            print(f"{run:<5}{label:<8}{share:>12.0%}{cpu:>13.0f}{p99:>9.1f}{started:>10}{loadavg():>18}")
            sys.stdout.flush()
    print(f"\nThe server's share of a core (the goal: under {SCALE_GOAL:.0%}), its CPU a move, p99:")
    for label, made in runs.items():
        values = [figures for figures in made if figures is not None]
        if not values:
            print(f"  {label:<7} no run gave figures")
            continue
        shares, cpus, p99s = zip(*values, strict=True)
        under = sum(share < SCALE_GOAL for share in shares)
        print(f"  {label:<7} median {statistics.median(shares):.0%} ({min(shares):.0%}-{max(shares):.0%}), under "
              f"{SCALE_GOAL:.0%} in {under} of {len(values)}; median {statistics.median(cpus):.0f} µs a move "
              f"({min(cpus):.0f}-{max(cpus):.0f}); p99 {min(p99s):.1f}-{max(p99s):.1f} ms")
    pairs = [] if baseline is None else [
        (before, after) for before, after in zip(runs["before"], runs["after"], strict=True)
        if before is not None and after is not None]  # a run without figures leaves its pair out
    if pairs:
        cheaper = sum(after[1] < before[1] for before, after in pairs)
        change = statistics.mean(after[1] - before[1] for before, after in pairs)
        print(f"  after - before, pair by pair: {change:+.1f} µs a move on average; the after tree the cheaper in "
              f"{cheaper} of {len(pairs)}")
    return 0 if all(None not in made for made in runs.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
