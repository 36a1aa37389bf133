"""PostgreSQL storage, for deployments that outgrow one SQLite file or share one database between servers.

The SQL is ``server.storage.sql.SQLStorage``'s, unchanged; this class only opens psycopg 3
connections (``autocommit`` on: transactions are begun and committed explicitly, as with SQLite),
takes an advisory lock while the schema is created or migrated (two servers may start at once),
and names the errors that mean the database server went away, so that the writer reconnects and
retries (``server.storage.writer``) instead of failing.

Ownership is fenced (docs/SCALING.md, "Fencing"): each node's process holds an advisory lock for as
long as it runs, and writes with an **epoch**, a fencing token from the sequence ``plyhall_epochs``
kept in ``plyhall_owners`` (node -> its current epoch). Every start, every adoption and every
re-taking of a lost lock takes a new, larger epoch; adopting a node's rooms also gives that node a
new epoch, which its old process does not know. Every write transaction first reads its node's row
``FOR SHARE`` and is refused (:class:`~server.storage.base.Deposed`) unless the epoch is the
writer's, so a deposed process's writes are refused by the database itself, whatever it believes.
"""

from __future__ import annotations

import hashlib
import re
import time
import urllib.parse
from typing import Any

from protocol.wording import without_password

from .base import Deposed, StorageError
from .records import Restored
from .sql import SQLStorage

ADOPTION_WAIT = 10.0  # seconds a starting node waits for another node to finish adopting its rooms
SCHEMA_LOCK = 3226232  # the advisory lock taken while the schema is created or migrated
NODE_LOCK = 3226233  # with the node name's hash: held by the one server running as that node
RATINGS_LOCK = 3226234  # held by the transaction that rates a result: one rating update at a time, across servers
FENCING = ("CREATE SEQUENCE IF NOT EXISTS plyhall_epochs",
           "CREATE TABLE IF NOT EXISTS plyhall_owners (node VARCHAR(64) PRIMARY KEY, epoch BIGINT NOT NULL)")
