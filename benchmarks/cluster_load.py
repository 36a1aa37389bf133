"""Cluster load: what a second node adds, what forwarding through Redis costs, and how fast a dead node's games
go on elsewhere.

    .venv/bin/python benchmarks/cluster_load.py                     # all three parts, defaults (about 3 minutes)
    .venv/bin/python benchmarks/cluster_load.py --quick             # a smoke run of everything (about a minute)
    .venv/bin/python benchmarks/cluster_load.py --only saturation --rooms 100 --seconds 10
    .venv/bin/python benchmarks/cluster_load.py --only latency --games 1000 --seconds 10
    .venv/bin/python benchmarks/cluster_load.py --only failover --kills 10

One invocation starts its own throwaway PostgreSQL (tests/pg_cluster.py: fsync off) and Redis
(tests/redis_server.py), and real ``plyhall serve --cluster redis://... --db postgresql://... --node nN``
processes on free loopback ports (common.py's ``Server``): a fresh database and an emptied Redis for
every configuration. Every process it starts is stopped at the end, also after an error or Ctrl-C.
The load processes are benchmarks/server_load.py's (raw websockets + msgpack, uvloop), with each
table's parties placed on the nodes as the configuration says.

* Saturation (as server_load.py's): ``--rooms`` Connect Four rooms (a long series each, a day a move)
  whose two players answer every move at once with a random legal move, for ``--seconds``. Moves a
  second, and CPU a move (µs: /proc CPU time over the window divided by the moves) of the node
  processes, of PostgreSQL (every backend) and of Redis, in four configurations: one server without
  ``--cluster``; (a) one node; (b) two nodes, both players of a game on the node of its room; (c) two
  nodes, every game's players on different nodes (the room on one, the other player's requests and
  messages forwarded through Redis). Prints (b)/(a) (the goal: 1.5x on two cores when games are
  node-local) and what forwarding adds to a move ((c) against (b)).
* Latency (as server_load.py's scale phase): ``--games`` games with one spectator each, bots thinking
  about a second a move; relay latency p50/p99 (the mover sends, the opponent receives ``moved``:
  one process, one clock) on one node, and on two nodes with each game's players on different nodes
  (the spectator on either, alternately); Redis PUBLISH calls (``INFO commandstats``) and commands a
  move.
* Failover: ``--kills`` times, on two nodes, ``--failover-games`` games whose rooms the victim owns
  (a client on it creates them) play at about 20 moves a second; both players of every other game
  are connected to the other node, and in the rest one player is on the victim. The victim is
  SIGKILLed; the players on it reconnect through the other node with their resume token. Prints
  the seconds from the kill to the first ``moved`` of an adopted game (one that arrives after a
  ``game_start`` the adopting node sent), to every game moving again, and to the lease lapse and the
  adoption as the survivor's log has them. The victim is started again (same ``--node``) after
  each kill, and the nodes take turns to die. At the end the moves every player was told of
  (``moved``, and ``game_start``'s move lists) are compared, game by game, with the moves stored in
  PostgreSQL (``GET /api/games/ID`` on a live node): mismatches should be 0.

Progress goes to stderr, the tables to stdout, and at the end the warnings and errors the nodes
logged. A benchmark prints figures; it passes or fails nothing. The nodes, PostgreSQL, Redis and the
load processes all share this machine's CPUs, so the figures say as much about the machine as about
the cluster.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import contextvars
import itertools
import json
import multiprocessing as mp
import queue
import random
import signal
import statistics
import sys
import threading
import time
import traceback
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import redis
import server_load  # benchmarks/ is on sys.path when run as a script; it imports common (the checkout on sys.path)
from common import CLK_TCK, Server, heading, log, percentiles, script_parser, table_header

from client.sdk import Client
from protocol.games import get_game
from tests.pg_cluster import Cluster
from tests.redis_server import RedisServer

GAME = get_game("connect4")
SATURATION_ROOM = {"time_control": {"per_move": 86400}, "games": 1000}  # server_load.py's saturation rooms
LATENCY_ROOM = {"time_control": {"per_move": 60}, "games": 1000}  # ... and its scale phase's
FAILOVER_ROOM = {"time_control": {"per_move": 60}, "games": 1000, "grace": 60}
FAILOVER_THINK = 0.05  # seconds a failover player waits before each move
FAILOVER_TIMEOUT = 30.0  # seconds a kill's games may take to move again before the kill counts as failed
EXPECTED = ("stopped renewing its lease", "adopted ")  # warnings a kill is meant to cause
LOGIN_CHECKS = 60  # tables set up at once by all load processes together: on a shared database every new name is
# looked up there, and a node answers `busy` to the 65th login under way from one address (LoginLimits)


# Nodes, PostgreSQL and Redis --------------------------------------------------------------------------


class Node(Server):
    """A ``plyhall serve`` node (common.py's Server) whose log (stderr) is read as it comes, so that a chatty
    node never blocks on a full pipe, and kept in ``lines``."""

    def __init__(self, name: str, db: str, *extra: str) -> None:
        self.name = name
        self.extra = extra
        self.lines: list[tuple[float, str]] = []  # (when read, line)
        super().__init__(db, "--node", name, *extra)
        self._drain()

    def _drain(self) -> None:
        threading.Thread(target=self._read, args=(self.process,), daemon=True).start()

    def _read(self, process: Any) -> None:
        for raw in process.stderr:
            self.lines.append((time.time(), raw.decode(errors="replace").rstrip()))

    def restart(self, *extra: str) -> float:
        took = super().restart("--node", self.name, *(extra or self.extra))
        self._drain()
        return took

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it is not gone within its stop timeout."""
        try:
            super().stop()
        except Exception:
            self.kill()

    def get(self, path: str, timeout: float = 30) -> Any:
        """The JSON answer of the node's HTTP ``path``."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=timeout) as resp:
            return json.loads(resp.read())


def logged_at(line: str) -> float | None:
    """The time (epoch seconds) at the start of a node's log line, if it has one."""
    try:
        return datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").timestamp()
    except ValueError:
        return None


def stat_fields(pid: int) -> list[str]:
    """The fields of /proc/PID/stat after the command name (field 3, the state, first)."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds of a process, its live children, and the children it has reaped (PostgreSQL's backends)."""
    total = 0.0
    for path in Path("/proc").glob("[0-9]*"):
        try:
            fields = stat_fields(int(path.name))
        except (OSError, ValueError, IndexError):
            continue
        pid, parent = int(path.name), int(fields[1])
        if pid == root:
            total += sum(int(x) for x in fields[11:15]) / CLK_TCK  # its own time and its reaped children's
        elif parent == root:
            total += (int(fields[11]) + int(fields[12])) / CLK_TCK
    return total


def machine_busy_seconds() -> float:
    """CPU seconds every process of the machine has used so far (all CPUs; /proc/stat)."""
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:9]]
    return (sum(ticks) - ticks[3] - ticks[4]) / CLK_TCK  # all but idle and iowait


