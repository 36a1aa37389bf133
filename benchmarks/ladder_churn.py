"""Ladder churn: can one address's names on the rating ladder slow everybody else's play?

    .venv/bin/python benchmarks/ladder_churn.py                        # 150 churning names, 20 s a phase
    .venv/bin/python benchmarks/ladder_churn.py --names 150 --seconds 30 --tables 2 --think 0.1

A real ``plyhall serve`` process (``--max-ladder-names-per-address 0`` and ``--rated-networks 127.0.0.2/32``: the
attacker is let in with all its names, and they may play each other, to measure the pairing's cost, not the limits
that would refuse it). Bystanders on 127.0.0.1: ``--watchers``
logged-in clients send a ``ping`` every 20 ms and time the ``pong``, and ``--tables`` Connect Four rooms whose two
players answer each move after ``--think`` seconds (a long series: game after game). First ``--seconds`` alone
(the quiet run), then as long again while ``--names`` claimed names from one address (127.0.0.2, in a process of
their own) sit on the Connect Four ladder and resign every ladder game the moment it starts, so that every ended
game sends two names back to be paired again.

Prints the bystanders' ping round trip p50/p99/max and their moves a second in both phases, the ladder games
the churn got through, the server's CPU seconds, and its ladder work (the Prometheus counters
``plyhall_ladder_*``: pairing passes and candidate opponents looked at). A benchmark prints figures; it passes or
fails nothing. A bystander whose login or ping is not answered within ``--pong-timeout`` seconds (default 10) stops
the run with a line saying so and exit status 1: a lost pong is no round trip, and the run gives no figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import random
import sys
import time
import urllib.request
from typing import Any

from common import Server, cpu_seconds, heading, log, percentiles, scratch, script_parser
from websockets.asyncio.client import connect

from protocol.games import get_game

BYSTANDERS, CHURN = "127.0.0.1", "127.0.0.2"
GAME = "connect4"
PONG_TIMEOUT = 10.0  # seconds a bystander waits for its welcome and for each pong (--pong-timeout)


class PongLost(RuntimeError):
    """A bystander was not answered in time: a lost pong is no round trip, so the run gives no figures."""


async def watcher(url: str, name: str, stop: asyncio.Event, rtts: list[float], timeout: float = PONG_TIMEOUT) -> None:
    """A logged-in client that pings every 20 ms and keeps each round trip; :class:`PongLost` when its welcome or a
    pong does not come within ``timeout`` seconds."""
    async with connect(url, subprotocols=["plyhall.v1.json"], local_addr=(BYSTANDERS, 0)) as ws:
        await ws.send(json.dumps({"type": "login", "name": name}))
        try:
            async with asyncio.timeout(timeout):
                await ws.recv()
        except TimeoutError:
            raise PongLost(f"bystander {name} got no answer to its login within {timeout:g} s") from None
        while not stop.is_set():
            began = time.perf_counter()
            await ws.send(json.dumps({"type": "ping"}))
            try:
                async with asyncio.timeout(timeout):
                    while json.loads(await ws.recv())["type"] != "pong":
                        pass
            except TimeoutError:
                raise PongLost(f"bystander {name} got no pong within {timeout:g} s of its ping (the server is stuck "
                               f"or lost it; on a loaded machine give a longer --pong-timeout)") from None
            rtts.append(time.perf_counter() - began)
            await asyncio.sleep(0.02)


async def player(url: str, name: str, room: str, seat: int, think: float, stop: asyncio.Event,
                 moves: list[int], create: bool) -> None:
    """One seat of a bystanders' table: plays a random legal move ``think`` seconds after its turn comes."""
    game = get_game(GAME)
    rng = random.Random(name)
    async with connect(url, subprotocols=["plyhall.v1.json"], local_addr=(BYSTANDERS, 0)) as ws:
        await ws.send(json.dumps({"type": "login", "name": name}))
        await ws.recv()
        if create:
            await ws.send(json.dumps({"type": "create_room", "game": GAME, "name": room, "games": 1000,
                                      "time_control": {"per_move": 600}}))
        else:
            await asyncio.sleep(0.5)
        await ws.send(json.dumps({"type": "join", "room": room, "seat": seat}))
        state = None
        while not stop.is_set():
            try:
                msg = json.loads(await asyncio.wait_for(ws.recv(), 0.5))
            except TimeoutError:
                continue
            kind = msg["type"]
            if kind == "game_start":
                state = game.decode_state(msg["state"], "algebraic")
            elif kind == "moved" and state is not None:
                state = game.apply(state, game.parse_move(msg["notation"], state))
                if msg["seat"] == seat:
                    moves[0] += 1
            else:
                continue
            if state is not None and game.outcome(state) is None and game.to_move(state) == seat:
                await asyncio.sleep(think)
                move = rng.choice(game.legal_moves(state))
                await ws.send(json.dumps({"type": "move", "room": room, "move": game.notation(move)}))


