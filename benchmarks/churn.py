"""Connection churn: does the server give memory back after clients come and go?

    .venv/bin/python benchmarks/churn.py                          # 5 rounds of 2,000 connect/login/close
    .venv/bin/python benchmarks/churn.py --rounds 10 --connections 5000

A real ``plyhall serve`` process; each round, a client process opens ``--connections``
WebSocket connections (50 at a time), logs each in under a new name, and closes it. After each
round the server's resident memory (VmRSS) is read. Memory that only grows means the serving path
keeps garbage alive (cycles the collector never reaches); the target is every round within 10% of
the first round's figure.
"""

from __future__ import annotations

import subprocess
import sys
import time

from common import ROOT, Server, log, rss_mb, scratch, script_parser

CLIENTS = r'''
import asyncio, json, sys
from websockets.asyncio.client import connect

async def one(url, name):
    async with connect(url, subprotocols=["plyhall.v1.json"], compression=None) as ws:
        await ws.send(json.dumps({"type": "login", "name": name}))
        await ws.recv()

async def main(url, count, tag):
    semaphore = asyncio.Semaphore(50)
    async def limited(i):
        async with semaphore:
            await one(url, f"{tag}{i}")
    await asyncio.gather(*(limited(i) for i in range(count)))

asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3]))
'''


def main(argv: list[str] | None = None) -> int:
    """Run the rounds and print the server's memory after each."""
    parser = script_parser(__doc__)
    parser.add_argument("--rounds", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--connections", type=int, default=2000, help="connections a round (default 2000)")
    args = parser.parse_args(argv)
    with scratch("churn") as tmp, Server(tmp / "churn.db") as server:
        idle = rss_mb(server.pid)
        figures = []
        for round_no in range(1, args.rounds + 1):
            began = time.monotonic()
            subprocess.run([sys.executable, "-c", CLIENTS, server.url, str(args.connections), f"r{round_no}x"],
                           cwd=ROOT, check=True)
            time.sleep(1.5)  # a pass of the serving garbage collector
            figures.append((rss_mb(server.pid), time.monotonic() - began))
            log(f"round {round_no}: {figures[-1][0]:.1f} MB")
    first = figures[0][0]
    print(f"\nChurn: {args.rounds} rounds of {args.connections} connect/login/close, 50 at a time; "
          f"server RSS before any client {idle:.1f} MB")
    print(f"{'round':>6}{'RSS (MB)':>11}{'vs round 1':>12}{'seconds':>10}")
    for round_no, (rss, seconds) in enumerate(figures, 1):
        print(f"{round_no:>6}{rss:>11.1f}{rss / first - 1:>+12.1%}{seconds:>10.1f}")
    worst = max(rss for rss, _ in figures) / first - 1
    print(f"largest growth over round 1: {worst:+.1%} (target within 10%: {'ok' if worst <= 0.10 else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
