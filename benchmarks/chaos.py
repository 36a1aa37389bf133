"""Chaos: a fault matrix for a cluster of real nodes, and the invariants a cluster must keep whatever happens.

    .venv/bin/python benchmarks/chaos.py                                 # every fault, 12 games each, 1 run
    .venv/bin/python benchmarks/chaos.py --games 30 --runs 3             # the full size, three runs in a row
    .venv/bin/python benchmarks/chaos.py --faults node-kill,lock-kill-stall --games 6

One invocation starts a throwaway PostgreSQL (tests/pg_cluster.py, fsync off) and Redis
(tests/redis_server.py) and three real ``plyhall serve --cluster`` nodes on free loopback ports. For
each fault, ``--games`` Connect Four games (60 s a player) are opened, each room on one node and its
two players connected to two different nodes; the players (SDK clients, a random legal move 0.1-0.2 s
after their turn is announced) reconnect with their resume token through another node whenever their
connection ends. A second into play the fault is injected:

  node-kill           SIGKILL a node (started again 4 s later under the same name)
  node-stall          SIGSTOP a node for 5 s (past its 2 s lease), then SIGCONT
  redis-restart       Redis stopped and started again at once (every key lost)
  redis-kill          Redis SIGKILLed, started again 10 s later
  pg-restart          PostgreSQL stopped and started again
  pg-restart-stall    PostgreSQL restarted, then a node stalled 5 s (its lock went with the restart)
  lock-kill-stall     a node SIGSTOPped, its lock's connection terminated (pg_terminate_backend), 5 s, SIGCONT
  workers-kill        the first "node" is ``serve --workers 2`` (nodes w-1 and w-2 sharing a port): one of its
                      children is SIGKILLed (its supervisor starts it again)

then every game is played to its end (or found stuck after ``--settle`` seconds), and the invariants
are checked against the ``moves``, ``games`` and ``rooms`` tables:

  every move a player was told of is stored, once, at its place; no ply was announced two ways;
  every player of a game was told the same result, the stored one; one record a game; no game
  stuck; no room stored under two nodes; no move answered with an error was stored (unless sent
  again); no player lost time to the fault (each seat's stored clock is within 2 s of 60 s minus
  the time its player really thought).

``tests/test_chaos.py`` runs a small size of this on every CI run. Progress goes to stderr, the
table to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path[:1]:
    sys.path.insert(0, str(ROOT))

from client.sdk import Client, ServerError  # noqa: E402
from protocol.games import get_game  # noqa: E402

GAME = get_game("connect4")
CLOCK = 60.0  # seconds a player has for the whole game
STALL = 5.0  # seconds a stalled node stays stopped (past its 2 s lease)
FAULTS = ("node-kill", "node-stall", "redis-restart", "redis-kill", "pg-restart", "pg-restart-stall", "lock-kill-stall",
          "workers-kill")


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Node:
    """One ``plyhall serve`` node process (started again under the same name and port by :meth:`start`)."""

    def __init__(self, name: str, pg_url: str, redis_url: str, log_dir: Path, workers: int = 1) -> None:
        self.name, self.pg_url, self.redis_url, self.workers = name, pg_url, redis_url, workers
        self.port = free_port()
        self.url = f"ws://127.0.0.1:{self.port}/ws"
        self.log = log_dir / f"{name}.log"
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 60) -> None:
        """Start the process; returns once its /healthz answers ok."""
        import json
        import urllib.request

        with open(self.log, "a") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "plyhall", "serve", "--quiet", "--port", str(self.port), "--db", self.pg_url,
                 "--cluster", self.redis_url, "--node", self.name, "--grace", "60", "--workers", str(self.workers)],
                stdout=subprocess.DEVNULL, stderr=log, stdin=subprocess.DEVNULL, cwd=ROOT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"node {self.name} exited at its start: {self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=2) as resp:
                    if json.loads(resp.read())["ok"]:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"node {self.name} did not answer /healthz within {timeout:g} s")

    def children(self) -> list[int]:
        """The process ids of its workers (``--workers``), from /proc."""
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    stat = Path(f"/proc/{entry}/stat").read_text()
                except OSError:
                    continue
                if self.proc is not None and int(stat.rsplit(")", 1)[1].split()[1]) == self.proc.pid:
                    found.append(int(entry))
        return sorted(found)

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the process while it runs."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)

    def stop(self) -> None:
        """End the process (SIGCONT first, should it be stopped; SIGTERM, then SIGKILL)."""
        if self.proc is None:
            return
        self.signal(signal.SIGCONT)
        self.signal(signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@dataclass
class Player:
    """One player of a game, as it saw the game."""

    name: str
    seat: int
    room: str
    urls: list[str]  # the nodes it connects to, its own first
    rng: random.Random
    told: dict[int, str] = field(default_factory=dict)  # seq -> notation of every move it was told of
    conflicts: list[tuple[int, str, str]] = field(default_factory=list)  # a seq told two ways
    sent: list[tuple[int, str, str]] = field(default_factory=list)  # (seq, notation, "ok" or the error code)
    result: tuple[Any, ...] | None = None  # (winner, status, reason) of the game_over it was told
    record: str | None = None  # its game's record id (from game_start)
    thought: float = 0.0  # seconds it really spent on its moves (from being told its turn to sending)
    gaps: list[float] = field(default_factory=list)  # seconds between announcements it saw
    client: Client | None = None
    resume: str | None = None
    started: asyncio.Event = field(default_factory=asyncio.Event)  # its game began (the fault waits for all)


class Game:
    """One game of the matrix: its room on ``owner``, its players on two different nodes."""

    def __init__(self, index: int, run: str, nodes: list[Node], rng: random.Random) -> None:
        count = len(nodes)
        self.room = f"chaos {run} {index}"
        self.owner = nodes[index % count]
        self.nodes = nodes
        self.players = [Player(f"p{run}x{index}a", 0, self.room, _turn(nodes, index), random.Random(rng.random())),
                        Player(f"p{run}x{index}b", 1, self.room, _turn(nodes, index + 1), random.Random(rng.random()))]


def _turn(nodes: list[Node], first: int) -> list[str]:
    return [nodes[(first + k) % len(nodes)].url for k in range(len(nodes))]


async def _connect(player: Player, deadline: float) -> Client:
    """A logged-in client of ``player``: its first node, or the next ones in turn (with its resume token)."""
    attempt = 0
    while True:
        url = player.urls[attempt % len(player.urls)]
        attempt += 1
        client = Client(url, "plyhall.v1.msgpack")
        try:
            await client.connect(open_timeout=3)
            welcome = await client.login(player.name, resume=player.resume)
            player.resume = welcome.get("resume")
            return client
        except Exception:  # refused, a node going down, a name still held: the next node, a moment later
            with contextlib.suppress(Exception):
                await client.close()
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.3)


async def play(player: Player, start: asyncio.Event | None, deadline: float) -> None:
    """Play ``player``'s game to its end (reconnecting whenever its connection ends), until ``deadline``."""
    state = GAME.initial_state()
    last_told = time.monotonic()
    while player.result is None and time.monotonic() < deadline:
        if player.client is None or player.client.closed.is_set():
            player.client = await _connect(player, deadline)
            if start is not None and player.seat == 0:
                await player.client.request({"type": "create_room", "game": "connect4", "name": player.room,
                                             "time_control": {"initial": CLOCK}})
                start.set()
            elif start is not None:
                await start.wait()
            if start is not None:
                await player.client.request({"type": "join", "room": player.room, "seat": player.seat})
                start = None
        try:
            msg = await player.client.recv(timeout=max(0.1, deadline - time.monotonic()))
        except (ConnectionError, TimeoutError):
            continue
        if msg.get("room") != player.room:
            continue
        kind, turn = msg.get("type"), None
        if kind == "game_start":
            player.started.set()
            player.record = msg.get("record", player.record)
            state = GAME.initial_state()
            for seq, notation in enumerate(msg.get("moves", []), start=1):
                _tell(player, seq, notation)
                state = GAME.apply(state, GAME.parse_move(notation, state))
            turn = msg.get("to_move")
        elif kind == "moved":
            now = time.monotonic()
            player.gaps.append(now - last_told)
            last_told = now
            if msg["seq"] not in player.told or player.told[msg["seq"]] == msg["notation"]:
                if msg["seq"] == len(player.told) + 1:
                    state = GAME.apply(state, GAME.parse_move(msg["notation"], state))
            _tell(player, msg["seq"], msg["notation"])
            turn = msg.get("to_move")
        elif kind == "game_over":
            player.result = (msg.get("winner"), msg.get("status"), msg.get("reason"))
            return
        elif kind == "room_state" and player.record is not None and \
                (msg.get("last_result") or {}).get("record") == player.record:
            # the game ended while this player's node could not hear its owner (Redis away): the full state sent
            # when it is attached again tells the result, as a bot reads it (client/play_loop.py, _room_state)
            last = msg["last_result"]
            player.result = (last.get("winner"), last.get("status"), last.get("reason"))
            return
        if turn == player.seat and GAME.outcome(state) is None:
            await _move(player, state)