async def phase(url: str, args: argparse.Namespace, tag: str, pid: int) -> dict[str, Any]:
    """The bystanders for ``args.seconds`` (after a second to settle): their pings and moves, the server's CPU."""
    stop = asyncio.Event()
    rtts: list[float] = []
    moves = [0]
    tasks = [asyncio.create_task(watcher(url, f"{tag}w{i}", stop, rtts, args.pong_timeout))
             for i in range(args.watchers)]
    for t in range(args.tables):
        room = f"{tag} table {t}"
        tasks.append(asyncio.create_task(player(url, f"{tag}t{t}a", room, 0, args.think, stop, moves, True)))
        tasks.append(asyncio.create_task(player(url, f"{tag}t{t}b", room, 1, args.think, stop, moves, False)))
    await hold(tasks, 2.0)
    rtts.clear()
    moved, cpu, began = moves[0], cpu_seconds(pid), time.monotonic()
    await hold(tasks, args.seconds)
    took = time.monotonic() - began
    result = {"rtt": percentiles(rtts), "moves": (moves[0] - moved) / took, "cpu": cpu_seconds(pid) - cpu,
              "seconds": took}
    stop.set()
    await asyncio.gather(*tasks)
    return result


async def hold(tasks: list[asyncio.Task], seconds: float) -> None:
    """Wait ``seconds`` while the bystanders run, raising at once the error of one that fails (a lost pong)."""
    done, _ = await asyncio.wait(tasks, timeout=seconds, return_when=asyncio.FIRST_EXCEPTION)
    for task in done:
        if task.exception() is not None:
            raise task.exception()


async def churner(url: str, index: int, counts: Any) -> None:
    """A claimed name on the ladder that resigns each of its ladder games at once, for ever."""
    name = f"churn{index}"
    while True:
        ws = await connect(url, subprotocols=["plyhall.v1.json"], local_addr=(CHURN, 0), max_queue=None)
        await ws.send(json.dumps({"type": "login", "name": name, "secret": f"secret-{index}"}))
        reply = json.loads(await ws.recv())
        if reply["type"] == "welcome":
            break
        await ws.close()
        await asyncio.sleep(reply.get("retry_after", 1.0))
    await ws.send(json.dumps({"type": "seek", "game": GAME, "ladder": True}))
    counts.ready.value += 1
    async for frame in ws:
        msg = json.loads(frame)
        if msg["type"] == "game_start" and msg["players"][msg["to_move"]] == name:
            await ws.send(json.dumps({"type": "resign", "room": msg["room"]}))
        elif msg["type"] == "game_over" and msg["players"][0] == name:
            counts.games.value += 1
        elif msg["type"] == "error":
            counts.errors.value += 1


def churn_main(url: str, names: int, counts: Any) -> None:
    """The churning names, in a process of their own."""
    async def main() -> None:
        await asyncio.gather(*(churner(url, i, counts) for i in range(names)))
    asyncio.run(main())


class Counts:
    """Shared counters of the churn process (``multiprocessing.Value``): ladder games ended, errors, and names
    logged in and on the ladder."""

    def __init__(self) -> None:
        self.games, self.errors, self.ready = (mp.Value("q", 0) for _ in range(3))


def add_bystander_options(parser: argparse.ArgumentParser) -> None:
    """The options of :func:`phase`: its seconds, and the bystanders' pings and tables."""
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds measured in each phase (default 20)")
    parser.add_argument("--watchers", type=int, default=5, help="bystanders pinging every 20 ms (default 5)")
    parser.add_argument("--tables", type=int, default=2, help="bystanders' Connect Four tables (default 2)")
    parser.add_argument("--think", type=float, default=0.1, help="seconds a bystander thinks a move (default 0.1)")
    parser.add_argument("--pong-timeout", type=seconds_over_zero, default=PONG_TIMEOUT, metavar="SECONDS",
                        help=f"seconds a bystander waits for a pong before the run stops with no figures "
                             f"(default {PONG_TIMEOUT:g})")


