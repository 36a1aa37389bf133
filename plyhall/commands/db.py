"""``plyhall db``: database tools; ``plyhall db copy`` copies a whole deployment (games with their moves, names,
open rooms, tournaments, ratings) into another, empty database, SQLite to PostgreSQL and back, and checks the
counts; ``plyhall db upgrade`` brings an older Plyhall's database to this one's schema."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from plyhall.database import add_db_option
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
    upgrade = tools.add_parser(
        "upgrade", help="upgrade a database of an older Plyhall to this one's schema",
        description="Upgrade a database made by an older Plyhall to this one's schema (plyhall serve does it when it "
                    "starts; export, ratings, analyse and db copy refuse an older one rather than upgrade it behind "
                    "an older server's back). The older Plyhall cannot open it afterwards: back it up first.")
    add_db_option(upgrade)
    upgrade.set_defaults(func=run_db_upgrade)


def _copy_rows(source: Any, target: Any, tables: Sequence[str]) -> None:
    """Every row of ``tables`` from ``source`` into ``target``, a thousand at a time."""
    for table in tables:
        batch: list[tuple] = []
        for row in source.rows(table):
            batch.append(tuple(row))
            if len(batch) == 1000:
                target.insert_rows(table, batch)
                batch = []
        if batch:
            target.insert_rows(table, batch)


def _same_database(source: str, target: str) -> bool:
    """True when ``source`` and ``target`` name one database (the same SQLite file, however written; the same
    PostgreSQL URL): a copy into it would be refused as in use by another server, naming this very command."""
    from server.storage import sqlite_path

    paths = [sqlite_path(source), sqlite_path(target)]
    if paths[0] is not None and paths[1] is not None:
        return os.path.realpath(paths[0]) == os.path.realpath(paths[1])
    return source == target


def run_db_copy(args: argparse.Namespace) -> int:
    """Copy every table to an empty database, then compare the row counts."""
    from server.storage import TABLES, SQLiteStorage, StorageError, open_existing, open_storage

    if _same_database(args.source, args.target):
        print(f"plyhall db copy: --from and --to are the same database ({without_password(args.target)}); copy into "
              "a new, empty one", file=sys.stderr)
        return 1
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
        _copy_rows(source, target, TABLES)
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


def run_db_upgrade(args: argparse.Namespace) -> int:
    """Bring an existing database to this Plyhall's schema, saying from which version to which."""
    from server.storage import StorageError, open_existing, schema_version_of, sqlite_path
    from server.storage.schema import SCHEMA_VERSION
    from server.storage.sqlite import take_lock

    shown = without_password(args.db)
    before = schema_version_of(args.db)
    try:
        path = sqlite_path(args.db)
        if path is not None and os.path.isfile(path):  # not under a running server's feet: its lock is asked first
            take_lock(path).close()
        open_existing(args.db, upgrade=True).close()
    except (OSError, StorageError) as exc:
        print(f"plyhall db upgrade: {exc}", file=sys.stderr)
        return 1
    if before == SCHEMA_VERSION:
        print(f"{shown} is at schema version {SCHEMA_VERSION} already: nothing to do")
    else:
        print(f"{shown}: upgraded from schema version {before} to {SCHEMA_VERSION}")
    return 0
