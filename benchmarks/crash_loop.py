"""Crash loop: kill -9 the server again and again under a load of short games; nothing may be lost.

    .venv/bin/python benchmarks/crash_loop.py                       # 10 kills, 3 s apart, 16 bot pairs
    .venv/bin/python benchmarks/crash_loop.py --cycles 20 --interval 2 --pairs 32

A real ``plyhall serve`` process runs on a temporary SQLite database; a load process runs
``--pairs`` pairs of SDK bots (random Connect Four moves, at once) that seek game after game and,
like any SDK bot, reconnect with backoff when the server goes away. Every few seconds the server
is killed with SIGKILL and started again on the same database and port. Each bot writes down every
move it is told of (``moved``, and the move lists of ``game_start`` after a resume) with its game's
record id.

At the end the announced moves are compared with the stored ones, game by game: a move told to a
player and not stored is **lost**; a move stored twice (or two different moves under one number)
is a **duplicate**; a game a player was told of and that has no record is a lost game. Write-ahead
storage must make all three zero, and the counts of moves announced and stored equal.
Progress goes to stderr, the figures to stdout.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time

from common import ROOT, Server, heading, log, scratch, script_parser

LOAD = r'''
import asyncio, json, random, signal, sys
from client.sdk import FunctionPlayer, RunOptions, run_player

url, pairs, out_path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
announced = {}  # record -> {seq: notation}
rooms = {}  # room -> record

def pick(turn):
    return random.choice(turn.legal_moves)

def seen(msg):
    kind = msg.get("type")
    if kind == "game_start":
        rooms[msg["room"]] = msg["record"]
        moves = announced.setdefault(msg["record"], {})
        for seq, notation in enumerate(msg["moves"], 1):
            moves[seq] = notation
    elif kind == "moved" and msg["room"] in rooms:
        announced.setdefault(rooms[msg["room"]], {})[msg["seq"]] = msg["notation"]

async def main():
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    bots = [asyncio.create_task(run_player(FunctionPlayer(pick), RunOptions(
        name=f"crash{i}", secret=f"pw{i}", url=url, game="connect4", think="thread", max_retries=30,
        on_event=seen, room_options={"time_control": {"per_move": 30}}))) for i in range(2 * pairs)]
    await stop.wait()
    for bot in bots:
        bot.cancel()
    await asyncio.gather(*bots, return_exceptions=True)
    with open(out_path, "w") as f:
        json.dump({record: {str(k): v for k, v in moves.items()} for record, moves in announced.items()}, f)

asyncio.run(main())
'''


def main(argv: list[str] | None = None) -> int:
    """Kill and restart the server under load, then compare the moves announced with those stored."""
    parser = script_parser(__doc__)
    parser.add_argument("--cycles", type=int, default=10, help="how many times the server is killed (default 10)")
    parser.add_argument("--interval", type=float, default=3.0, help="seconds between two kills (default 3)")
    parser.add_argument("--pairs", type=int, default=16, help="pairs of bots playing (default 16)")
    parser.add_argument("--settle", type=float, default=8.0, help="seconds of play after the last restart (default 8)")
    args = parser.parse_args(argv)
    if args.cycles < 1 or args.interval <= 0 or args.pairs < 1:
        parser.error("--cycles and --pairs must be at least 1, --interval positive")
    with scratch("crash") as tmp:
        db, out = tmp / "crash.db", tmp / "announced.json"
        with Server(db, stop_timeout=60) as server:
            load = subprocess.Popen([sys.executable, "-c", LOAD, server.url, str(args.pairs), str(out)], cwd=ROOT,
                                    stderr=subprocess.DEVNULL)
            restarts = []
            try:
                for cycle in range(1, args.cycles + 1):
                    time.sleep(args.interval)
                    server.kill()
                    took = server.restart()
                    restarts.append(took)
                    log(f"kill {cycle}/{args.cycles}: the server was back in {took:.2f} s")
                time.sleep(args.settle)
            finally:
                load.send_signal(signal.SIGTERM)
                load.wait(120)
        announced: dict[str, dict[str, str]] = json.loads(out.read_text())
        with sqlite3.connect(db) as conn:
            rows = conn.execute("SELECT game_id, seq, move FROM moves").fetchall()
            games = dict(conn.execute("SELECT id, status FROM games").fetchall())
        stored: dict[str, dict[str, str]] = {}
        duplicates = 0
        for game_id, seq, move in rows:
            if str(seq) in stored.setdefault(game_id, {}):
                duplicates += 1
            stored[game_id][str(seq)] = move
        lost_games = [g for g in announced if g not in games]
        told = sum(len(moves) for moves in announced.values())
        kept = sum(len(stored.get(g, {})) for g in announced)
        lost_moves = sum(1 for g, moves in announced.items() for seq in moves if seq not in stored.get(g, {}))
        different = sum(1 for g, moves in announced.items() for seq, move in moves.items()
                        if seq in stored.get(g, {}) and stored[g][seq] != move)
        unannounced = kept - (told - lost_moves)
        unsent = [(g, seq, games.get(g), len(stored[g])) for g in announced for seq in stored.get(g, {})
                  if seq not in announced[g]]
        statuses: dict[str, int] = {}
        for status in games.values():
            statuses[status] = statuses.get(status, 0) + 1
    heading(f"Crash loop: {args.cycles} kill -9 of plyhall serve, {args.interval:g} s apart, {args.pairs} bot pairs "
            "playing Connect Four at once")
    mean = sum(restarts) / len(restarts)
    print(f"{'server back after a kill (s), mean / max':<46}{mean:>8.2f} / {max(restarts):.2f}")
    print(f"{'games recorded, by status':<46}{', '.join(f'{k} {v}' for k, v in sorted(statuses.items()))}")
    print(f"{'games the players were told of':<46}{len(announced):>8}")
    print(f"{'moves announced to players':<46}{told:>8}")
    print(f"{'moves stored for those games':<46}{kept:>8}   {'equal' if told == kept else 'NOT EQUAL'}")
    print(f"{'  stored, never announced (died unsent)':<46}{unannounced:>8}")
    ends = sum(int(seq) == last for _, seq, _, last in unsent)
    if unsent:
        print(f"{'    of them the last move of their game':<46}{ends:>8}   (committed, then the process died or the "
              "load stopped before the message left)")
    print(f"{'moves lost (announced, not stored)':<46}{lost_moves:>8}")
    print(f"{'moves stored differently than announced':<46}{different:>8}")
    print(f"{'moves stored twice':<46}{duplicates:>8}")
    print(f"{'games lost (announced, no record)':<46}{len(lost_games):>8}")
    return 0 if not (lost_moves or different or duplicates or lost_games) else 1


if __name__ == "__main__":
    sys.exit(main())
