"""Login flood: can a secret-guessing client stall everybody else, or keep the owners out? Do honest
crowds behind one address get in?

    .venv/bin/python benchmarks/login_flood.py                    # 20 flooders x 200 wrong secrets
    .venv/bin/python benchmarks/login_flood.py --flooders 40 --attempts 500 --crowd 40 --storm 200

A real ``plyhall serve`` process. ``--watchers`` innocent clients (127.0.0.1), logged in, send a
``ping`` every 20 ms and time the ``pong``. First for ``--seconds`` alone (the baseline), then while
``--flooders`` connections from one address (127.0.0.2) each send ``--attempts`` logins with a wrong
secret for claimed names (as fast as the server answers); meanwhile the names' owners log in with
their right secrets from their own address (127.0.0.3) every 100 ms. Checking a secret costs PBKDF2
(milliseconds of CPU): it runs on two threads, taking addresses in turn, and failures back off per
address and name. Then two honest crowds behind one address each: ``--crowd`` first logins with new
secrets at once (127.0.0.4), and ``--storm`` players seated in games (127.0.0.5) who all reconnect at
once, with their resume tokens, after the server was killed and started again.

Prints the innocents' ping round trip p50/p99/max in both phases, what the flood got back, how the
owners fared during it, and how long each crowd took to be let in (and how many were refused).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import Counter

from common import Server, heading, percentiles, scratch, script_parser
from websockets.asyncio.client import connect

ATTACKER, OWNERS, CROWD, STORM = "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"


async def login(url: str, address: str, name: str, **fields: str) -> tuple[object, dict, float]:
    """A connection from ``address`` and its login's answer, with the seconds the answer took."""
    ws = await connect(url, subprotocols=["plyhall.v1.json"], local_addr=(address, 0))
    began = time.perf_counter()
    await ws.send(json.dumps({"type": "login", "name": name, **fields}))
    reply = json.loads(await ws.recv())
    return ws, reply, time.perf_counter() - began


async def owners(url: str, stop: asyncio.Event, answers: Counter, waits: list[float]) -> None:
    """The claimed names' owners, from their own address, log in with the right secret every 100 ms."""
    i = 0
    while not stop.is_set():
        ws, reply, took = await login(url, OWNERS, f"owner{i % 4}", secret=f"real-secret-{i % 4}")
        answers[reply.get("code", reply["type"])] += 1
        waits.append(took)
        await ws.close()
        i += 1
        await asyncio.sleep(0.1)


async def watcher(url: str, name: str, stop: asyncio.Event, rtts: list[float]) -> None:
    async with connect(url, subprotocols=["plyhall.v1.json"]) as ws:
        await ws.send(json.dumps({"type": "login", "name": name}))
        await ws.recv()
        while not stop.is_set():
            began = time.perf_counter()
            await ws.send(json.dumps({"type": "ping"}))
            await ws.recv()
            rtts.append(time.perf_counter() - began)
            await asyncio.sleep(0.02)


async def flooder(url: str, index: int, attempts: int, replies: Counter) -> None:
    async with connect(url, subprotocols=["plyhall.v1.json"], local_addr=(ATTACKER, 0)) as ws:
        for attempt in range(attempts):
            await ws.send(json.dumps({"type": "login", "name": f"owner{index % 4}", "secret": f"guess{attempt}"}))
            reply = json.loads(await ws.recv())
            replies[reply.get("code", reply["type"])] += 1


async def phase(url: str, watchers: int, seconds: float, flooders: int, attempts: int, tag: str) -> dict:
    stop = asyncio.Event()
    rtts: list[float] = []
    watching = [asyncio.create_task(watcher(url, f"{tag}{i}", stop, rtts)) for i in range(watchers)]
    await asyncio.sleep(0.5)
    rtts.clear()
    replies: Counter = Counter()
    owned: Counter = Counter()
    owner_waits: list[float] = []
    began = time.monotonic()
    if flooders:
        owning = asyncio.create_task(owners(url, stop, owned, owner_waits))
        await asyncio.gather(*(flooder(url, i, attempts, replies) for i in range(flooders)))
    else:
        await asyncio.sleep(seconds)
    took = time.monotonic() - began
    stop.set()
    await asyncio.gather(*watching)
    if flooders:
        await owning
    return {"rtt": percentiles(rtts), "samples": len(rtts), "replies": replies, "seconds": took, "owners": owned,
            "owner_waits": percentiles(owner_waits) if owner_waits else None}


async def crowd(url: str, count: int) -> tuple[float, Counter]:
    """``count`` first logins with new secrets, all at once, from one address: seconds until all are answered."""
    began = time.perf_counter()
    answers = await asyncio.gather(*(login(url, CROWD, f"crowd{i}", secret=f"crowd-secret-{i}") for i in range(count)))
    took = time.perf_counter() - began
    for ws, _, _ in answers:
        await ws.close()
    return took, Counter(reply.get("code", reply["type"]) for _, reply, _ in answers)


