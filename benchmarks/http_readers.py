"""HTTP readers: can clients of one address reading the largest pages as fast as they can slow everybody's play?

    .venv/bin/python benchmarks/http_readers.py                       # 8 readers, 20 s a phase: about a minute
    .venv/bin/python benchmarks/http_readers.py --readers 8 --seconds 30 --http-rate 0

A real ``plyhall serve`` process (``--http-rate`` as given, else the server's default; ``--rate-limit 1000``, so
that filling it, two messages a game from one connection, is not refused by the per-connection limit of 50 a
second: it was, and the fill then waited for ever for a game that could not end) holding ``--games`` finished
Connect Four games between two names. Bystanders on 127.0.0.1, as in ``ladder_churn.py``: clients pinging every
20 ms and tables of two players moving after ``--think`` seconds. First ``--seconds`` alone (the quiet run), then
as long again while ``--readers`` clients of one address (127.0.0.2, threads of a process of their own) read
``/api/games?limit=500``, ``/api/players/NAME?limit=100`` (the largest pages: ``limit`` is capped there) and
``/api/ratings/connect4`` in turn as fast as the server answers.

Prints a line per phase on stderr, then the bystanders' ping round trip p50/p99/max and their moves a second in
both phases, what the readers got (answers by status, requests a second, bytes), the server's CPU seconds, and the
machine's load average before and after (the figures depend on it). A benchmark prints figures; it passes or
fails nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import multiprocessing as mp
import os
import sys
import threading
import time
from collections import Counter
from typing import Any

from common import Server, heading, log, scratch, script_parser
from ladder_churn import PongLost, add_bystander_options, phase, print_phases
from websockets.asyncio.client import connect

from server.core.room_settings import MAX_GAMES_PER_ROOM

READERS = "127.0.0.2"
PAGES = ("/api/games?limit=500", "/api/players/hoarder0?limit=100", "/api/ratings/connect4")


STALL = 30.0
"""Seconds without the message the fill waits for after which it gives up, saying where (instead of hanging)."""


async def _next(ws: Any, kind: str, where: str) -> dict[str, Any]:
    """The next message of type ``kind`` on ``ws``; an error message or ``STALL`` seconds of silence end the run."""
    while True:
        try:
            msg = json.loads(await asyncio.wait_for(ws.recv(), STALL))
        except TimeoutError:
            raise SystemExit(f"fill: no {kind} within {STALL:g} s ({where})") from None
        if msg["type"] == "error":
            raise SystemExit(f"fill: the server refused a message ({where}): {msg.get('message')}")
        if msg["type"] == kind:
            return msg


async def fill(url: str, games: int) -> None:
    """``games`` finished games of one move each between hoarder0 and hoarder1 (one long series)."""
    json_ws = {"subprotocols": ["plyhall.v1.json"], "max_queue": None}  # b reads nothing: its messages pile up
    async with connect(url, **json_ws) as a, connect(url, **json_ws) as b:
        for ws, name in ((a, "hoarder0"), (b, "hoarder1")):
            await ws.send(json.dumps({"type": "login", "name": name, "secret": f"{name}-secret"}))
            await _next(ws, "welcome", f"{name} logging in")
        await a.send(json.dumps({"type": "create_room", "game": "connect4", "name": "hoard", "games": games,
                                 "time_control": {"per_move": 600}}))
        await a.send(json.dumps({"type": "join", "room": "hoard", "seat": 0}))
        await _next(a, "joined", "creating the room")  # the room exists: the other may join it
        await b.send(json.dumps({"type": "join", "room": "hoard", "seat": 1}))
        for n in range(games):
            msg = await _next(a, "game_start", f"game {n + 1} of {games}")
            mover = a if msg["players"][msg["to_move"]] == "hoarder0" else b
            await mover.send(json.dumps({"type": "move", "room": "hoard", "move": "4"}))
            await mover.send(json.dumps({"type": "resign", "room": "hoard"}))
            await _next(a, "game_over", f"game {n + 1} of {games}")
            if (n + 1) % 100 == 0 and n + 1 < games:
                log(f"  {n + 1} of {games} games stored")


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
    """``count`` readers as threads, until ``stop`` is set; their answers (and how long they read) go to ``out``."""
    answers: Counter = Counter()
    sizes: list[int] = []
    done = threading.Event()
    threads = [threading.Thread(target=reader, args=(port, i, done, answers, sizes)) for i in range(count)]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    stop.wait()
    done.set()
    for thread in threads:
        thread.join()
    out.put({"answers": dict(answers), "bytes": sum(sizes), "seconds": time.monotonic() - began})


def load_average() -> str:
    """The machine's 1, 5 and 15 minute load averages."""
    return " ".join(f"{load:.2f}" for load in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    """The quiet run, then the readers, and the bystanders' figures in both."""
    parser = script_parser(__doc__)
    parser.add_argument("--readers", type=int, default=8, help="reading clients of one address (default 8)")
    parser.add_argument("--games", type=int, default=600, help="finished games in the database (default 600)")
    add_bystander_options(parser)
    parser.add_argument("--http-rate", default=None, metavar="N",
                        help="the server's --http-rate (default: the server's default; 0 lifts the limit)")
    args = parser.parse_args(argv)
    if args.readers < 1 or not 1 <= args.games <= MAX_GAMES_PER_ROOM or args.seconds <= 0:
        parser.error(f"--readers must be at least 1, --games from 1 to {MAX_GAMES_PER_ROOM} (one room's series), and "
                     "--seconds above 0")
    try:
        return measure(args)
    except PongLost as exc:  # a bystander's ping went unanswered: no figures, and a clear line why
        print(f"http_readers: {exc}", file=sys.stderr)
        return 1


def measure(args: argparse.Namespace) -> int:
    """The two phases on a filled server, and the figures printed."""
    extra = ["--rate-limit", "1000"] + ([] if args.http_rate is None else ["--http-rate", args.http_rate])
    load_before = load_average()
    log(f"load average {load_before}; starting the server")
    with scratch("http-readers") as tmp, Server(tmp / "readers.db", *extra) as server:
        log(f"filling it with {args.games} one-move games")
        asyncio.run(fill(server.url, args.games))
        log(f"{args.games} games stored; the quiet run ({args.seconds:g} s)")
        quiet = asyncio.run(phase(server.url, args, "calm", server.pid))
        log(f"the quiet run is done; {args.readers} readers start, and the bystanders again ({args.seconds:g} s)")
        stop, out = mp.Event(), mp.Queue()
        readers = mp.Process(target=readers_main, args=(server.port, args.readers, stop, out))
        readers.start()
        try:
            busy = asyncio.run(phase(server.url, args, "busy", server.pid))
        finally:
            stop.set()
            log("the run during the reads is done; stopping the readers")
            got = out.get(timeout=120)
            readers.join(30)
    rate = "default" if args.http_rate is None else args.http_rate
    heading(f"HTTP readers: {args.readers} clients of one address reading {', '.join(PAGES)} as fast as they can "
            f"(--http-rate {rate}); bystanders: {args.watchers} pinging every 20 ms, {args.tables} tables moving "
            f"after {args.think:g} s")
    print_phases(quiet, busy, "during the reads")
    answers = ", ".join(f"{status}: {count}" for status, count in sorted(got["answers"].items(), key=str))
    requests = sum(got["answers"].values())
    print(f"the readers got {answers} ({requests / got['seconds']:.1f} requests a second, "
          f"{got['answers'].get(429, 0) / got['seconds']:.1f} of them 429); {got['bytes'] / 1e6:.1f} MB in "
          f"{got['seconds']:.1f} s")
    print(f"p99 during the reads {busy['rtt']['p99']:.2f} ms (target under 20 ms: "
          f"{'ok' if busy['rtt']['p99'] < 20 else 'MISSED'}); quiet run p99 {quiet['rtt']['p99']:.2f} ms")
    print(f"load average (1, 5, 15 min) before {load_before}, after {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