def _tell(player: Player, seq: int, notation: str) -> None:
    known = player.told.get(seq)
    if known is not None and known != notation:
        player.conflicts.append((seq, known, notation))
    player.told.setdefault(seq, notation)


async def _move(player: Player, state: Any) -> None:
    told = time.monotonic()
    await asyncio.sleep(player.rng.uniform(0.1, 0.2))
    move = player.rng.choice(GAME.legal_moves(state))
    notation = GAME.notation(move)
    seq = len(player.told) + 1
    player.thought += time.monotonic() - told
    assert player.client is not None
    while True:  # as a bot would: cluster_unavailable is tried again a moment later (it promises nothing was done)
        try:
            await player.client.request({"type": "move", "room": player.room, "move": notation}, timeout=15)
            player.sent.append((seq, notation, "ok"))
            return
        except ServerError as exc:
            player.sent.append((seq, notation, exc.code))
            if exc.code != "cluster_unavailable" or player.client.closed.is_set():
                return
            await asyncio.sleep(0.5)
        except Exception:  # the connection ended: the game's state comes again after the reconnection
            player.sent.append((seq, notation, "no answer"))
            return


# Faults -------------------------------------------------------------------------------------------------

def kill_lock_connection(pg_url: str, node: str) -> None:
    """Terminate the backend holding ``node``'s lock."""
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE %s",
                     (f"plyhall serve node={node} %",))


