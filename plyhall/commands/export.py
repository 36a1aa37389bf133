"""``plyhall export``: the recorded games of a server's database as JSON lines, one game a line, oldest first
(with the master engines' analysis of a game, where it was analysed)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from plyhall.database import NoSuchTournament, add_db_option, open_database, tournament_id
from protocol.games import GAMES


def register(subparsers: Any) -> None:
    """Add the ``export`` subcommand."""
    export = subparsers.add_parser(
        "export", help="write recorded games as JSON lines",
        description="Write recorded games from a server database as JSON lines (one game a line, oldest first).")
    add_db_option(export)
    export.add_argument("--game", choices=sorted(GAMES), help="only games of this game type")
    export.add_argument("--id", dest="record", help="only the game with this record id")
    export.add_argument("--tournament", metavar="ID", help="only the games of this tournament (its id or its name)")
    export.add_argument("--output", "-o", help="file to write (default standard output)")
    export.set_defaults(func=run_export)


def run_export(args: argparse.Namespace) -> int:
    """Write records as JSON lines."""
    storage = open_database(args.db, "export")
    if storage is None:
        return 1
    try:
        if args.tournament is not None:
            args.tournament = tournament_id(storage, args.tournament, args.db)
        out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    except (NoSuchTournament, OSError) as exc:
        storage.close()
        reason = f"cannot write {args.output}: {exc.strerror}" if isinstance(exc, OSError) else str(exc)
        print(f"plyhall export: {reason}", file=sys.stderr)
        return 1
    count = 0
    try:
        if args.record:
            record = storage.get_game(args.record)
            if record is None:
                print(f"plyhall export: no game with id {args.record} in {args.db}", file=sys.stderr)
                return 1
            records: Any = [record]
        else:
            records = storage.iter_games(tournament=args.tournament, game=args.game)
        for record in records:
            analysis = storage.get_analysis(record["id"])
            if analysis is not None:  # the master engines' verdict on every move, when the game was analysed
                record["analysis"] = analysis
            out.write(json.dumps(record) + "\n")
            count += 1
    finally:
        if out is not sys.stdout:
            out.close()
        storage.close()
    print(f"exported {count} game{'' if count == 1 else 's'}", file=sys.stderr)
    return 0
