"""``plyhall export``: the recorded games of a server's database as JSON lines, one game a line, oldest first
(with the master engines' analysis of a game, where it was analysed)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from plyhall.database import add_db_option, open_database, tournament_id
from protocol.games import GAMES
from protocol.wording import without_password


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


def _is_the_database(output: str, db: str) -> bool:
    """Whether the file ``output`` is the SQLite database ``db`` or one of its side files (writing it would empty
    the database, under a running server too)."""
    from server.storage import sqlite_path

    file = sqlite_path(db)
    if file is None:
        return False
    path = os.path.realpath(file)
    return os.path.realpath(output) in (path, path + "-wal", path + "-shm", path + "-journal")


def run_export(args: argparse.Namespace) -> int:
    """Write records as JSON lines."""
    if args.output and _is_the_database(args.output, args.db):
        print(f"plyhall export: --output {args.output} is the database itself; give another file", file=sys.stderr)
        return 2
    storage = open_database(args.db, "export")
    if storage is None:
        return 1
    records: Any = None
    try:
        if args.tournament is not None:
            args.tournament = tournament_id(storage, args.tournament, args.db)
        if args.record:  # looked up before the output is opened: a wrong id leaves an existing file as it was
            record = storage.get_game(args.record)
            if record is None:
                raise LookupError(f"no game with id {args.record} in {without_password(args.db)}")
            records = [record]
        out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    except (LookupError, OSError) as exc:  # NoSuchTournament, or no such game
        storage.close()
        reason = f"cannot write {args.output}: {exc.strerror}" if isinstance(exc, OSError) else str(exc)
        print(f"plyhall export: {reason}", file=sys.stderr)
        return 1
    count = 0
    try:
        if records is None:
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