async def inject(fault: str, nodes: list[Node], pg: Any, redis: Any, pg_url: str, victim: int) -> None:
    """Inject ``fault`` (one of FAULTS) on ``nodes[victim]`` or the services; returns once it is over."""
    node = nodes[victim]
    loop = asyncio.get_running_loop()
    if fault == "node-kill":
        node.signal(signal.SIGKILL)
        await asyncio.sleep(4)
        await loop.run_in_executor(None, node.start)
    elif fault == "node-stall":
        await _stall(node)
    elif fault == "redis-restart":
        await loop.run_in_executor(None, redis.pause)
        await loop.run_in_executor(None, redis.resume)
    elif fault == "redis-kill":
        redis.proc.kill()
        redis.proc.wait()
        redis.proc = None
        await asyncio.sleep(10)
        await loop.run_in_executor(None, redis.resume)
    elif fault in ("pg-restart", "pg-restart-stall"):
        await loop.run_in_executor(None, pg.stop)
        await loop.run_in_executor(None, pg.start)
        if fault == "pg-restart-stall":
            await _stall(node)
    elif fault == "lock-kill-stall":
        node.signal(signal.SIGSTOP)
        try:
            await loop.run_in_executor(None, kill_lock_connection, pg_url, node.name)
            await asyncio.sleep(STALL)
        finally:
            node.signal(signal.SIGCONT)
    elif fault == "workers-kill":
        workers = nodes[0]
        assert workers.workers > 1, "workers-kill needs the first node to be serve --workers"
        children = workers.children()
        os.kill(children[victim % len(children)], signal.SIGKILL)
        await asyncio.sleep(4)  # the supervisor starts it again a second later
        node = workers
    else:
        raise ValueError(f"unknown fault {fault}; one of {', '.join(FAULTS)}")
    if node.proc is not None and node.proc.poll() is not None:  # a deposed node exits 3: started again
        await loop.run_in_executor(None, node.start)


async def _stall(node: Node) -> None:
    node.signal(signal.SIGSTOP)
    try:
        await asyncio.sleep(STALL)
    finally:
        node.signal(signal.SIGCONT)


# Invariants ----------------------------------------------------------------------------------------------

@dataclass
class Outcome:
    """What one fault's run found."""

    fault: str
    games: int
    announced: int = 0
    stored: int = 0
    stuck: int = 0
    longest_gap: float = 0.0
    overcharge: float = 0.0  # the most a player's clock was charged beyond the time it thought (seconds)
    violations: list[str] = field(default_factory=list)