NEXT_EPOCH = "nextval('plyhall_epochs')"


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
        self._epoch: int | None = None  # the fencing token of this process's writes, once it owns its node
        self._owner: Any = None  # the connection holding this node's lock
        psycopg = _driver()
        self.lost_connection = (psycopg.OperationalError, psycopg.InterfaceError)
        try:
            super().__init__(node)
        except psycopg.Error as exc:
            raise StorageError(f"cannot use the PostgreSQL database {self.where}: {str(exc).strip()}") from None

    @property
    def where(self) -> str:
        """The URL without its password, for messages."""
        return without_password(self.url)

    @property
    def shared(self) -> bool:
        """Other servers may use this database at the same time."""
        return True

    def _connect(self) -> Any:
        return _driver().connect(self.url, autocommit=True, connect_timeout=5, application_name="plyhall")

    def _migrate(self) -> None:
        super()._migrate()
        with self._write_lock, self._transaction() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            for statement in FENCING:
                cur.execute(statement)

    @property
    def epoch(self) -> int | None:
        """The fencing token of this process's writes (None until :meth:`own`)."""
        return self._epoch

    def _fence(self, cur: Any) -> None:
        """Refuse the transaction unless this node's epoch is still this process's (the row is read ``FOR SHARE``:
        an adoption deposing this node waits for the transaction, and the transactions after it see its epoch)."""
        if self._epoch is None:
            return  # a tool (export, copy), not a serving node: it owns no rooms
        cur.execute("SELECT epoch FROM plyhall_owners WHERE node = %s FOR SHARE", (self.node,))
        self._check_epoch(cur.fetchone())

    def _owner_name(self) -> str:
        import os
        import socket

        return f"plyhall serve node={self.node} pid={os.getpid()} host={socket.gethostname()}"[:63]

    def own(self) -> None:
        """Hold an advisory lock for this node on a connection of its own, for as long as this server runs (the
        database server drops it when the connection ends, however it ends), and take a new epoch for its
        writes: a second server with the same ``--node`` stops at once with a message naming the first."""
        if self._owner is not None:
            return
        psycopg = _driver()
        try:
            owner = psycopg.connect(self.url, autocommit=True, connect_timeout=5, application_name=self._owner_name())
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
            with self._write_lock:
                self._epoch = owner.execute(
                    f"INSERT INTO plyhall_owners (node, epoch) VALUES (%s, {NEXT_EPOCH}) ON CONFLICT (node)"
                    " DO UPDATE SET epoch = excluded.epoch RETURNING epoch", (self.node,)).fetchone()[0]
        except psycopg.Error as exc:
            raise StorageError(f"cannot use the PostgreSQL database {self.where}: {str(exc).strip()}") from None
        self._owner = owner

    def check_ownership(self) -> str:
        """Prove this process still owns its node (see :meth:`Storage.check_ownership`): its lock connection
        answers and the node's epoch is still its own; after that connection dropped (a database restart, a
        terminated backend), the lock is taken again and the epoch renewed only if nobody took it meanwhile."""
        if self._epoch is None:
            return "held"
        psycopg = _driver()
        owner = self._owner
        if owner is not None:
            try:
                row = owner.execute("SELECT epoch FROM plyhall_owners WHERE node = %s", (self.node,)).fetchone()
            except psycopg.Error:
                self._owner = None  # the lock went with the connection
                try:
                    owner.close()
                except Exception:  # already broken
                    pass
            else:
                self._check_epoch(row)
                return "held"
        try:
            owner = psycopg.connect(self.url, autocommit=True, connect_timeout=2, application_name=self._owner_name())
        except psycopg.Error as exc:
            raise StorageError(f"cannot reach {self.where} to take node {self.node}'s lock again: "
                               f"{str(exc).strip()}") from None
        try:
            got = owner.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", (NODE_LOCK, self.node)).fetchone()[0]
            if not got:
                raise Deposed(f"node {self.node}'s lock was lost and another server holds it now")
            with self._write_lock:  # no write of this process is in flight with the old epoch
                row = owner.execute(
                    f"UPDATE plyhall_owners SET epoch = {NEXT_EPOCH} WHERE node = %s AND epoch = %s RETURNING epoch",
                    (self.node, self._epoch)).fetchone()
                if row is None:
                    raise Deposed(f"node {self.node} was taken over by another server while its lock was lost")
                self._epoch = row[0]
        except BaseException:
            owner.close()
            raise
        self._owner = owner
        return "retaken"

    def _check_epoch(self, row: Any) -> None:
        """Raise Deposed unless ``row`` (the node's row of ``plyhall_owners``) holds this process's epoch."""
        if row is None or row[0] != self._epoch:
            raise Deposed(f"node {self.node} was taken over by another server (its epoch is now "
                          f"{row[0] if row else 'gone'}, this process's {self._epoch}): its writes are refused")

    @property
    def spill_path(self) -> str | None:
        """In the working directory (the database may be on another machine): ``plyhall-DBNAME-NODE-HASH.spill``,
        the hash that of the database's host, port and name, so that a server started from the same folder on
        another database never stores this one's writes there."""
        parts = urllib.parse.urlsplit(self.url)
        where = f"{parts.hostname}:{parts.port}{parts.path}?{parts.query}"
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", parts.path.lstrip("/"))[:40] or "postgres"
        return f"plyhall-{name}-{self.node}-{hashlib.sha1(where.encode()).hexdigest()[:8]}.spill"

    def close(self) -> None:
        """Close every connection, the one holding this node's lock last."""
        super().close()
        owner = self._owner
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
                with self._writing():
                    with self._transaction() as cur:
                        self._fence(cur)  # only an owner that is not deposed itself adopts
                        # a new epoch for the adopted node: a process of it that still lives is fenced off (this
                        # waits for a write of it in flight, which the load below then sees; for 2 s at most, should
                        # that process be stopped in the middle of one: the next beat tries again)
                        cur.execute("SET LOCAL lock_timeout = '2s'")
                        cur.execute(f"UPDATE plyhall_owners SET epoch = {NEXT_EPOCH} WHERE node = %s", (node,))
                        restored = self.load(node)
                        cur.execute("UPDATE rooms SET node = %s WHERE node = %s", (self.node, node))
                        cur.execute("UPDATE tournaments SET node = %s WHERE node = %s", (self.node, node))
                        epoch = None
                        if self._epoch is not None:  # and a new epoch for this one, for the rooms it owns now
                            cur.execute(f"UPDATE plyhall_owners SET epoch = {NEXT_EPOCH} WHERE node = %s"
                                        " RETURNING epoch", (self.node,))
                            epoch = cur.fetchone()[0]
                    if epoch is not None:  # still holding the writer: no write goes out with the old one
                        self._epoch = epoch
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
