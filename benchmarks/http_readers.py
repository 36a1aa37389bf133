"""HTTP readers: can clients of one address reading the largest pages as fast as they can slow everybody's play?

    .venv/bin/python benchmarks/http_readers.py                       # 8 readers, 20 s a phase
    .venv/bin/python benchmarks/http_readers.py --readers 8 --seconds 30 --http-rate 0

A real ``plyhall serve`` process (``--http-rate`` as given, else the server's default) holding ``--games``
finished Connect Four games between two names. Bystanders on 127.0.0.1, as in ``ladder_churn.py``: clients
pinging every 20 ms and tables of two players moving after ``--think`` seconds. First ``--seconds`` alone (the
quiet run), then as long again while ``--readers`` clients of one address (127.0.0.2, threads of a process of
their own) read ``/api/games?limit=500``, ``/api/players/NAME?limit=100`` and ``/api/ratings/connect4`` in turn
as fast as the server answers.

Prints the bystanders' ping round trip p50/p99/max and their moves a second in both phases, what the readers
got (answers by status, bytes), and the server's CPU seconds. A benchmark prints figures; it passes or fails
nothing.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import multiprocessing as mp
import sys
import threading
import time
from collections import Counter
from typing import Any

from common import Server, heading, log, scratch, script_parser
from ladder_churn import add_bystander_options, phase, print_phases
from websockets.asyncio.client import connect

READERS = "127.0.0.2"
PAGES = ("/api/games?limit=500", "/api/players/hoarder0?limit=100", "/api/ratings/connect4")


async def fill(url: str, games: int) -> None:
    """``games`` finished games of one move each between hoarder0 and hoarder1 (one long series)."""
    json_ws = {"subprotocols": ["plyhall.v1.json"], "max_queue": None}  # b reads nothing: its messages pile up
    async with connect(url, **json_ws) as a, connect(url, **json_ws) as b:
        for ws, name in ((a, "hoarder0"), (b, "hoarder1")):
            await ws.send(json.dumps({"type": "login", "name": name, "secret": f"{name}-secret"}))
            await ws.recv()
        await a.send(json.dumps({"type": "create_room", "game": "connect4", "name": "hoard", "games": games,
                                 "time_control": {"per_move": 600}}))
        await a.send(json.dumps({"type": "join", "room": "hoard", "seat": 0}))
        while json.loads(await a.recv())["type"] != "joined":  # the room exists: the other may join it
            pass
        await b.send(json.dumps({"type": "join", "room": "hoard", "seat": 1}))
        for _ in range(games):
            while (msg := json.loads(await a.recv()))["type"] != "game_start":
                pass
            mover = a if msg["players"][msg["to_move"]] == "hoarder0" else b
            await mover.send(json.dumps({"type": "move", "room": "hoard", "move": "4"}))
            await mover.send(json.dumps({"type": "resign", "room": "hoard"}))
            while json.loads(await a.recv())["type"] != "game_over":
                pass


def reader(port: int, index: int, stop: threading.Event, answers: Counter, sizes: list[int]) -> None:
    """One client reading the pages in turn, each on a new connection (the server closes after each answer)."""
    n = index
    while not stop.is_set():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(READERS, 0))
        try:
            conn.request("GET", PAGES[n % len(PAGES)])
            resp = conn.getresponse()
            body = resp.read()
            answers[resp.status] += 1
            sizes.append(len(body))
            if resp.status == 429:
                time.sleep(0.001)  # a client that ignores Retry-After, barely
        except OSError:
            answers["error"] += 1
        finally:
            conn.close()
        n += 1


def readers_main(port: int, count: int, stop: Any, out: Any) -> None:
    """``count`` readers as threads, until ``stop`` is set; their answers go to ``out``."""
    answers: Counter = Counter()
    sizes: list[int] = []
    done = threading.Event()
    threads = [threading.Thread(target=reader, args=(port, i, done, answers, sizes)) for i in range(count)]
    for thread in threads:
        thread.start()
    stop.wait()
    done.set()
    for thread in threads:
        thread.join()
    out.put({"answers": dict(answers), "bytes": sum(sizes)})


def main(argv: list[str] | None = None) -> int:
    """The quiet run, then the readers, and the bystanders' figures in both."""
    parser = script_parser(__doc__)
    parser.add_argument("--readers", type=int, default=8, help="reading clients of one address (default 8)")
    parser.add_argument("--games", type=int, default=600, help="finished games in the database (default 600)")
    add_bystander_options(parser)
    parser.add_argument("--http-rate", default=None, metavar="N",
                        help="the server's --http-rate (default: the server's default; 0 lifts the limit)")
    args = parser.parse_args(argv)
    extra = [] if args.http_rate is None else ["--http-rate", args.http_rate]
    with scratch("http-readers") as tmp, Server(tmp / "readers.db", *extra) as server:
        asyncio.run(fill(server.url, args.games))
        log(f"{args.games} games stored")
        quiet = asyncio.run(phase(server.url, args, "calm", server.pid))
        stop, out = mp.Event(), mp.Queue()
        readers = mp.Process(target=readers_main, args=(server.port, args.readers, stop, out))
        readers.start()
        try:
            busy = asyncio.run(phase(server.url, args, "busy", server.pid))
        finally:
            stop.set()
            got = out.get(timeout=120)
            readers.join(30)
    rate = "default" if args.http_rate is None else args.http_rate
    heading(f"HTTP readers: {args.readers} clients of one address reading {', '.join(PAGES)} as fast as they can "
            f"(--http-rate {rate}); bystanders: {args.watchers} pinging every 20 ms, {args.tables} tables moving "
            f"after {args.think:g} s")
    print_phases(quiet, busy, "during the reads")
    answers = ", ".join(f"{status}: {count}" for status, count in sorted(got["answers"].items(), key=str))
    print(f"the readers got {answers}; {got['bytes'] / 1e6:.1f} MB in {busy['seconds']:.1f} s")
    print(f"p99 during the reads {busy['rtt']['p99']:.2f} ms (target under 20 ms: "
          f"{'ok' if busy['rtt']['p99'] < 20 else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
