"""``plyhall db``: database tools; ``plyhall db copy`` copies a whole deployment (games with their moves, names,
open rooms, tournaments, ratings) into another, empty database, SQLite to PostgreSQL and back, and checks the
counts."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from protocol.wording import without_password


def register(subparsers: Any) -> None:
    """Add the ``db`` subcommand and its tools."""
    db = subparsers.add_parser("db", help="database tools", description="Database tools.")
    tools = db.add_subparsers(dest="tool", metavar="TOOL", required=True)
    copy = tools.add_parser(
        "copy", help="copy a whole deployment to another database",
        description="Copy everything (games with their moves, names, open rooms, tournaments) from one database to "
                    "another, empty one, and check the counts: SQLite to PostgreSQL and back. Stop the server first.")
    copy.add_argument("--from", dest="source", required=True,
                      help="a SQLite file's path (or sqlite:///PATH from this folder, sqlite:////PATH from the root) "
                           "or postgresql://...")
    copy.add_argument("--to", dest="target", required=True,
                      help="an empty database: a SQLite file's path (or sqlite:///PATH from this folder, "
                           "sqlite:////PATH from the root) or postgresql://...")
    copy.set_defaults(func=run_db_copy)


def run_db_copy(args: argparse.Namespace) -> int:
    """Copy every table to an empty database, then compare the row counts."""
    from server.storage import TABLES, SQLiteStorage, StorageError, open_existing, open_storage

    opened = []
    try:
        opened.append(open_existing(args.source))  # a mistyped source is said, not made empty and copied
        opened.append(open_storage(args.target))
        for storage in opened:  # a server writing either file meanwhile would leave counts that differ
            if isinstance(storage, SQLiteStorage):
                storage.own()
    except (OSError, StorageError) as exc:
        for storage in opened:
            storage.close()
        print(f"plyhall db copy: {exc}", file=sys.stderr)
        return 1
    source, target = opened
    try:
        if any(target.counts().values()):
            print(f"plyhall db copy: {without_password(args.target)} is not empty; copy into a new, empty database",
                  file=sys.stderr)
            return 1
        for table in TABLES:
            batch: list[tuple] = []
            for row in source.rows(table):
                batch.append(tuple(row))
                if len(batch) == 1000:
                    target.insert_rows(table, batch)
                    batch = []
            if batch:
                target.insert_rows(table, batch)
        before, after = source.counts(), target.counts()
        for table in TABLES:
            print(f"{table:<12}{before[table]:>10} -> {after[table]:>10}")
        if before != after:
            print("plyhall db copy: the counts differ", file=sys.stderr)
            return 1
        print(f"copied {sum(after.values())} rows; the counts agree")
        return 0
    finally:
        source.close()
        target.close()
