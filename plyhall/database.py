"""What the commands that read a server's database share: its ``--db`` option, and opening it or saying in one line
why not."""

from __future__ import annotations

import argparse
import os
import sys

from protocol.wording import without_password
from server.storage import SQLStorage, StorageError, open_existing
from server.storage.sqlite import DEFAULT_FILE
from server.tournament.director import slug

DEFAULT_DB = DEFAULT_FILE


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


class NoSuchTournament(LookupError):
    """A tournament the database does not hold (the message names those it does)."""


def tournament_id(storage: SQLStorage, key: str, db: str) -> str:
    """The id of the tournament ``key`` names, found as the server finds it (its id, or its name in any letter case
    or spacing), or NoSuchTournament naming the tournaments of ``db``."""
    events = storage.list_tournaments()
    ids = {event["id"] for event in events}
    for candidate in (key, slug(key)):
        if candidate in ids:
            return candidate
    known = ", ".join(f"{event['id']} ({event['name']})" for event in events[-30:]) or "none"
    raise NoSuchTournament(f"no tournament {key!r} in {without_password(db)}; its tournaments: {known}")
