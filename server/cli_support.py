"""What the server's commands share: opening the database a command reads, or saying in one line why not."""

from __future__ import annotations

import sys

from .storage import SQLStorage, StorageError, open_existing


def open_database(db: str, command: str) -> SQLStorage | None:
    """The existing database ``db`` for ``plyhall COMMAND``, or None after printing why it cannot be opened."""
    try:
        return open_existing(db)
    except StorageError as exc:
        print(f"plyhall {command}: {exc}", file=sys.stderr)
        return None
