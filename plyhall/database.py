"""What the commands that read a server's database share: its ``--db`` option, and opening it or saying in one line
why not."""

from __future__ import annotations

import argparse
import os
import sys

from server.storage import SQLStorage, StorageError, open_existing

DEFAULT_DB = "plyhall.db"


def add_db_option(parser: argparse.ArgumentParser, postgres_hint: str = "a PostgreSQL URL") -> None:
    """The ``--db`` option every command that reads or serves a database takes: ``$PLYHALL_DB`` or plyhall.db."""
    parser.add_argument("--db", default=os.environ.get("PLYHALL_DB", DEFAULT_DB),
                        help=f"database: a SQLite file (default {DEFAULT_DB}, or $PLYHALL_DB), or {postgres_hint}")


def open_database(db: str, command: str) -> SQLStorage | None:
    """The existing database ``db`` for ``plyhall COMMAND``, or None after printing why it cannot be opened."""
    try:
        return open_existing(db)
    except StorageError as exc:
        print(f"plyhall {command}: {exc}", file=sys.stderr)
        return None
