"""Analysis: games analysed a minute per game type at the default node budget, and play latency while analysis runs.

    .venv/bin/python benchmarks/analysis.py                         # both parts, defaults
    .venv/bin/python benchmarks/analysis.py --games-per-type 2 --only throughput
    .venv/bin/python benchmarks/analysis.py --games 1000 --scale-seconds 20 --only latency

* Throughput: ``--games-per-type`` games of each game (novice against random, seeded, played with the
  reference rules) analysed one after another by one analysis worker, the very process the server starts
  (``python -m client.runner.analyse``, at its lower priority); games a minute and positions a second per
  game type, the first game of each type (which loads the engine) included.
* Latency: ``benchmarks/server_load.py``'s scale phase (``--games`` concurrent games with a spectator each,
  bots thinking about a second a move) twice in one run: alone, and with ``--workers`` analysis workers busy
  analysing Amazons games throughout (as a server with ``--analyse-finished`` would be while its games end).
  The worker is a process of its own, which the server only feeds and reads, so running it beside the server
  loads the machine as the server's own would. Prints the move relay latency p50/p99 of both runs and the ratio.

Progress goes to stderr, figures to stdout. Figures depend on the machine and whatever else runs on it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import threading
import time
from typing import Any

import server_load  # benchmarks/ is on sys.path when run as a script; it imports common (the checkout on sys.path)
from common import cpu_seconds, heading, log, scratch, script_parser, table_header

GAME_IDS = ["connect4", "santorini", "amazons", "magnetic-cave", "quarto"]
WORKER = [sys.executable, "-m", "client.runner.analyse"]


def sample_game(game_id: str, seed: int) -> list[str]:
    """A novice-against-random game of ``game_id``, as notation."""
    from bots import make_bot
    from protocol.games import GAMES

    game = GAMES[game_id]
    bots = [make_bot(game_id, "novice", seed), make_bot(game_id, "random", seed + 1)]
    state, moves = game.initial_state(), []
    while game.outcome(state) is None:
        move = bots[game.to_move(state)].choose(state)
        moves.append(game.notation(move))
        state = game.apply(state, move)
    return moves


def throughput(games_per_type: int, seed: int) -> list[dict[str, Any]]:
    """Analyse the sample games of every game type in one worker; figures per type."""
    from server.io.analysis import Worker

    async def run() -> list[dict[str, Any]]:
        worker = Worker(WORKER)
        rows = []
        try:
            for game_id in GAME_IDS:
                games = [sample_game(game_id, seed + i) for i in range(games_per_type)]
                positions = sum(len(moves) + 1 for moves in games)
                started = time.perf_counter()
                exact = 0
                for i, moves in enumerate(games):
                    log(f"throughput: {game_id} game {i + 1}/{len(games)} ({len(moves)} moves)")
                    analysis = await worker.analyse({"id": i, "game": game_id, "moves": moves}, lambda d, t: None)
                    exact += sum(p["exact"] for p in analysis["positions"])
                seconds = time.perf_counter() - started
                rows.append({"game": game_id, "games": len(games), "positions": positions, "seconds": seconds,
                             "per_minute": 60 * len(games) / seconds, "positions_s": positions / seconds,
                             "exact": exact / positions})
        finally:
            await worker.close()
        return rows

    return asyncio.run(run())


class BusyWorkers:
    """``count`` analysis workers kept busy with Amazons games (their dearest positions) until stopped."""

    def __init__(self, count: int, seed: int) -> None:
        self.games = [sample_game("amazons", seed + i) for i in range(4)]
        self.procs = [subprocess.Popen(WORKER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                      for _ in range(count)]
        self.analysed = 0
        self.positions = 0  # positions valued (the worker's progress lines)
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._feed, args=(proc,), daemon=True) for proc in self.procs]

    def _feed(self, proc: subprocess.Popen) -> None:
        number = 0
        while not self._stop.is_set():
            moves = self.games[number % len(self.games)]
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps({"id": number, "game": "amazons", "moves": moves}) + "\n")
            proc.stdin.flush()
            while line := proc.stdout.readline():
                answer = json.loads(line)
                if "progress" in answer:
                    self.positions += 1
                elif "analysis" in answer or "error" in answer:
                    break
            if not line:
                return
            self.analysed += 1
            number += 1

    def __enter__(self) -> BusyWorkers:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        for proc in self.procs:
            proc.kill()
            proc.wait()


def latency(args: argparse.Namespace, tmp: Any) -> tuple[dict[str, Any], dict[str, Any], dict[str, float]]:
    """The scale phase alone and with busy analysis workers."""
    scale_args = argparse.Namespace(
        games=args.games, spectators=1, scale_seconds=args.scale_seconds, jitter=0.25, scale_procs=2, seed=args.seed,
        database="sqlite", loop=server_load.event_loop.default_event_loop())
    server_load.raise_open_files(20_000)
    runs = {name: tmp / name for name in ("alone", "loaded")}  # a fresh database each: the same names play
    for folder in runs.values():
        folder.mkdir()
    log("latency: the scale phase alone")
    alone = server_load.scale(scale_args, runs["alone"])
    log(f"latency: the scale phase with {args.workers} analysis worker(s) busy")
    with BusyWorkers(args.workers, args.seed) as busy:
        before = sum(cpu_seconds(proc.pid) for proc in busy.procs)
        loaded = server_load.scale(scale_args, runs["loaded"])
        work = {"games": busy.analysed, "positions": busy.positions,
                "cpu": sum(cpu_seconds(proc.pid) for proc in busy.procs) - before}
    return alone, loaded, work


def main(argv: list[str] | None = None) -> int:
    """Run the parts asked for and print their tables."""
    parser = script_parser(__doc__)
    parser.add_argument("--games-per-type", type=int, default=3, help="throughput: games of each type (default 3)")
    parser.add_argument("--games", type=int, default=1000, help="latency: concurrent games (default 1000)")
    parser.add_argument("--scale-seconds", type=float, default=20.0, help="latency: seconds measured (default 20)")
    parser.add_argument("--workers", type=int, default=1, help="latency: busy analysis workers (default 1)")
    parser.add_argument("--only", choices=["throughput", "latency"], help="run one part only")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    args = parser.parse_args(argv)
    if min(args.games_per_type, args.games, args.workers) < 1 or args.scale_seconds <= 0:
        parser.error("the counts must be at least 1 and the window positive")
    random.seed(args.seed)
    if args.only in (None, "throughput"):
        rows = throughput(args.games_per_type, args.seed)
        heading("Analysis throughput: one worker, the default node budget, novice v random games")
        table_header(f"{'game':<14} {'games':>5} {'positions':>9} {'seconds':>8} {'games/min':>9} {'pos/s':>7} "
                     f"{'exact':>6}")
        for r in rows:
            print(f"{r['game']:<14} {r['games']:>5} {r['positions']:>9} {r['seconds']:>8.1f} {r['per_minute']:>9.2f} "
                  f"{r['positions_s']:>7.1f} {r['exact']:>6.0%}")
        sys.stdout.flush()
    if args.only in (None, "latency"):
        with scratch("analysis") as tmp:
            alone, loaded, work = latency(args, tmp)
        heading(f"Play latency at {args.games} games (+1 spectator each), alone and beside {args.workers} busy "
                "analysis worker(s)")
        table_header(f"{'run':<22} {'moves':>7} {'p50 ms':>8} {'p99 ms':>8} {'server CPU':>10}")
        for name, r in (("alone", alone), ("analysis running", loaded)):
            lat = r["latency"]
            print(f"{name:<22} {r['moves']:>7} {lat['p50']:>8.1f} {lat['p99']:>8.1f} "
                  f"{r['server_cpu']:>10.0%}")
        print(f"p99 with analysis / alone: {loaded['latency']['p99'] / max(alone['latency']['p99'], 1e-9):.2f}; "
              f"meanwhile the analysis used {work['cpu']:.1f} CPU seconds and valued {work['positions']} Amazons "
              f"positions ({work['games']} whole games)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