def seconds_over_zero(text: str) -> float:
    """A number of seconds above zero, as typed after an option."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above zero (e.g. 10 or 2.5)")
    return value


def print_phases(quiet: dict[str, Any], busy: dict[str, Any], during: str) -> None:
    """The bystanders' figures of the quiet run and of the run ``during`` the load, as a table."""
    print(f"{'bystanders':<26}{'ping p50':>9}{'p99':>8}{'max':>8}{'samples':>9}{'moves/s':>9}{'server CPU s':>14}")
    for label, result in (("quiet run", quiet), (during, busy)):
        rtt = result["rtt"]
        print(f"{label:<26}{rtt['p50']:>9.2f}{rtt['p99']:>8.2f}{rtt['max']:>8.1f}{rtt['n']:>9}"
              f"{result['moves']:>9.2f}{result['cpu']:>14.1f}")


def ladder_work(port: int) -> dict[str, float]:
    """The server's ``plyhall_ladder_*`` counters (empty on a server without them)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    return {line.split()[0]: float(line.split()[1]) for line in text.splitlines()
            if line.startswith("plyhall_ladder_")}


def main(argv: list[str] | None = None) -> int:
    """The quiet run, then the churn, and the bystanders' figures in both."""
    parser = script_parser(__doc__)
    parser.add_argument("--names", type=int, default=150, help="churning ladder names from one address (default 150)")
    add_bystander_options(parser)
    parser.add_argument("--games-per-address", default=None, metavar="N",
                        help="the server's --ladder-games-per-address (default: the server's default; 0 lifts the "
                             "limit, to measure what the churn costs without it)")
    args = parser.parse_args(argv)
    # the attacker let in with all its names, and its address taken for a network of many people: else its names,
    # linked, are never paired with each other (their games could not be rated), and nothing would churn
    extra = ["--max-ladder-names-per-address", "0", "--max-connections-per-address", "0",
             "--max-opening-per-address", "0",
             "--rated-networks", "127.0.0.2/32"]
    if args.games_per_address is not None:
        extra += ["--ladder-games-per-address", args.games_per_address]
    try:
        with scratch("ladder-churn") as tmp, Server(tmp / "churn.db", *extra) as server:
            quiet = asyncio.run(phase(server.url, args, "calm", server.pid))
            log("quiet run done; the churn logs in")
            counts = Counts()
            churn = mp.Process(target=churn_main, args=(server.url, args.names, counts), daemon=True)
            churn.start()
            try:
                deadline = time.monotonic() + 120
                while counts.ready.value < args.names and time.monotonic() < deadline:  # every name is on the ladder
                    time.sleep(0.5)
                time.sleep(1.0)
                work0, games0 = ladder_work(server.port), counts.games.value
                busy = asyncio.run(phase(server.url, args, "busy", server.pid))
                work1, games1 = ladder_work(server.port), counts.games.value
            finally:
                churn.terminate()
                churn.join(10)
    except PongLost as exc:  # a bystander's ping went unanswered: no figures, and a clear line why
        print(f"ladder_churn: {exc}", file=sys.stderr)
        return 1
    limit = "default" if args.games_per_address is None else args.games_per_address
    heading(f"Ladder churn: {args.names} ladder names from one address resigning every game at once "
            f"(--ladder-games-per-address {limit}); bystanders: {args.watchers} pinging every 20 ms, {args.tables} "
            f"tables moving after {args.think:g} s")
    print_phases(quiet, busy, "during the churn")
    games = games1 - games0
    print(f"the churn: {games} ladder games ended in {busy['seconds']:.1f} s ({games / busy['seconds']:.0f} a second), "
          f"{counts.errors.value} errors")
    passes = work1.get("plyhall_ladder_passes_total", 0) - work0.get("plyhall_ladder_passes_total", 0)
    looked = work1.get("plyhall_ladder_candidates_total", 0) - work0.get("plyhall_ladder_candidates_total", 0)
    if passes:
        print(f"ladder work during the churn: {passes:.0f} pairing passes, {looked:.0f} candidate opponents looked at "
              f"({looked / passes:.1f} a pass)")
    ratio = busy["moves"] / quiet["moves"] if quiet["moves"] else float("nan")
    print(f"p99 during the churn {busy['rtt']['p99']:.2f} ms (target under 20 ms: "
          f"{'ok' if busy['rtt']['p99'] < 20 else 'MISSED'}); moves a second {ratio:.1%} of the quiet run's "
          f"(target within 10%: {'ok' if ratio >= 0.9 else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
