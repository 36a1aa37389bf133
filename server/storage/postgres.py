"""PostgreSQL storage, for deployments that outgrow one SQLite file or share one database between servers.

The SQL is ``server.storage.sql.SQLStorage``'s, unchanged; this class only opens psycopg 3
connections (``autocommit`` on: transactions are begun and committed explicitly, as with SQLite),
takes an advisory lock while the schema is created or migrated (two servers may start at once),
and names the errors that mean the database server went away, so that the writer reconnects and
retries (``server.storage.writer``) instead of failing.
"""

from __future__ import annotations

import time
from typing import Any

from .base import StorageError
from .records import Restored
from .sql import SQLStorage

ADOPTION_WAIT = 10.0  # seconds a starting node waits for another node to finish adopting its rooms
SCHEMA_LOCK = 3226232  # the advisory lock taken while the schema is created or migrated
NODE_LOCK = 3226233  # with the node name's hash: held by the one server running as that node
RATINGS_LOCK = 3226234  # held by the transaction that rates a result: one rating update at a time, across servers


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

    def own(self) -> None:
        """Hold an advisory lock for this node on a connection of its own, for as long as this server runs (the
        database server drops it when the connection ends, however it ends): a second server with the same
        ``--node`` stops at once with a message naming the first."""
        if getattr(self, "_owner", None) is not None:
            return
        import os
        import socket

        psycopg = _driver()
        me = f"plyhall serve node={self.node} pid={os.getpid()} host={socket.gethostname()}"[:63]
        try:
            owner = psycopg.connect(self.url, autocommit=True, connect_timeout=5, application_name=me)
            deadline = time.monotonic() + ADOPTION_WAIT
            while True:
                got = owner.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))",
                                    (NODE_LOCK, self.node)).fetchone()[0]
                rows = [] if got else owner.execute(
                    "SELECT application_name, client_addr, backend_start FROM pg_stat_activity "
                    "WHERE application_name LIKE %s AND pid <> pg_backend_pid()",
                    (f"plyhall serve node={self.node} %",)).fetchall()
                if got or rows or time.monotonic() > deadline:
                    break
                time.sleep(0.2)  # no server holds it: another node is adopting this node's rooms, for a moment
            if not got:
                owner.close()
                other = "; ".join(f"{name} from {addr or 'a local socket'} since {start:%Y-%m-%d %H:%M:%S}"
                                  for name, addr, start in rows) or "another server"
                raise StorageError(f"node {self.node} of {self.where} is run by another Plyhall server ({other}); "
                                   "stop it first, or start this one with another --node")
        except psycopg.Error as exc:
            raise StorageError(f"cannot use the PostgreSQL database {self.where}: {str(exc).strip()}") from None
        self._owner = owner

    @property
    def spill_path(self) -> str | None:
        """In the working directory: ``plyhall-NODE.spill`` (the database may be on another machine)."""
        return f"plyhall-{self.node}.spill"

    def close(self) -> None:
        """Close every connection, the one holding this node's lock last."""
        super().close()
        owner = getattr(self, "_owner", None)
        if owner is not None:
            try:
                owner.close()
            except Exception:  # the database server is gone: so is the lock
                pass
            self._owner = None

    def nodes(self) -> list[str]:
        """Every node with rooms or tournaments stored here."""
        return sorted(node for (node,) in self._read("SELECT node FROM rooms UNION SELECT node FROM tournaments"))

    def adopt(self, node: str) -> Restored | None:
        """Take over ``node``'s rooms and tournaments when no server holds that node's lock any more (its
        process died, and with it the connection that held the lock). The lock is taken for the move, so two
        servers never adopt the same node and a node that is merely cut off from Redis is never robbed."""
        if node == self.node:
            return None
        with self._connect() as conn:
            if not conn.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", (NODE_LOCK, node)).fetchone()[0]:
                return None
            try:
                restored = self.load(node)
                if not restored.rooms and not restored.tournaments:
                    return restored
                with conn.transaction():
                    conn.execute("UPDATE rooms SET node = %s WHERE node = %s", (self.node, node))
                    conn.execute("UPDATE tournaments SET node = %s WHERE node = %s", (self.node, node))
                return restored
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (NODE_LOCK, node))

    snapshot_begin = "BEGIN ISOLATION LEVEL REPEATABLE READ"

    def _lock_ratings(self, cur: Any) -> None:
        """Rated results are stored one transaction at a time across every server sharing the database (the
        ratings of a result depend on every result rated before it)."""
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (RATINGS_LOCK,))

    def _version(self, cur: Any) -> int:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))  # one server migrates at a time
        return super()._version(cur)

    def __repr__(self) -> str:
        return f"<PostgresStorage {self.where} node={self.node}>"