async def seat_storm(url: str, count: int) -> list[tuple[str, str]]:
    """``count`` players from one address seek and start games; their names and resume tokens."""
    async def claimed(i: int) -> tuple[object, dict, float]:
        while True:  # claiming hashes each secret: past 64 at once from one address the server says wait
            ws, reply, took = await login(url, STORM, f"storm{i}", secret=f"storm-secret-{i}")
            if reply["type"] == "welcome":
                return ws, reply, took
            await ws.close()
            await asyncio.sleep(reply.get("retry_after", 1.0))

    players = await asyncio.gather(*(claimed(i) for i in range(count)))
    for ws, _, _ in players:
        await ws.send(json.dumps({"type": "seek", "game": "connect4", "time_control": {"per_move": 600}}))

    async def started(ws: object) -> None:
        while json.loads(await ws.recv())["type"] != "game_start":
            pass

    await asyncio.gather(*(started(ws) for ws, _, _ in players))
    tokens = [(f"storm{i}", reply["resume"]) for i, (_, reply, _) in enumerate(players)]
    return tokens


async def storm_back(url: str, tokens: list[tuple[str, str]]) -> tuple[float, Counter, int]:
    """Everybody reconnects at once with its resume token (and secret): seconds until all are answered."""
    began = time.perf_counter()
    answers = await asyncio.gather(*(login(url, STORM, name, resume=token, secret=f"storm-secret-{name[5:]}")
                                     for name, token in tokens))
    took = time.perf_counter() - began
    seated = sum(bool(reply.get("rooms")) for _, reply, _ in answers)
    for ws, _, _ in answers:
        await ws.close()
    return took, Counter(reply.get("code", reply["type"]) for _, reply, _ in answers), seated


async def run(args: argparse.Namespace, url: str) -> None:
    for i in range(4):  # the names the flood guesses at are claimed
        async with connect(url, subprotocols=["plyhall.v1.json"]) as ws:
            await ws.send(json.dumps({"type": "login", "name": f"owner{i}", "secret": f"real-secret-{i}"}))
            await ws.recv()
    quiet = await phase(url, args.watchers, args.seconds, 0, 0, "calm")
    flood = await phase(url, args.watchers, args.seconds, args.flooders, args.attempts, "busy")
    heading(f"Login flood: {args.flooders} connections x {args.attempts} logins with wrong secrets, "
            f"{args.watchers} other clients pinging every 20 ms")
    print(f"{'other clients ping round trip (ms)':<40}{'p50':>8}{'p99':>8}{'max':>9}{'samples':>9}")
    for label, result in (("without the flood", quiet), ("during the flood", flood)):
        rtt = result["rtt"]
        print(f"{label:<40}{rtt['p50']:>8.2f}{rtt['p99']:>8.2f}{rtt['max']:>9.1f}{result['samples']:>9}")
    verdict = "ok" if flood["rtt"]["p99"] < 20 else "MISSED"
    print(f"p99 during the flood: {flood['rtt']['p99']:.2f} ms (target under 20 ms: {verdict})")
    total = sum(flood["replies"].values())
    print(f"the flood's {total} logins took {flood['seconds']:.1f} s and were answered: "
          + ", ".join(f"{code} {count}" for code, count in flood["replies"].most_common()))
    waits = flood["owner_waits"]
    print("the owners' logins during the flood (their own address): "
          + ", ".join(f"{code} {count}" for code, count in flood["owners"].most_common())
          + (f"; answer p50 {waits['p50']:.1f} ms, p99 {waits['p99']:.1f} ms" if waits else ""))
    took, answers = await crowd(url, args.crowd)
    print(f"{args.crowd} first logins with secrets at once from one address: all answered in {took:.2f} s: "
          + ", ".join(f"{code} {count}" for code, count in answers.most_common()))


def main(argv: list[str] | None = None) -> int:
    """Flood the logins, then let the crowds in, and print what everybody saw."""
    parser = script_parser(__doc__)
    parser.add_argument("--flooders", type=int, default=20, help="flooding connections (default 20)")
    parser.add_argument("--attempts", type=int, default=200, help="wrong logins per flooder (default 200)")
    parser.add_argument("--watchers", type=int, default=10, help="innocent clients (default 10)")
    parser.add_argument("--seconds", type=float, default=5.0, help="baseline seconds (default 5)")
    parser.add_argument("--crowd", type=int, default=40, help="first logins at once from one address (default 40)")
    parser.add_argument("--storm", type=int, default=200,
                        help="seated players reconnecting at once from one address after a restart (default 200)")
    args = parser.parse_args(argv)
    with scratch("flood") as tmp, Server(tmp / "flood.db", "--max-connections-per-address", "0",
                                                "--max-opening-per-address", "0") as server:
        url = server.url
        asyncio.run(run(args, url))
        tokens = asyncio.run(seat_storm(url, args.storm))
        server.kill()  # kill -9: the players' games wait for them
        restart = server.restart()
        took, answers, seated = asyncio.run(storm_back(url, tokens))
        print(f"{args.storm} seated players reconnecting at once from one address after a kill -9 and a restart "
              f"({restart:.1f} s): all answered in {took:.2f} s: "
              + ", ".join(f"{code} {count}" for code, count in answers.most_common())
              + f"; {seated} back in their seats")
    return 0


if __name__ == "__main__":
    sys.exit(main())