class Backing:
    """The throwaway PostgreSQL and Redis of the whole run, and the nodes of the configuration being measured."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.nodes: list[Node] = []
        self.logs: list[tuple[str, str, str]] = []  # (configuration, node, line) of every node that has stopped
        self.label = ""
        self.failures: list[str] = []  # configurations that could not be measured
        self.redis = RedisServer()
        self.pg: Cluster | None = None
        try:
            self.redis.start()
            self.pg = Cluster()
        except BaseException:
            self.close()
            raise
        self.client = redis.Redis.from_url(self.redis.url)
        self.db = ""

    def start(self, label: str, count: int, cluster: bool = True) -> list[Node]:
        """``count`` nodes on a fresh database and an empty Redis; once every node sees all of them live."""
        assert self.pg is not None and not self.nodes
        self.label = label
        self.db = self.pg.new_database()
        self.redis.flushall()
        flags = ["--rate-limit", "100000", "--http-rate", "0", "--max-connections-per-address", "0",
                 "--max-opening-per-address", "0",
                 "--max-rooms-per-address", "0", "--max-rooms-per-name", "1000",
                 "--max-rooms", str(max(5000, 2 * self.args.games))]
        if self.args.event_loop:
            flags += ["--event-loop", self.args.event_loop]
        for number in range(1, count + 1):
            name = f"n{number}" if cluster else "solo"
            self.nodes.append(Node(name, self.db, *flags, *(["--cluster", self.redis.url] if cluster else [])))
            log(f"{label}: node {name} started on port {self.nodes[-1].port} in {self.nodes[-1].start_seconds:.1f} s")
        if cluster:
            self.wait_live()
        return self.nodes

    def wait_live(self, timeout: float = 30.0) -> None:
        """Until every node's /healthz lists every node as live, with Redis up."""
        names = sorted(node.name for node in self.nodes)
        deadline = time.monotonic() + timeout
        while True:
            try:
                views = [node.get("/healthz", 5).get("cluster", {}) for node in self.nodes]
                if all(v.get("nodes") == names and v.get("redis") == "up" for v in views):
                    return
            except OSError:
                views = []
            if time.monotonic() > deadline:
                raise RuntimeError(f"the nodes do not all see each other within {timeout:g} s: {views}")
            time.sleep(0.1)

    def stop_nodes(self) -> None:
        """Stop every node at once (SIGTERM, then SIGKILL after its stop timeout); keep their logs, each line
        marked ``stopping`` when it came after the SIGTERM."""
        stopping = time.time()
        for node in self.nodes:
            if node.process.poll() is None:
                node.process.terminate()
        for node in self.nodes:
            node.stop()
        time.sleep(0.2)  # the last lines of the logs
        for node in self.nodes:
            label = self.label
            for read, line in node.lines:
                if (logged_at(line) or read) >= stopping:
                    label = f"{self.label}, stopping"
                self.logs.append((label, node.name, line))
        self.nodes = []

    def pids(self) -> list[int]:
        return [node.pid for node in self.nodes]

    def postgres_cpu(self) -> float:
        assert self.pg is not None
        return tree_cpu_seconds(int((self.pg.data / "postmaster.pid").read_text().split()[0]))

    def redis_cpu(self) -> float:
        assert self.redis.proc is not None
        return tree_cpu_seconds(self.redis.proc.pid)

    def redis_counts(self) -> tuple[int, int]:
        """PUBLISH calls and commands Redis has processed so far."""
        publish = self.client.info("commandstats").get("cmdstat_publish", {}).get("calls", 0)
        return publish, self.client.info("stats")["total_commands_processed"]

    def close(self) -> None:
        """Stop every node, then Redis and PostgreSQL (their folders removed)."""
        try:
            self.stop_nodes()
        finally:
            with contextlib.suppress(Exception):
                self.redis.stop()
            if self.pg is not None:
                with contextlib.suppress(Exception):
                    self.pg.destroy()


