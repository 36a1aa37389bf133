"""``plyhall ratings``: the leaderboard of a game, a player's ratings, and the check that every stored rating is what
the stored results give.

    plyhall ratings --game connect4 [--db plyhall.db] [--limit 50]
    plyhall ratings --player alice
    plyhall ratings --recompute          # exit 0: consistent; 1: the disagreements are listed

It reads the database (a SQLite file or a PostgreSQL URL) directly, as ``plyhall export`` does; a running
server may go on meanwhile.
"""

from __future__ import annotations

import argparse
import datetime
import re
import sys
import time
from typing import Any

from plyhall.database import add_db_option, open_database
from protocol.games import GAMES
from protocol.messages import NAME_PATTERN
from protocol.ratings import PROVISIONAL_DEVIATION, anchor_level, leaderboard_json
from protocol.wording import counted, without_password
from server.core.logins import NAME_HELP

UNRATED_SHOWN = 5
"""The latest unrated games of rated rooms a leaderboard lists under it, with why."""


def register(subparsers: Any) -> None:
    """Add the ``ratings`` subcommand."""
    parser = subparsers.add_parser(
        "ratings", help="show a game's leaderboard, a player's ratings, or check the ratings",
        description="Show the rating leaderboard of a game (--game), a player's ratings (--player), or recompute "
                    "every rating from the stored rated results and compare (--recompute).")
    add_db_option(parser)
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--game", choices=sorted(GAMES), help="the leaderboard of this game")
    what.add_argument("--player", metavar="NAME", help="this player's ratings and latest rated games")
    what.add_argument("--recompute", action="store_true",
                      help="recompute every rating from the stored results; exit 1 when any stored rating differs")
    parser.add_argument("--limit", type=int, default=50, help="rows shown (default 50)")
    parser.set_defaults(func=run_ratings)


def _when(stamp: float | None) -> str:
    if stamp is None:
        return "-"
    return datetime.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M")


def board_text(game: str, rows: list[dict[str, Any]], total: int | None = None) -> str:
    """A leaderboard as a table for the terminal (``?`` marks a provisional rating, ``*`` an anchor); one line when
    nobody is rated yet. ``total``: how many are rated, when ``rows`` are the first of them."""
    if not rows:
        return (f"{game}: no rated players yet (rated games are played on the ladder, plyhall bot --ladder, or in "
                "rated rooms, by claimed names)")
    total = len(rows) if total is None else total
    shown = f", the first {len(rows)} shown (--limit)" if len(rows) < total else ""
    lines = [f"{game}: {total} rated player{'' if total == 1 else 's'}{shown}",
             f"{'rank':>4}  {'name':<32} {'rating':>8} {'dev':>5} {'games':>6} {'W-D-L':>13}  last played"]
    for row in rows:
        mark = "?" if row["provisional"] else "*" if row["anchor"] else " "
        wdl = f"{row['wins']}-{row['draws']}-{row['losses']}"
        lines.append(f"{row['rank']:>4}  {row['name']:<32} {row['rating']:>7.0f}{mark} {row['deviation']:>5.0f} "
                     f"{row['games']:>6} {wdl:>13}  {_when(row['last_played'])}")
    lines.append(f"? provisional (deviation above {PROVISIONAL_DEVIATION:g})   * ladder anchor (rating pinned)")
    return "\n".join(lines)


def _player_text(storage: Any, name: str, limit: int) -> str | None:
    found = storage.player_ratings(name)
    if not found:
        return None
    now = time.time()
    lines = []
    for game, (standing, history) in found.items():
        anchor = anchor_level(name, game) is not None
        row = standing.to_json(now, pinned=anchor)
        mark = "?" if row["provisional"] else "*" if anchor else ""  # as on the board
        lines.append(f"{name} in {game}: {row['rating']:.0f}{mark} "
                     f"+/- {row['deviation']:.0f}, {counted(row['games'], 'game')} "
                     f"({row['wins']}-{row['draws']}-{row['losses']})")
        for event in reversed(history[-limit:]):
            score = {1.0: "won", 0.5: "drew", 0.0: "lost"}[event["score"]]
            lines.append(f"  {_when(event['played_at'])}  {score:<4} vs {event['opponent']:<32} "
                         f"{event['rating']:>7.0f} ({event['change']:+.0f})  {event['id']}")
    return "\n".join(lines)


def run_ratings(args: argparse.Namespace) -> int:
    """Print a leaderboard or a player's ratings, or check every rating against the stored results."""
    if args.limit < 1:
        print("plyhall ratings: --limit must be at least 1", file=sys.stderr)
        return 2
    if args.player is not None and not re.fullmatch(NAME_PATTERN, args.player):
        print(f"plyhall ratings: --player {args.player[:40]!r} is not a player's name: {NAME_HELP}", file=sys.stderr)
        return 2
    storage = open_database(args.db, "ratings")
    if storage is None:
        return 1
    try:
        if args.recompute:
            count, problems = storage.check_ratings()
            for problem in problems:
                print(problem)
            print(f"{count} rated result{'' if count == 1 else 's'}: "
                  + (f"{len(problems)} disagreement{'' if len(problems) == 1 else 's'}" if problems
                     else "every stored rating matches its recomputation"))
            return 1 if problems else 0
        if args.player is not None:
            text = _player_text(storage, args.player, args.limit)
            if text is None:
                print(f"plyhall ratings: {args.player[:40]} has no rated games in {without_password(args.db)}",
                      file=sys.stderr)
                return 1
            print(text)
            return 0
        rows = leaderboard_json(storage.leaderboard(args.game), time.time())
        print(board_text(args.game, rows[:args.limit], len(rows)))
        unrated = storage.unrated_games(args.game, UNRATED_SHOWN)
        if unrated:
            print("latest games of rated rooms that were not rated (docs/RATINGS.md):")
            for game in unrated:
                print(f"  {_when(game['ended_at'])}  {game['id']}  {' vs '.join(game['players'])}: {game['unrated']}")
        return 0
    finally:
        storage.close()
