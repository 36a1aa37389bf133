"""Login flood: can a secret-guessing client stall everybody else?

    .venv/bin/python benchmarks/login_flood.py                    # 20 flooders x 200 wrong secrets
    .venv/bin/python benchmarks/login_flood.py --flooders 40 --attempts 500

A real ``plyhall serve`` process; ``--watchers`` innocent clients, logged in, send a ``ping`` every
20 ms and time the ``pong``. First for ``--seconds`` alone (the baseline), then while
``--flooders`` connections each send ``--attempts`` logins with a wrong secret for claimed names
(as fast as the server answers). Checking a secret costs PBKDF2 (milliseconds of CPU): done on the
event loop it froze every other client; now it runs on a thread pool and failures are throttled.
Prints the innocents' ping round trip p50/p99/max in both phases, and what the flood got back.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from common import free_port, percentiles, serve
from websockets.asyncio.client import connect


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
    async with connect(url, subprotocols=["plyhall.v1.json"]) as ws:
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
    began = time.monotonic()
    if flooders:
        await asyncio.gather(*(flooder(url, i, attempts, replies) for i in range(flooders)))
    else:
        await asyncio.sleep(seconds)
    took = time.monotonic() - began
    stop.set()
    await asyncio.gather(*watching)
    return {"rtt": percentiles(rtts), "samples": len(rtts), "replies": replies, "seconds": took}


async def run(args: argparse.Namespace, url: str) -> None:
    for i in range(4):  # the names the flood guesses at are claimed
        async with connect(url, subprotocols=["plyhall.v1.json"]) as ws:
            await ws.send(json.dumps({"type": "login", "name": f"owner{i}", "secret": f"real-secret-{i}"}))
            await ws.recv()
    quiet = await phase(url, args.watchers, args.seconds, 0, 0, "calm")
    flood = await phase(url, args.watchers, args.seconds, args.flooders, args.attempts, "busy")
    print(f"\nLogin flood: {args.flooders} connections x {args.attempts} logins with wrong secrets, "
          f"{args.watchers} other clients pinging every 20 ms; CPUs: {os.cpu_count()}")
    print(f"{'other clients ping round trip (ms)':<40}{'p50':>8}{'p99':>8}{'max':>9}{'samples':>9}")
    for label, result in (("without the flood", quiet), ("during the flood", flood)):
        rtt = result["rtt"]
        print(f"{label:<40}{rtt['p50']:>8.2f}{rtt['p99']:>8.2f}{rtt['max']:>9.1f}{result['samples']:>9}")
    verdict = "ok" if flood["rtt"]["p99"] < 20 else "MISSED"
    print(f"p99 during the flood: {flood['rtt']['p99']:.2f} ms (target under 20 ms: {verdict})")
    total = sum(flood["replies"].values())
    print(f"the flood's {total} logins took {flood['seconds']:.1f} s and were answered: "
          + ", ".join(f"{code} {count}" for code, count in flood["replies"].most_common()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flooders", type=int, default=20, help="flooding connections (default 20)")
    parser.add_argument("--attempts", type=int, default=200, help="wrong logins per flooder (default 200)")
    parser.add_argument("--watchers", type=int, default=10, help="innocent clients (default 10)")
    parser.add_argument("--seconds", type=float, default=5.0, help="baseline seconds (default 5)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="plyhall-flood-") as tmp:
        port = free_port()
        server, _ = serve(Path(tmp) / "flood.db", port)
        try:
            asyncio.run(run(args, f"ws://127.0.0.1:{port}/ws"))
        finally:
            server.terminate()
            server.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
