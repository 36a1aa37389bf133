"""Rating ladder: eight bots of known relative strength play rated games on a real server's ladder for a few
minutes; how well the final order of their ratings matches the known order, and how many games that took.

    .venv/bin/python benchmarks/rating_ladder.py --seconds 180 --per-move 1

The field is random < novice < minimax-1 < minimax-2 < minimax-3 < minimax-4 < master = master (a second
master, of equal strength). Each runs as ``plyhall bot --ladder`` with a claimed name against one ``plyhall
serve --ladder-time GAME=SECONDS``, which pairs them by rating (docs/RATINGS.md); nothing else plays, and no
anchor pins the scale, so every rating starts at 1500. Every ``--report`` seconds it prints the rated games so
far and Kendall's tau-b between the known order and the order of the ratings then (1: the same order; the two
masters' tie is left out, as tau-b does); at the end the leaderboard itself. It passes or fails nothing.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
import urllib.request

from common import ROOT, Server, heading, log, scratch, script_parser, table_header

from protocol.games import GAMES

FIELD = ["random", "novice", "minimax-1", "minimax-2", "minimax-3", "minimax-4", "master", "master"]
"""The bots, weakest first; equal levels are equally strong."""
STRENGTH = {level: rank for rank, level in enumerate(dict.fromkeys(FIELD))}


def kendall_tau_b(known: list[float], measured: list[float]) -> float:
    """Kendall's tau-b of two rankings of the same items (ties in either count in neither direction)."""
    concordant = discordant = tied_known = tied_measured = 0
    pairs = 0
    for i in range(len(known)):
        for j in range(i + 1, len(known)):
            pairs += 1
            a, b = known[i] - known[j], measured[i] - measured[j]
            tied_known += a == 0
            tied_measured += b == 0
            if a * b > 0:
                concordant += 1
            elif a * b < 0:
                discordant += 1
    denominator = math.sqrt((pairs - tied_known) * (pairs - tied_measured))
    return (concordant - discordant) / denominator if denominator else float("nan")


def leaderboard(port: int, game: str) -> list[dict]:
    """The server's leaderboard of ``game`` (its rows)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/ratings/{game}", timeout=10) as resp:
        return json.loads(resp.read())["players"]


def standing(rows: list[dict], names: dict[str, str]) -> tuple[int, float]:
    """Rated games so far, and Kendall's tau-b of the field's ratings against its known order."""
    by_name = {row["name"]: row for row in rows}
    games = sum(row["games"] for row in rows) // 2
    known = [STRENGTH[level] for level in names.values()]
    measured = [by_name[name]["rating"] if name in by_name else 1500.0 for name in names]
    return games, kendall_tau_b(known, measured)


def start_bots(url: str, game: str, names: dict[str, str], folder: os.PathLike) -> list[subprocess.Popen]:
    """One ``plyhall bot --ladder`` process per name (its secret in its environment, its output in a file)."""
    bots = []
    for name, level in names.items():
        env = dict(os.environ, PLYHALL_SECRET=f"{name}-secret", PYTHONUNBUFFERED="1")
        with open(os.path.join(folder, f"{name}.log"), "w") as out:
            bots.append(subprocess.Popen([sys.executable, "-m", "plyhall", "bot", "--game", game, "--level", level,
                                          "--name", name, "--ladder", "--url", url], cwd=ROOT, env=env,
                                         stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT))
    return bots


def main(argv: list[str] | None = None) -> int:
    """Run the ladder for a while and print how its ratings ordered the field."""
    parser = script_parser(__doc__)
    parser.add_argument("--game", choices=sorted(GAMES), default="connect4", help="game (default connect4)")
    parser.add_argument("--seconds", type=float, default=180.0, help="how long the ladder runs (default 180)")
    parser.add_argument("--per-move", type=float, default=1.0, help="the ladder's seconds a move (default 1)")
    parser.add_argument("--report", type=float, default=30.0, help="seconds between two progress rows (default 30)")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or not 0.05 <= args.per_move <= 60 or args.report <= 0:
        parser.error("--seconds and --report must be positive, --per-move 0.05 to 60")
    log(f"warming up the {args.game} master engine (numba's cache)")
    subprocess.run([sys.executable, "-m", "plyhall", "bot", "--warm-up", "--game", args.game], cwd=ROOT,
                   check=True, stdout=subprocess.DEVNULL)
    names = {f"{level}-{i}" if FIELD.count(level) > 1 else level: level for i, level in enumerate(FIELD)}
    with scratch("rating-ladder") as tmp, Server(tmp / "ladder.db", "--ladder-time", f"{args.game}={args.per_move:g}",
                                                  "--rated-networks", "127.0.0.1") as server:  # 8 bots, one machine
        bots = start_bots(server.url, args.game, names, tmp)
        began = time.monotonic()
        heading(f"Rating ladder: {len(FIELD)} bots of known strength on the {args.game} ladder, {args.per_move:g} s "
                "a move")
        table_header(f"{'seconds':>8}{'rated games':>13}{'Kendall tau-b':>15}")
        try:
            while (elapsed := time.monotonic() - began) < args.seconds:
                time.sleep(min(args.report, args.seconds - elapsed))
                dead = [name for name, bot in zip(names, bots, strict=True) if bot.poll() is not None]
                if dead:
                    raise SystemExit(f"bots ended early: {', '.join(dead)} (their logs were in {tmp})")
                games, tau = standing(leaderboard(server.port, args.game), names)
                print(f"{time.monotonic() - began:>8.0f}{games:>13}{tau:>15.3f}", flush=True)
            rows = leaderboard(server.port, args.game)
        finally:
            for bot in bots:
                bot.terminate()
            for bot in bots:
                try:
                    bot.wait(10)
                except subprocess.TimeoutExpired:
                    bot.kill()
                    bot.wait()
    games, tau = standing(rows, names)
    heading(f"Final leaderboard after {games} rated games in {args.seconds:g} s")
    table_header(f"{'rank':>4}  {'name':<12}{'level':<11}{'rating':>8}{'dev':>6}{'games':>7}{'W-D-L':>12}")
    for row in rows:
        level = names.get(row["name"], "?")
        record = f"{row['wins']}-{row['draws']}-{row['losses']}"
        print(f"{row['rank']:>4}  {row['name']:<12}{level:<11}{row['rating']:>8.0f}{row['deviation']:>6.0f}"
              f"{row['games']:>7}{record:>12}")
    print(f"\nKendall's tau-b, ratings against the known order: {tau:.3f} ({games} rated games; 1 is the same "
          "order, 0 no agreement)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