def check(fault: str, games: list[Game], pg_url: str) -> Outcome:
    """The invariants (see the module docstring) over ``games``, against the database."""
    import psycopg

    out = Outcome(fault, len(games))
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for game in games:
            records = conn.execute("SELECT id, winner, status, reason FROM games WHERE room = %s",
                                   (game.room,)).fetchall()
            nodes = [n for (n,) in conn.execute("SELECT node FROM rooms WHERE name = %s", (game.room,)).fetchall()]
            if len(records) != 1:
                out.violations.append(f"{game.room}: {len(records)} game records")
                continue
            gid, winner, status, reason = records[0]
            moves = conn.execute("SELECT seq, seat, move, clock0, clock1 FROM moves WHERE game_id = %s ORDER BY seq",
                                 (gid,)).fetchall()
            _check_game(out, game, winner, status, moves, nodes)
    return out


def _node_of(game: Game, player: Player) -> str:
    """The node ``player`` was connected to last (its client's address)."""
    url = getattr(player.client, "url", None) or player.urls[0]
    return next((node.name for node in game.nodes if node.url == url), "?")


def _check_game(out: Outcome, game: Game, winner: Any, status: str, moves: list[tuple], nodes: list[str]) -> None:
    bad = out.violations.append
    stored = {seq: move for seq, _, move, _, _ in moves}
    out.stored += len(stored)
    if sorted(stored) != list(range(1, len(stored) + 1)):
        bad(f"{game.room}: stored plies {sorted(stored)} are not 1..{len(stored)}")
    if len(nodes) > 1:
        bad(f"{game.room}: stored under {len(nodes)} nodes {nodes}")
    if status == "running":
        out.stuck += 1
        bad(f"{game.room}: stuck (still running)")
    told: dict[int, str] = {}
    for player in game.players:
        out.longest_gap = max([out.longest_gap, *player.gaps])
        for seq, first, second in player.conflicts:
            bad(f"{game.room}: ply {seq} announced as {first} and as {second}")
        for seq, notation in player.told.items():
            if told.setdefault(seq, notation) != notation:
                bad(f"{game.room}: ply {seq} told as {told[seq]} and as {notation}")
            if stored.get(seq) != notation:
                bad(f"{game.room}: {player.name} was told {notation} at ply {seq}, stored {stored.get(seq)}")
        for seq, notation, answer in player.sent:
            ok = any(s == seq and n == notation and a == "ok" for s, n, a in player.sent)
            if answer not in ("ok", "no answer") and not ok and stored.get(seq) == notation and \
                    told.get(seq) != notation:
                bad(f"{game.room}: {player.name}'s move {notation} at ply {seq} was answered {answer}, and stored")
        if status != "running" and player.result is not None and (player.result[0], player.result[1]) != \
                (winner, status):
            bad(f"{game.room}: {player.name} was told {player.result}, stored {(winner, status)}")
        if status != "running" and player.result is None:
            bad(f"{game.room}: {player.name} was never told the result")
        clocks = [row[3 + player.seat] for row in moves if row[1] == player.seat and row[3 + player.seat] is not None]
        if clocks:
            over = CLOCK - clocks[-1] - player.thought
            out.overcharge = max(out.overcharge, over)
            if over > 2.0:  # where the room and the player were, to tell an outage's charge from round trips
                bad(f"{game.room}: {player.name}'s clock was charged {over:.1f} s more than it thought (room on "
                    f"{game.owner.name}, player on {_node_of(game, player)}, its longest wait "
                    f"{max(player.gaps, default=0):.1f} s)")
    out.announced += len(told)


# Running ------------------------------------------------------------------------------------------------

