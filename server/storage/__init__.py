"""Storage: games (running and ended) with every move, open rooms, names, tournaments, behind one interface.

``base``      the interface (:class:`Storage`, :class:`StorageError`, the tables)
``records``   the durable writes the sans-I/O core produces, and what a starting server reads back
``sql``       all the SQL, portable, and the schema's migrations
``sqlite``    the embedded default; ``postgres``: a database server shared by several servers
``writer``    group commits of the writes, on the event loop or a thread of their own
``spill``     writes a stopping server could not commit, kept for the next start

:func:`open_storage` makes a storage from a ``--db`` value.
"""

from __future__ import annotations

from .base import TABLES, Deposed, Storage, StorageError, database_error
from .sql import SQLStorage
from .sqlite import SQLiteStorage


def sqlite_path(target: str) -> str | None:
    """The file a ``--db`` value names when it is a SQLite database (a path, or ``sqlite:///path``); else None."""
    if target.startswith("sqlite:///"):
        return target.removeprefix("sqlite:///")
    return None if "://" in target else target


def open_storage(target: str, node: str = "main") -> SQLStorage:
    """The storage a ``--db`` value names: a SQLite file path (or ``sqlite:///path``), or a PostgreSQL
    URL (``postgresql://user:password@host/dbname``); ``node`` names this server among those sharing it."""
    path = sqlite_path(target)
    if path is not None:
        _refuse_relative_mistaken(target, path)
        _refuse_foreign(path)
        return SQLiteStorage(path, node)
    if target.startswith(("postgresql://", "postgres://")):
        from .postgres import PostgresStorage

        return PostgresStorage(target, node)
    scheme = target.split("://", 1)[0]
    raise StorageError(f"unknown database {scheme}://...; use a SQLite file path, sqlite:///PATH or "
                       "postgresql://USER:PASSWORD@HOST/DBNAME")


def _refuse_relative_mistaken(target: str, path: str) -> None:
    """StorageError for ``sqlite:///tmp/x.db`` whose folder is missing here but exists from the root: the URL is
    relative to the working folder, as SQLAlchemy reads it (``sqlite:////tmp/x.db`` names /tmp/x.db)."""
    import os

    folder = os.path.dirname(path)
    if target.startswith("sqlite:///") and folder and not os.path.isabs(path) and not os.path.isdir(folder) \
            and os.path.isdir("/" + folder):
        raise StorageError(f"{target}: the folder {os.path.abspath(folder)} does not exist. sqlite:///PATH names a "
                           f"path from this folder, as SQLAlchemy reads it; for /{path} write sqlite:////{path}")


def _refuse_foreign(path: str) -> None:
    """StorageError when ``path`` is another program's SQLite database: opening it would add Plyhall's tables to it
    (and turn it to write-ahead logging) before anything noticed; a mistyped ``--db`` must leave such a file alone."""
    import os

    from .sqlite import foreign_tables

    if path != ":memory:" and os.path.isfile(path) and os.path.getsize(path) > 0:
        tables = foreign_tables(path)
        if tables:
            raise StorageError(f"{path} is not a Plyhall database (its tables: {', '.join(tables[:8])})")


def schema_version_of(target: str) -> int | None:
    """The schema version an existing database is at, read without changing it (0: made before versions were kept;
    None: no Plyhall tables, or it cannot be read)."""
    import contextlib

    path = sqlite_path(target)
    try:
        if path is not None:
            import sqlite3

            with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
                names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                if "schema_version" not in names:
                    return 0 if {"games", "moves"} <= names else None
                return int(conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] or 0)
        import psycopg

        with psycopg.connect(target, connect_timeout=10) as conn:
            if conn.execute("SELECT to_regclass('schema_version')").fetchone()[0] is None:
                return 0 if conn.execute("SELECT to_regclass('games')").fetchone()[0] is not None else None
            return int(conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] or 0)
    except Exception:  # unreadable here: opening it says why
        return None


def open_existing(target: str, upgrade: bool = False) -> SQLStorage:
    """:func:`open_storage` for a command that reads a database which must exist already (``export``,
    ``ratings``, ``analyse``): ``StorageError`` with a one-line reason when it cannot be opened. A database of an
    older schema is refused unless ``upgrade``: reading it would upgrade it for good, and the Plyhall that wrote it,
    still serving it or rolled back to, could not open it again."""
    import os

    from .schema import SCHEMA_VERSION
    from .sqlite import DEFAULT_FILE, check_file_path

    path = sqlite_path(target)
    if path is not None:
        _refuse_relative_mistaken(target, path)
        check_file_path(path)  # not empty, nor a folder
        if not os.path.isfile(path):  # (opening it would make it)
            raise StorageError(f"no database file {path}")
        if os.path.getsize(path) == 0:  # SQLite would take it for a new database, and write one into it
            raise StorageError(f"{path} is empty, not a database (plyhall serve --db {path} makes one there; "
                               f"the default is {DEFAULT_FILE})")
    version = None if upgrade else schema_version_of(target)
    if version is not None and version < SCHEMA_VERSION:
        from protocol.wording import without_password

        shown = without_password(target)
        raise StorageError(f"{shown} is at schema version {version}, older than this Plyhall's ({SCHEMA_VERSION}); "
                           "reading it would upgrade it for good, and the Plyhall that wrote it could not open it "
                           f"again. Upgrade it on purpose with: plyhall db upgrade --db {shown} (or read it with the "
                           "Plyhall that wrote it)")
    try:
        return open_storage(target)
    except OSError as exc:
        raise StorageError(str(exc)) from None


__all__ = ["TABLES", "Deposed", "SQLStorage", "SQLiteStorage", "Storage", "StorageError", "database_error",
           "open_existing", "open_storage", "schema_version_of", "sqlite_path"]
