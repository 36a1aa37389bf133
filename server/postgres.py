"""PostgreSQL storage, for deployments that outgrow one SQLite file or share one database between servers.

The SQL is ``server.storage.SQLStorage``'s, unchanged; this class only opens psycopg 3
connections (``autocommit`` on: transactions are begun and committed explicitly, as with SQLite),
takes an advisory lock while the schema is created or migrated (two servers may start at once),
and names the errors that mean the database server went away, so that the writer reconnects and
retries (``server.writer``) instead of failing.
"""

from __future__ import annotations

from typing import Any

from .storage import SQLStorage, StorageError

SCHEMA_LOCK = 3226232  # the advisory lock taken while the schema is created or migrated


def _driver() -> Any:
    try:
        import psycopg
    except ImportError:
        raise StorageError("PostgreSQL needs psycopg 3: pip install 'plyhall[postgres]' (or psycopg[binary])") \
            from None
    return psycopg


class PostgresStorage(SQLStorage):
    """Storage in a PostgreSQL database, shared by any number of servers (each its own ``node``)."""

    placeholder = "%s"

    def __init__(self, url: str, node: str = "main") -> None:
        self.url = url
        psycopg = _driver()
        self.lost_connection = (psycopg.OperationalError, psycopg.InterfaceError)
        try:
            super().__init__(node)
        except psycopg.Error as exc:
            raise StorageError(f"cannot use the PostgreSQL database {self.where}: {str(exc).strip()}") from None

    @property
    def where(self) -> str:
        """The URL without its password, for messages."""
        head, sep, tail = self.url.partition("@")
        if not sep or ":" not in head.split("//", 1)[-1]:
            return self.url
        scheme, _, user = head.partition("//")
        return f"{scheme}//{user.split(':', 1)[0]}:***@{tail}"

    @property
    def shared(self) -> bool:
        """Other servers may use this database at the same time."""
        return True

    def _connect(self) -> Any:
        return _driver().connect(self.url, autocommit=True, connect_timeout=5, application_name="plyhall")

    def _version(self, cur: Any) -> int:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))  # one server migrates at a time
        return super()._version(cur)

    def __repr__(self) -> str:
        return f"<PostgresStorage {self.where} node={self.node}>"