async def run_fault(fault: str, nodes: list[Node], pg: Any, redis: Any, pg_url: str, games: int, run: str,
                    settle: float, rng: random.Random, say: Callable[[str], None] = lambda text: None) -> Outcome:
    """One fault: open ``games`` games, inject the fault a second into play, play them out, check."""
    matrix = [Game(i, run, nodes, rng) for i in range(games)]
    deadline = time.monotonic() + settle
    starts = [asyncio.Event() for _ in matrix]
    tasks = [asyncio.create_task(play(player, start, deadline)) for game, start in zip(matrix, starts, strict=True)
             for player in game.players]
    await asyncio.wait_for(asyncio.gather(*(player.started.wait() for game in matrix for player in game.players)),
                           60)
    await asyncio.sleep(1.0)
    victim = rng.randrange(len(nodes))
    say(f"{fault}: {games} games, fault on {nodes[victim].name}")
    await inject(fault, nodes, pg, redis, pg_url, victim)
    results = await asyncio.gather(*tasks, return_exceptions=True)
    for game in matrix:
        for player in game.players:
            if player.client is not None:
                with contextlib.suppress(Exception):
                    await player.client.close()
    outcome = await asyncio.get_running_loop().run_in_executor(None, check, fault, matrix, pg_url)
    for result in results:
        if isinstance(result, BaseException):
            outcome.violations.append(f"a player failed: {type(result).__name__}: {result}")
    return outcome


@contextlib.contextmanager
def cluster(pg: Any, redis: Any, pg_url: str, count: int, log_dir: Path, fault: str = "") -> Iterator[list[Node]]:
    """``count`` running nodes n1..nN of one cluster on ``pg_url`` and ``redis`` (stopped after); for the fault
    ``workers-kill``, the first is ``serve --workers 2`` (nodes n1-1 and n1-2)."""
    nodes = [Node(f"n{i}", pg_url, redis.url, log_dir, 2 if i == 1 and fault == "workers-kill" else 1)
             for i in range(1, count + 1)]
    try:
        for node in nodes:
            node.start()
        yield nodes
    finally:
        for node in nodes:
            node.stop()


def table(outcomes: list[Outcome]) -> str:
    """The Markdown table of ``outcomes``."""
    lines = ["| fault | games | moves announced | stored | mismatched (violations) | stuck | longest wait for a move |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for o in outcomes:
        lines.append(f"| {o.fault} | {o.games} | {o.announced} | {o.stored} | {len(o.violations)} | {o.stuck} | "
                     f"{o.longest_gap:.1f} s |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the matrix (see the module docstring); prints the table."""
    import tempfile

    from tests.pg_cluster import Cluster
    from tests.redis_server import RedisServer

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=12, help="games a fault (default 12)")
    parser.add_argument("--runs", type=int, default=1, help="runs of the whole matrix in a row (default 1)")
    parser.add_argument("--faults", default=",".join(FAULTS), help="comma-separated, of: " + ", ".join(FAULTS))
    parser.add_argument("--settle", type=float, default=90.0, help="seconds the games of a fault have to end")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--verbose", action="store_true", help="print the warnings and errors the nodes logged")
    args = parser.parse_args(argv)
    faults = [f.strip() for f in args.faults.split(",") if f.strip()]
    unknown = [f for f in faults if f not in FAULTS]
    if unknown or not 1 <= args.games <= 500 or not 1 <= args.runs <= 20:
        parser.error(f"faults of {', '.join(FAULTS)} (not {', '.join(unknown)}); --games 1-500; --runs 1-20")
    rng = random.Random(args.seed)
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="plyhall-chaos-") as tmp, RedisServer() as redis:
        pg = Cluster()
        try:
            for run in range(1, args.runs + 1):
                for fault in faults:
                    pg_url = pg.new_database()
                    redis.flushall()
                    with cluster(pg, redis, pg_url, 3, Path(tmp), fault) as nodes:
                        outcome = asyncio.run(run_fault(fault, nodes, pg, redis, pg_url, args.games, f"{run}",
                                                        args.settle, rng, lambda text: print(text, file=sys.stderr)))
                    outcomes.append(outcome)
                    print(f"  run {run} {fault}: {outcome.announced} moves announced, {outcome.stored} stored, "
                          f"{len(outcome.violations)} violations; a clock charged at most "
                          f"{outcome.overcharge:.2f} s beyond its player's thinking", file=sys.stderr, flush=True)
                    for violation in outcome.violations[:10]:
                        print(f"    {violation}", file=sys.stderr)
        finally:
            pg.destroy()
        logs = "".join((Path(tmp) / f).read_text() for f in sorted(os.listdir(tmp)) if f.endswith(".log"))
    print(table(outcomes))
    tracebacks = logs.count("Traceback")
    print(f"\nnode logs: {tracebacks} tracebacks, {logs.count('deposed')} lines about deposed nodes")
    if args.verbose:
        print("\n".join(line for line in logs.splitlines() if " WARNING " in line or " ERROR " in line),
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
