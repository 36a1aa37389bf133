"""Tournaments: how many games a minute the director runs, and how soon an SPRT decides.

    .venv/bin/python benchmarks/tournament.py                         # both parts
    .venv/bin/python benchmarks/tournament.py --only throughput --entrants 8 --concurrency 16
    .venv/bin/python benchmarks/tournament.py --only sprt --per-move 0.5

* Throughput: a real ``plyhall serve``; ``--entrants`` bots that answer every move at once (raw
  WebSocket clients playing random legal Connect Four moves, in one load process) enter a
  double round robin (colour-swapped pairs, so 4 games per pair of entrants) with
  ``--concurrency``; prints games a minute from start to finish and the server's share of the CPU
  (the target: at least 1,000 Connect Four games a minute).
* SPRT: a gauntlet of the house bot ``master`` against ``minimax-4`` (the server starts both as
  processes, ``--house-bots 2``) with ``--sprt`` (elo0=0, elo1=100 by default), at
  ``--per-move`` seconds a move; prints how many games the test needed and what it decided.

Progress goes to stderr, the figures to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from common import ROOT, Server, cpu_seconds, heading, log, scratch, script_parser

SECRET = "benchmark-organiser"

BOTS = r'''
import asyncio, random, sys
import msgpack
from websockets.asyncio.client import connect
from protocol.games import get_game

url, names = sys.argv[1], sys.argv[2].split(",")
game = get_game("connect4")

async def bot(name, rng):
    async with connect(url, subprotocols=["plyhall.v1.msgpack"], compression=None, ping_interval=None) as ws:
        await ws.send(msgpack.packb({"type": "login", "name": name}))
        states, seats = {}, {}
        async for frame in ws:
            msg = msgpack.unpackb(frame)
            kind = msg["type"]
            if kind == "game_start":
                room = msg["room"]
                states[room] = game.decode_state(msg["state"])
                seats[room] = msg["seat"]
            elif kind == "moved":
                room = msg["room"]
                if room not in states:
                    continue
                states[room] = game.apply(states[room], game.parse_move(msg["notation"], states[room]))
            elif kind == "game_over":
                states.pop(msg["room"], None)
                await ws.send(msgpack.packb({"type": "leave", "room": msg["room"]}))
                continue
            else:
                continue
            if msg["to_move"] == seats.get(room) and game.outcome(states[room]) is None:
                move = rng.choice(game.legal_moves(states[room]))
                await ws.send(msgpack.packb({"type": "move", "room": room, "move": game.notation(move)}))

async def main():
    await asyncio.gather(*(bot(name, random.Random(i)) for i, name in enumerate(names)))

asyncio.run(main())
'''


def get(port: int, path: str) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as resp:
        return json.loads(resp.read())


async def organise(url: str, request: dict[str, Any]) -> dict[str, Any]:
    from client.sdk import Client

    client = Client(url)
    await client.connect()
    await client.login("bench-organiser", organiser=SECRET)
    reply = await client.request({"type": "tournament_create", **request}, timeout=60)
    await client.close()
    return reply["tournament"]


def wait_finished(port: int, tid: str, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        event = get(port, f"/api/tournaments/{tid}")
        if event["status"] in ("finished", "cancelled"):
            return event
        time.sleep(0.1)
    raise SystemExit(f"the tournament did not finish within {timeout:g} s")


def throughput(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    with Server(tmp / "throughput.db", "--organiser-secret", SECRET) as server:
        names = [f"quick{i}" for i in range(args.entrants)]
        bots = subprocess.Popen([sys.executable, "-c", BOTS, server.url, ",".join(names)], cwd=ROOT)
        try:
            time.sleep(2.0)  # the bots log in
            cpu0, load0 = cpu_seconds(server.pid), cpu_seconds(bots.pid)
            began = time.monotonic()
            event = asyncio.run(organise(server.url, {
                "name": "Speed", "game": "connect4", "format": "double-round-robin", "players": names,
                "games_per_pairing": args.games_per_pairing, "concurrency": args.concurrency,
                "time_control": {"per_move": 30}, "start": True}))
            log(f"throughput: {event['progress']['total']} games started")
            event = wait_finished(server.port, event["id"], 1800)
            seconds = time.monotonic() - began
            cpu1, load1 = cpu_seconds(server.pid), cpu_seconds(bots.pid)
        finally:
            bots.terminate()
            bots.wait(30)
    games = event["progress"]["done"]
    return {"games": games, "seconds": seconds, "per_minute": games / seconds * 60,
            "server_cpu": (cpu1 - cpu0) / seconds, "load_cpu": (load1 - load0) / seconds}


def sprt_run(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    with Server(tmp / "sprt.db", "--organiser-secret", SECRET, "--house-bots", "2", stop_timeout=60) as server:
        began = time.monotonic()
        elo0, elo1 = (float(v) for v in args.sprt.split(","))
        event = asyncio.run(organise(server.url, {
            "name": "Master test", "game": args.game, "format": "gauntlet", "local": ["master", "minimax-4"],
            "games_per_pairing": 2, "cycles": args.max_games // 2, "time_control": {"per_move": args.per_move},
            "sprt": {"elo0": elo0, "elo1": elo1, "alpha": 0.05, "beta": 0.05}, "concurrency": 1, "start": True}))
        log(f"sprt: gauntlet of master against minimax-4 started (at most {event['progress']['total']} games)")
        event = wait_finished(server.port, event["id"], 3600)
        seconds = time.monotonic() - began
    return {"event": event, "seconds": seconds, "elo0": elo0, "elo1": elo1}


def main(argv: list[str] | None = None) -> int:
    """Run the parts asked for and print their figures."""
    parser = script_parser(__doc__)
    parser.add_argument("--only", choices=["throughput", "sprt"], help="run one part only")
    parser.add_argument("--entrants", type=int, default=8, help="throughput: entrants (default 8)")
    parser.add_argument("--concurrency", type=int, default=16, help="throughput: games at once (default 16)")
    parser.add_argument("--games-per-pairing", type=int, default=2,
                        help="throughput: games per pairing and cycle (default 2: 112 games for 8 entrants)")
    parser.add_argument("--game", default="connect4", help="sprt: the game (default connect4)")
    parser.add_argument("--per-move", type=float, default=0.5, help="sprt: seconds a move (default 0.5)")
    parser.add_argument("--sprt", default="0,100", help="sprt: elo0,elo1 (default 0,100)")
    parser.add_argument("--max-games", type=int, default=200, help="sprt: games at most (default 200)")
    args = parser.parse_args(argv)
    random.seed(1)
    with scratch("tournament") as tmp:
        if args.only in (None, "throughput"):
            r = throughput(args, tmp)
            ok = "ok" if r["per_minute"] >= 1000 else "MISSED"
            heading(f"Throughput: double round robin of {args.entrants} instant bots (Connect Four), "
                    f"{args.games_per_pairing} games per pairing, concurrency {args.concurrency}")
            print(f"{'games played':<40}{r['games']:>10}")
            print(f"{'seconds from start to the last result':<40}{r['seconds']:>10.1f}")
            print(f"{'games a minute':<40}{r['per_minute']:>10.0f}  target >= 1,000: {ok}")
            print(f"{'server CPU / bots CPU (share of a core)':<40}{r['server_cpu']:>9.0%} / {r['load_cpu']:.0%}")
            sys.stdout.flush()
        if args.only in (None, "sprt"):
            r = sprt_run(args, tmp)
            event, test = r["event"], r["event"]["sprt"]
            # house entrants are named house-LEVEL-N: the gauntlet's master is the one row of its level
            row = next(row for row in event["standings"]["rows"] if row["name"].startswith("house-master"))
            print(f"\nSPRT: gauntlet of master against minimax-4 ({args.game}, {args.per_move:g} s a move), "
                  f"elo0={r['elo0']:g} elo1={r['elo1']:g} alpha=beta=0.05")
            print(f"{'games needed':<40}{test['games']:>10}")
            print(f"{'decision':<40}{test['status']:>10}  ({event.get('stopped_early') or 'no decision'})")
            print(f"{'llr (bounds)':<40}{test['llr']:>10.2f}  ({test['lower_bound']:.2f}, {test['upper_bound']:.2f})")
            print(f"{'master W-D-L':<40}{row['wins']:>4}-{row['draws']}-{row['losses']}")
            print(f"{'minutes':<40}{r['seconds'] / 60:>10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