# Load processes: server_load.py's, each table's parties on the nodes the configuration says ---------


_SEAT: contextvars.ContextVar[tuple[int, int] | None] = contextvars.ContextVar("seat", default=None)


def place(placement: str, table: int, role: int, nodes: int) -> int:
    """The node of party ``role`` (0: the room's creator and first player, 1: the second player, 2...: the
    spectators) of the ``table``-th table. ``local``: all on one node, tables spread over the nodes;
    ``cross``: the second player on the next node, spectators alternately on the room's node and the next."""
    owner = table % nodes
    if placement == "local" or role == 0:
        return owner
    if role == 1:
        return (owner + 1) % nodes
    return (owner + table // nodes + role) % nodes


def placed_open_ws(urls: list[str], placement: str) -> Callable[[str], Any]:
    """server_load.py's ``open_ws`` for ``set_up_table``, which opens a table's connections one after the other
    in one task (creator, second player, spectators): each goes to its party's node."""
    original = server_load.open_ws
    tables = itertools.count()

    async def open_ws(url: str) -> Any:
        current = _SEAT.get()  # the task's table and the last party opened, for the task is the table's
        table, role = (next(tables), 0) if current is None else (current[0], current[1] + 1)
        _SEAT.set((table, role))
        return await original(urls[place(placement, table, role, len(urls))])

    return open_ws


def node_load_main(urls: list[str], placement: str, indexes: list[int], params: dict[str, Any], out: Any,
                   control: Any) -> None:
    """Child process: server_load.py's load process (``play`` mode), its tables placed on the nodes, and set up
    ``params["concurrency"]`` at a time."""
    server_load.open_ws = placed_open_ws(urls, placement)
    server_load.SETUP_CONCURRENCY = params["concurrency"]
    server_load.load_main("play", urls[0], indexes, params, out, control)


class NodeLoad(server_load.LoadProcesses):
    """server_load.py's load processes, on the nodes at ``urls`` as ``placement`` says (see :func:`place`)."""

    def __init__(self, urls: list[str], placement: str, indexes: list[int], procs: int,
                 params: dict[str, Any]) -> None:
        super().__init__("play", urls[0], indexes, 0, params)  # its result queue; the processes are these
        ctx = mp.get_context("spawn")
        self.controls = [ctx.Queue() for _ in range(procs)]
        self.processes = [ctx.Process(target=node_load_main, daemon=True,
                                      args=(urls, placement, indexes[i::procs], params, self.out, control))
                          for i, control in enumerate(self.controls)]

    def start(self, timeout: float) -> list[int]:
        """As LoadProcesses.start, but a load process that dies before it is ready stops the wait at once."""
        for process in self.processes:
            process.start()
        pids: list[int] = []
        deadline = time.monotonic() + timeout
        while len(pids) < len(self.processes):
            try:
                kind, pid = self.out.get(timeout=1.0)
            except queue.Empty:
                dead = [process.exitcode for process in self.processes if process.exitcode is not None]
                if dead or time.monotonic() > deadline:
                    raise RuntimeError(f"the load processes were not ready within {timeout:g} s" if not dead else
                                       f"a load process exited (code {dead[0]}) before its tables were ready "
                                       "(its traceback is above)") from None
                continue
            if kind == "set up":  # a load process's progress through its set-up (server_load.py reports it)
                continue
            assert kind == "ready", kind
            pids.append(pid)
        return pids

    def stop(self) -> None:
        for process in self.processes:
            if process.is_alive():
                process.terminate()
                process.join(10)


def readings(backing: Backing, load_pids: list[int]) -> dict[str, Any]:
    publish, commands = backing.redis_counts()
    return {"nodes": [server_load.cpu_seconds(pid) for pid in backing.pids()],
            "wait": [server_load.run_delay(pid) for pid in backing.pids()],
            "postgres": backing.postgres_cpu(), "redis": backing.redis_cpu(), "publish": publish,
            "commands": commands, "load": sum(server_load.cpu_seconds(pid) for pid in load_pids),
            "machine": machine_busy_seconds()}


def run_window(backing: Backing, placement: str, count: int, tables: int, procs: int, params: dict[str, Any],
               warmup: float, seconds: float) -> dict[str, Any]:
    """Set up ``tables`` tables on the running nodes, then measure a window: moves, latencies, the CPU of
    every party, Redis' counts; the figures of the window."""
    urls = [node.url for node in backing.nodes]
    params = {**params, "concurrency": max(1, LOGIN_CHECKS // procs)}
    load = NodeLoad(urls, placement, list(range(tables)), procs, params)
    try:
        began = time.monotonic()
        pids = load.start(timeout=600)
        setup = time.monotonic() - began
        log(f"{backing.label}: {tables} tables ready in {setup:.1f} s; measuring {seconds:g} s "
            f"(load {server_load.loadavg()})")
        start = time.monotonic() + warmup
        end = start + seconds
        load.window(start, end)
        time.sleep(max(0.0, start - time.monotonic()))
        before = readings(backing, pids)
        time.sleep(max(0.0, end - time.monotonic()))
        after = readings(backing, pids)
        rss = [server_load.memory_kb(pid).get("VmRSS", 0) / 1024 for pid in backing.pids()]
        results = load.results(timeout=params.get("tail", 0.0) + 120)
    finally:
        load.stop()
    moves = sum(r["moves"] for r in results)
    spent = {key: after[key] - before[key] for key in ("postgres", "redis", "publish", "commands", "load", "machine")}
    node_cpu = [a - b for a, b in zip(after["nodes"], before["nodes"], strict=True)]
    waits = [(a - b) / seconds for a, b in zip(after["wait"], before["wait"], strict=True)]
    per = max(1, moves)
    figures = {
        "nodes": count, "moves": moves, "rate": moves / seconds, "setup": setup, "seconds": seconds,
        "node_us": sum(node_cpu) / per * 1e6, "pg_us": spent["postgres"] / per * 1e6,
        "redis_us": spent["redis"] / per * 1e6, "node_cpu": [c / seconds for c in node_cpu], "waits": waits,
        "pg_cpu": spent["postgres"] / seconds, "redis_cpu": spent["redis"] / seconds,
        "load_cpu": spent["load"] / seconds, "loadavg": server_load.loadavg(),
        "others_cpu": (spent["machine"] - sum(node_cpu) - spent["postgres"] - spent["redis"] - spent["load"]) / seconds,
        "publish": spent["publish"] / per, "commands": spent["commands"] / per,
        "errors": sum(r["errors"] for r in results), "games": sum(r["games"] for r in results), "rss": rss,
        "latency": percentiles(sorted(x for r in results for x in r["latencies"])),
        "spectator_latency": percentiles(sorted(x for r in results for x in r["spectator_latencies"])),
        "connections": sum(r["connections"] for r in results),
    }
    figures["total_us"] = figures["node_us"] + figures["pg_us"] + figures["redis_us"]
    return figures


# Saturation and latency -------------------------------------------------------------------------------

SATURATION = [  # (key, label, nodes, --cluster, placement)
    ("solo", "one server, no --cluster", 1, False, "local"),
    ("a", "(a) one node", 1, True, "local"),
    ("b", "(b) two nodes, node-local games", 2, True, "local"),
    ("c", "(c) two nodes, players on different nodes", 2, True, "cross"),
]
LATENCY = [("one", "one node", 1, "local"), ("cross", "two nodes, players on different nodes", 2, "cross")]


def saturation(args: argparse.Namespace, backing: Backing) -> dict[str, dict[str, Any]]:
    params = {"seed": args.seed, "think": (0.0, 0.0), "spectators": 0, "tag": "sat", "room": SATURATION_ROOM}
    found = {}
    for key, label, count, cluster, placement in SATURATION:
        try:
            backing.start(f"saturation {label}", count, cluster)
            found[key] = run_window(backing, placement, count, args.rooms, args.load_procs, params, 1.0, args.seconds)
        except Exception:
            log(f"saturation {label} failed:\n{traceback.format_exc()}")
            backing.failures.append(f"saturation {label}")
            continue
        finally:
            backing.stop_nodes()
        log(f"saturation {label}: {found[key]['rate']:.0f} moves/s, {found[key]['node_us']:.0f} µs of node CPU "
            f"a move (load {server_load.loadavg()})")
    return found


def latency(args: argparse.Namespace, backing: Backing) -> dict[str, dict[str, Any]]:
    params = {"seed": args.seed, "think": (0.75, 1.25), "spectators": 1, "tag": "lat", "tail": 2.0,
              "room": LATENCY_ROOM}
    found = {}
    for key, label, count, placement in LATENCY:
        try:
            backing.start(f"latency {label}", count)
            found[key] = run_window(backing, placement, count, args.games, args.scale_procs, params, 3.0,
                                    args.seconds)
        except Exception:
            log(f"latency {label} failed:\n{traceback.format_exc()}")
            backing.failures.append(f"latency {label}")
            continue
        finally:
            backing.stop_nodes()
        lat = found[key]["latency"]
        log(f"latency {label}: p50 {lat['p50']:.2f} ms, p99 {lat['p99']:.2f} ms (load {server_load.loadavg()})")
    return found


# Failover -----------------------------------------------------------------------------------------------


class Book:
    """The moves the players were told of, by game record: seq -> notation (two players who were told
    different moves under one number make a conflict)."""

    def __init__(self) -> None:
        self.moves: dict[str, dict[int, str]] = {}
        self.conflicts = 0

    def saw(self, record: str, pairs: Any) -> None:
        moves = self.moves.setdefault(record, {})
        for seq, notation in pairs:
            if moves.setdefault(seq, notation) != notation:
                self.conflicts += 1


@dataclass
class Kill:
    """One kill as the players saw it (monotonic times)."""

    victim: str
    survivor: str
    at: float = 0.0  # the SIGKILL (0 before it)
    at_wall: float = 0.0
    adopted: dict[str, float] = field(default_factory=dict)  # room -> its first game_start (not paused) after it
    moved: dict[str, float] = field(default_factory=dict)  # room -> its first moved after that


class FailoverPlayer:
    """One player of a failover game: a random legal move after FAILOVER_THINK whenever it is to move; when its
    connection drops, it logs in again through another node (then the same one) with its resume token."""

    def __init__(self, name: str, room: str, seat: int, urls: list[str], kill: Kill, book: Book,
                 rng: random.Random) -> None:
        self.name, self.room, self.seat, self.urls = name, room, seat, urls
        self.kill, self.book, self.rng = kill, book, rng
        self.client: Client | None = None
        self.node = 0
        self.token: str | None = None
        self.state: Any = None
        self.to_move: int | None = None
        self.paused = False
        self.record = ""
        self.turn = 0  # bumped by every message that changes whose move it is: a timer of an older turn is void
        self.stopping = False  # no more moves (the messages are still recorded)
        self.reconnects = 0
        self.errors: Counter[str] = Counter()
        self.tasks: set[asyncio.Task] = set()

    async def connect(self, node: int) -> None:
        client = Client(self.urls[node])
        await client.connect(open_timeout=5)
        try:
            await client.login(self.name, secret=f"pw-{self.name}", resume=self.token)
        except BaseException:
            await client.close()
            raise
        self.client, self.node, self.token = client, node, client.resume

    async def run(self) -> None:
        while True:
            assert self.client is not None
            try:
                msg = await self.client.recv(timeout=None)
            except ConnectionError:
                if self.stopping:
                    return
                await self.reconnect()
                continue
            self.on_message(msg, time.monotonic())

    async def reconnect(self) -> None:
        self.reconnects += 1
        order = [n for n in range(len(self.urls)) if n != self.node] + [self.node]
        delay = 0.05
        while not self.stopping:
            for node in order:
                try:
                    await self.connect(node)
                    return
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    self.errors[f"reconnect: {type(exc).__name__}: {str(exc)[:60]}"] += 1
            await asyncio.sleep(delay)
            delay = min(0.5, 2 * delay)

    def on_message(self, msg: dict[str, Any], now: float) -> None:
        kind = msg.get("type")
        if kind == "error":
            self.errors[str(msg.get("code"))] += 1
        if msg.get("room") != self.room:
            return
        if kind == "game_start":
            self.record = msg["record"]
            self.book.saw(self.record, enumerate(msg["moves"], 1))
            self.state = GAME.decode_state(msg["state"], "algebraic")
            self.to_move, self.paused = msg["to_move"], bool(msg.get("paused"))
            if self.kill.at and not self.paused:
                self.kill.adopted.setdefault(self.room, now)
        elif kind == "moved" and self.state is not None:
            self.book.saw(self.record, [(msg["seq"], msg["notation"])])
            self.state = GAME.apply(self.state, GAME.parse_move(msg["notation"], self.state))
            self.to_move = msg["to_move"]
            if self.room in self.kill.adopted:
                self.kill.moved.setdefault(self.room, now)
        else:
            return
        self.turn += 1
        if not self.stopping and not self.paused and self.to_move == self.seat:
            asyncio.get_running_loop().call_later(FAILOVER_THINK, self.move, self.turn)

    def move(self, turn: int) -> None:
        if turn != self.turn or self.stopping or self.client is None:
            return
        notation = GAME.notation(self.rng.choice(GAME.legal_moves(self.state)))
        task = asyncio.create_task(self.send({"type": "move", "room": self.room, "move": notation}))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def send(self, msg: dict[str, Any]) -> None:
        try:
            assert self.client is not None
            await self.client.send(msg)
        except Exception:  # the connection is gone: run() reconnects, and the game_start that follows says to move
            pass

    async def leave(self) -> None:
        with contextlib.suppress(Exception):
            assert self.client is not None
            await self.client.request({"type": "leave", "room": self.room}, timeout=5, check=False)

    async def close(self) -> None:
        if self.client is not None:
            with contextlib.suppress(Exception):
                await self.client.close()


def log_offsets(node: Node, since: float) -> dict[str, float]:
    """Seconds from ``since`` (wall clock) to the first lease lapse and adoption the node logged after it."""
    found: dict[str, float] = {}
    for _, line in list(node.lines):
        at = logged_at(line)
        for key, text in (("lapse", EXPECTED[0]), ("adopted", EXPECTED[1])):
            if text in line and key not in found and at is not None and at >= since - 0.01:
                found[key] = at - since
    return found


async def failover_kill(number: int, args: argparse.Namespace, backing: Backing, book: Book,
                        rng: random.Random) -> dict[str, Any]:
    """One kill: set up the games on the victim, play, SIGKILL it, wait for every game to move again, end the
    games, start the victim again."""
    nodes = backing.nodes
    victim, survivor = number % 2, 1 - number % 2
    kill = Kill(nodes[victim].name, nodes[survivor].name)
    urls = [node.url for node in nodes]
    host = Client(urls[victim])
    await host.connect(open_timeout=10)
    await host.login(f"host{number}")
    rooms = [f"fo{number}-{i}" for i in range(args.failover_games)]
    players: list[FailoverPlayer] = []
    tasks: list[asyncio.Task] = []
    try:
        for i, room in enumerate(rooms):
            await host.request({"type": "create_room", "game": "connect4", "name": room, **FAILOVER_ROOM})
            for seat in (0, 1):
                player = FailoverPlayer(f"fo{number}-{i}-{seat}", room, seat, urls, kill, book, rng)
                await player.connect(victim if seat == 0 and i % 2 else survivor)
                assert player.client is not None
                await player.client.request({"type": "join", "room": room, "seat": seat})
                players.append(player)
        tasks = [asyncio.create_task(player.run()) for player in players]
        await asyncio.sleep(1.0 + rng.random())
        kill.at_wall, kill.at = time.time(), time.monotonic()
        nodes[victim].kill()
        while len(kill.moved) < len(rooms) and time.monotonic() < kill.at + FAILOVER_TIMEOUT:
            await asyncio.sleep(0.01)
        firsts = sorted(at - kill.at for at in kill.moved.values())
        await asyncio.sleep(0.5)  # play on a little after the last game moved again
        for player in players:
            player.stopping = True
        await asyncio.sleep(0.3)  # the moves under way arrive
        for player in players:
            await player.leave()
    finally:
        for player in players:
            player.stopping = True
            await player.close()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(Exception):
            await host.close()
    offsets = log_offsets(nodes[survivor], kill.at_wall)
    back = await asyncio.to_thread(nodes[victim].restart)
    await asyncio.to_thread(backing.wait_live)
    result = {
        "victim": kill.victim, "survivor": kill.survivor, "first": firsts[0] if firsts else None,
        "all": firsts[-1] if len(firsts) == len(rooms) else None, "resumed": len(firsts), "games": len(rooms),
        "lapse": offsets.get("lapse"), "adopted": offsets.get("adopted"), "back": back,
        "reconnects": sum(p.reconnects for p in players),
        "errors": sum((p.errors for p in players), Counter()),
    }
    first = "none" if result["first"] is None else f"{result['first']:.2f} s"
    log(f"failover: kill {number + 1}/{args.kills} of {kill.victim}: first adopted move after {first}, "
        f"{len(firsts)}/{len(rooms)} games moving again; {kill.victim} back in {back:.1f} s")
    return result


def compare(book: Book, node: Node) -> dict[str, Any]:
    """The announced moves against the stored ones, game by game."""
    told = stored = lost = different = unannounced = games_off = missing = 0
    for record, moves in book.moves.items():
        try:
            kept = {int(m["seq"]): m["move"] for m in node.get(f"/api/games/{record}")["moves"]}
        except urllib.error.HTTPError as exc:
            if exc.code != 404:  # a refusal (e.g. 429 of the HTTP rate limit) says nothing about what was stored
                raise RuntimeError(f"failover: GET /api/games/{record} answered {exc.code} {exc.reason}: the "
                                   "comparison cannot say whether that game was stored") from exc
            missing += 1
            kept = {}
        told += len(moves)
        stored += len(kept)
        lost += sum(1 for seq in moves if seq not in kept)
        different += sum(1 for seq, move in moves.items() if seq in kept and kept[seq] != move)
        unannounced += sum(1 for seq in kept if seq not in moves)
        games_off += moves != kept
    return {"games": len(book.moves), "told": told, "stored": stored, "lost": lost, "different": different,
            "unannounced": unannounced, "games_off": games_off, "missing": missing, "conflicts": book.conflicts,
            "mismatches": lost + different + unannounced + book.conflicts}


def failover(args: argparse.Namespace, backing: Backing) -> dict[str, Any]:
    backing.start("failover", 2)
    rng = random.Random(args.seed)
    book = Book()

    async def kills() -> list[dict[str, Any]]:
        return [await failover_kill(number, args, backing, book, rng) for number in range(args.kills)]

    try:
        rows = asyncio.run(kills())
        log(f"failover: comparing the moves of {len(book.moves)} games with PostgreSQL")
        checked = compare(book, backing.nodes[0])
    finally:
        backing.stop_nodes()
    return {"kills": rows, "check": checked}


# Output ---------------------------------------------------------------------------------------------------


def print_saturation(args: argparse.Namespace, found: dict[str, dict[str, Any]]) -> None:
    heading(f"Saturation: {args.rooms} connect4 rooms whose players answer at once, {args.seconds:g} s window, "
            f"{args.load_procs} load process(es); PostgreSQL 15 (fsync off) and Redis on this machine", ", ")
    table_header(f"{'configuration':<44}{'moves/s':>9}{'x (a)':>7}{'node µs':>9}{'PG µs':>8}{'Redis µs':>9}"
                 f"{'all µs':>8}{'PUBLISH':>9}{'node CPU':>10}{'PG CPU':>8}{'load CPU':>9}{'others':>8}{'errors':>7}")
    base = found.get("a", {}).get("rate")
    for key, label, _, _, _ in SATURATION:
        if key not in found:
            continue
        f = found[key]
        ratio = f"{f['rate'] / base:.2f}" if base else "-"
        cpu = "+".join(f"{c:.0%}" for c in f["node_cpu"])
        print(f"{label:<44}{f['rate']:>9.0f}{ratio:>7}{f['node_us']:>9.0f}{f['pg_us']:>8.0f}{f['redis_us']:>9.1f}"
              f"{f['total_us']:>8.0f}{f['publish']:>9.2f}{cpu:>10}{f['pg_cpu']:>8.0%}{f['load_cpu']:>9.0%}"
              f"{f['others_cpu']:>8.0%}{f['errors']:>7}")
    print("(µs: CPU a move of the node processes, of PostgreSQL's processes, of redis-server, and of all three; "
          "PUBLISH: Redis PUBLISH calls a move; CPU: share of one core over the window; others: CPU of every other "
          "process on the machine meanwhile)")
    if "a" in found and "b" in found:
        ratio = found["b"]["rate"] / found["a"]["rate"]
        verdict = "meets" if ratio >= 1.5 else "misses"
        print(f"(b)/(a) moves a second: {ratio:.2f}x ({verdict} the 1.5x goal; the load generator, PostgreSQL and "
              f"Redis share the same 2 cores: the load processes took {found['b']['load_cpu']:.0%} of a core and "
              f"PostgreSQL {found['b']['pg_cpu']:.0%} in (b))")
    if "b" in found and "c" in found:
        b, c = found["b"], found["c"]
        print(f"forwarding through Redis, (c) against (b): node CPU {c['node_us'] - b['node_us']:+.0f} µs a move "
              f"({c['node_us'] / b['node_us'] - 1:+.0%}), Redis {c['redis_us'] - b['redis_us']:+.1f} µs, all server "
              f"processes {c['total_us'] - b['total_us']:+.0f} µs ({c['total_us'] / b['total_us'] - 1:+.0%}); "
              f"moves a second {c['rate'] / b['rate'] - 1:+.0%}")
    waits = "; ".join(f"{key}: " + "+".join(f"{w:.0%}" for w in found[key]["waits"])
                      for key, _, _, _, _ in SATURATION if key in found)
    print(f"share of the window each node's event loop waited for a CPU: {waits}")
    print("load average at the end of each window: " + "; ".join(f"{key}: {found[key]['loadavg']}"
                                                                 for key, _, _, _, _ in SATURATION if key in found))


def print_latency(args: argparse.Namespace, found: dict[str, dict[str, Any]]) -> None:
    heading(f"Latency: {args.games} games x (2 players + 1 spectator), bots thinking 0.75-1.25 s, "
            f"{args.seconds:g} s window, {args.scale_procs} load processes", ", ")
    keys = [key for key, _, _, _ in LATENCY if key in found]
    labels = {key: label for key, label, _, _ in LATENCY}
    table_header(f"{'figure':<40}" + "".join(f"{labels[k]:>40}" for k in keys))

    def row(name: str, show: Callable[[dict[str, Any]], str]) -> None:
        print(f"{name:<40}" + "".join(f"{show(found[k]):>40}" for k in keys))

    row("connections", lambda f: f"{f['connections']} (set up in {f['setup']:.0f} s)")
    row("moves a second", lambda f: f"{f['rate']:.0f}")
    row("relay latency p50 / p99 / max (ms)",
        lambda f: f"{f['latency']['p50']:.2f} / {f['latency']['p99']:.2f} / {f['latency']['max']:.1f}")
    row("  samples", lambda f: f"{f['latency']['n']}")
    row("spectator latency p50 / p99 (ms)",
        lambda f: f"{f['spectator_latency']['p50']:.2f} / {f['spectator_latency']['p99']:.2f}")
    row("node CPU a move (µs)", lambda f: f"{f['node_us']:.0f}")
    row("PostgreSQL / Redis CPU a move (µs)", lambda f: f"{f['pg_us']:.0f} / {f['redis_us']:.1f}")
    row("node CPU (share of a core, each node)", lambda f: " + ".join(f"{c:.0%}" for c in f["node_cpu"]))
    row("Redis PUBLISH calls a move", lambda f: f"{f['publish']:.2f}")
    row("Redis commands a move", lambda f: f"{f['commands']:.2f}")
    row("load processes / other processes' CPU", lambda f: f"{f['load_cpu']:.0%} / {f['others_cpu']:.0%}")
    row("node RSS at the end (MB, each node)", lambda f: " + ".join(f"{r:.0f}" for r in f["rss"]))
    row("games started in the window / errors", lambda f: f"{f['games']} / {f['errors']}")


def print_failover(args: argparse.Namespace, found: dict[str, Any]) -> None:
    rows, check = found["kills"], found["check"]
    heading(f"Failover: {args.kills} SIGKILLs of a node of two, {args.failover_games} games owned by the victim "
            "(both players on the other node in every other game, one player on the victim in the rest), "
            f"about {1 / FAILOVER_THINK:.0f} moves a second each", ", ")
    table_header(f"{'kill':<6}{'victim':<8}{'lease lapse':>12}{'adopted':>9}{'first move':>12}{'all moving':>12}"
                 f"{'resumed':>9}{'reconnects':>12}{'node back':>11}")

    def sec(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    for number, r in enumerate(rows, 1):
        print(f"{number:<6}{r['victim']:<8}{sec(r['lapse']):>12}{sec(r['adopted']):>9}{sec(r['first']):>12}"
              f"{sec(r['all']):>12}{r['resumed']:>5}/{r['games']:<3}{r['reconnects']:>12}{r['back']:>11.2f}")
    for key, name in (("first", "first adopted move"), ("all", "every game moving")):
        values = [r[key] for r in rows if r[key] is not None]
        if values:
            print(f"{name} after the kill (s): mean {statistics.mean(values):.2f}, max {max(values):.2f}, "
                  f"min {min(values):.2f} ({len(values)} of {len(rows)} kills)")
    failed = [n for n, r in enumerate(rows, 1) if r["all"] is None]
    if failed:
        print(f"KILLS WHOSE GAMES DID NOT ALL MOVE AGAIN WITHIN {FAILOVER_TIMEOUT:g} s: {failed}")
    print("(seconds after the SIGKILL; lease lapse and adopted: the survivor's log; first move: the first `moved` of "
          "an adopted game, after the game_start the adopter sent, the player's "
          f"{FAILOVER_THINK:g} s think included; node back: the victim's restart)")
    errors = sum((r["errors"] for r in rows), Counter())
    if errors:
        print("what the players were told or met meanwhile: " + ", ".join(f"{k} x{v}" for k, v in errors.most_common()))
    print(f"moves announced to the players / stored in PostgreSQL: {check['told']} / {check['stored']} "
          f"in {check['games']} games")
    print(f"MISMATCHES: {check['mismatches']} (announced, not stored {check['lost']}; stored differently "
          f"{check['different']}; stored, never announced {check['unannounced']}; players told different moves "
          f"{check['conflicts']}); games whose lists differ {check['games_off']}, games not found "
          f"{check['missing']}")


def print_logs(backing: Backing) -> None:
    """How much the nodes logged, and every line a run should not cause: anything but the lease lapses and
    adoptions of the failover part and of the nodes' stops (a node that stops lets its lease lapse; another
    node, stopping or not yet, may adopt its rooms then)."""
    counts = Counter((label, level) for label, _, line in backing.logs
                     for level in ("WARNING", "ERROR", "CRITICAL") if f" {level} " in line)
    odd = [(label, node, line) for label, node, line in backing.logs if line.strip() and not (
        any(text in line for text in EXPECTED) and (label.startswith("failover") or label.endswith("stopping")))]
    print(f"\nNode logs (--quiet: warnings and errors): {len(backing.logs)} lines; "
          + (", ".join(f"{label}: {n} {level}" for (label, level), n in sorted(counts.items())) or "none"))
    if odd:
        print(f"{len(odd)} line(s) other than the lease lapses and adoptions of kills and stops (first 25):")
        for label, node, line in odd[:25]:
            print(f"  [{label}, {node}] {line[:300]}")


def interrupted(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("--only", action="append", choices=["saturation", "latency", "failover"],
                        help="run this part only (repeatable; default: all three)")
    parser.add_argument("--rooms", type=int, default=100, help="saturation: rooms (default 100)")
    parser.add_argument("--games", type=int, default=1000, help="latency: concurrent games (default 1000)")
    parser.add_argument("--seconds", type=float, default=10.0,
                        help="saturation and latency: seconds measured (default 10)")
    parser.add_argument("--kills", type=int, default=10, help="failover: SIGKILLs (default 10)")
    parser.add_argument("--failover-games", type=int, default=4, help="failover: games a kill (default 4)")
    parser.add_argument("--load-procs", type=int, default=1, help="saturation: load processes (default 1)")
    parser.add_argument("--scale-procs", type=int, default=2, help="latency: load processes (default 2)")
    parser.add_argument("--event-loop", choices=["uvloop", "asyncio"], help="the nodes' (default: plyhall serve's)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 10 rooms, 50 games, 3 s windows, 2 kills of 2 games")
    parser.add_argument("--keep-logs", type=Path, metavar="FILE", help="write every node's log lines to FILE")
    args = parser.parse_args(argv)
    if args.quick:
        args.rooms, args.games, args.seconds, args.kills, args.failover_games = 10, 50, 3.0, 2, 2
    if min(args.rooms, args.games, args.kills, args.failover_games, args.load_procs, args.scale_procs) < 1 or \
            args.seconds <= 0:
        parser.error("the counts must be at least 1 and --seconds positive")
    chosen = args.only or list(PARTS)
    server_load.raise_open_files(20_000)
    signal.signal(signal.SIGTERM, interrupted)  # clean up as after Ctrl-C
    log("starting PostgreSQL and Redis")
    backing = Backing(args)
    try:
        for part, (run, show) in PARTS.items():
            if part not in chosen:
                continue
            try:
                found = run(args, backing)
            except Exception:
                backing.failures.append(part)
                log(f"{part} failed:\n{traceback.format_exc()}")
                backing.stop_nodes()
                continue
            show(args, found)
            sys.stdout.flush()
    finally:
        backing.close()
        if args.keep_logs:
            args.keep_logs.write_text("".join(f"[{label}, {node}] {line}\n" for label, node, line in backing.logs))
    print_logs(backing)
    print("\n(loopback, one machine: the nodes, PostgreSQL, Redis and the load processes share its CPUs)")
    if backing.failures:
        print(f"FAILED: {'; '.join(backing.failures)} (the tracebacks are on stderr)")
    return 1 if backing.failures else 0


PARTS: dict[str, tuple[Callable[[argparse.Namespace, Backing], Any], Callable[[argparse.Namespace, Any], None]]] = {
    "saturation": (saturation, print_saturation), "latency": (latency, print_latency),
    "failover": (failover, print_failover)}


if __name__ == "__main__":
    sys.exit(main())
