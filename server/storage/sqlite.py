"""The embedded default: one SQLite file in WAL mode (``synchronous=NORMAL``, a busy timeout), one writer, and
one server that owns the file (a ``flock`` held for its life)."""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from protocol.wording import without_password

from .base import StorageError
from .records import Write
from .sql import SQLStorage

log = logging.getLogger("plyhall.storage")

DEFAULT_FILE = "plyhall.db"

WRITER_BUSY_MS = 250
"""How long a SQLite commit waits for a lock another program holds before it fails (and is retried later)."""


def check_file_path(path: str) -> None:
    """StorageError, saying what to give instead, unless ``path`` can be a database file: not a folder (nor a name
    ending in ``/``, which SQLite would take for a file), in a folder that exists."""
    if not path.strip():
        raise StorageError(f"the database's path is empty; give a file's path, e.g. {DEFAULT_FILE}")
    if path.endswith(("/", os.sep)) or Path(path).is_dir():
        raise StorageError(f"the database {path} is a folder; give a file's path, e.g. "
                           f"{Path(path) / 'plyhall.db'}")
    parent = Path(path).resolve().parent
    if parent.exists() and not parent.is_dir():
        raise StorageError(f"cannot create the database {path}: {parent} is a file, not a folder")
    if not parent.is_dir():
        raise StorageError(f"cannot create the database {path}: folder {parent} does not exist")


def foreign_tables(path: str) -> list[str]:
    """The tables of the SQLite file ``path`` when it is another program's database (it has tables, but neither a
    Plyhall schema version nor, as one made before versions were recorded has, games and moves); none for a Plyhall
    database, and for what SQLite cannot read (said on opening)."""
    try:  # read-only: looking must not write (nor make the file a database)
        with contextlib.closing(sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True)) as conn:
            names = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    except sqlite3.Error:
        return []
    return [] if not names or "schema_version" in names or {"games", "moves"} <= set(names) else sorted(names)


CATCH_UP_PASSES = 12
"""Passive checkpoints a round of the checkpoint thread runs back to back at most (see :func:`catch_up`)."""
UNCAUGHT_WARNING = 30
"""Rounds in a row that :func:`catch_up` did not finish before the checkpoint thread says so in the log."""


def catch_up(conn: sqlite3.Connection, passes: int = CATCH_UP_PASSES) -> bool:
    """Copy the write-ahead log into the database until all of it is copied with no writer in the middle of a
    transaction, so that the writer's next commit starts the log over from its beginning; False when
    ``passes`` passive checkpoints did not get there (the next round tries again).

    A checkpoint copies the frames there were when it began, and SQLite starts the log over only at a write
    transaction that begins with all of it copied. A writer that commits every few milliseconds adds more while a
    checkpoint copies, so one checkpoint a second never got there, and the log grew for ever (36 MB a second at
    5,000 games). Here each pass copies what was written during the one before, until a pass copied everything
    and a check right after it finds that nothing was committed since the pass began (``data_version``) and no
    write transaction is open (``BEGIN IMMEDIATE``, not waiting, rolled back at once: one that began before a pass
    would not start the log over). The passes never wait for the writer nor make it wait; the check holds the
    write lock for some microseconds, and a commit that meets it waits a millisecond (SQLite's busy handler).
    ``conn`` gets a busy timeout of zero. It stops early on a log that is not in WAL mode, and when a pass copies
    nothing new (a reader's snapshot holds the rest back until it ends)."""
    conn.execute("PRAGMA busy_timeout=0")
    copied_before = -1
    for _ in range(passes):
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        _, frames, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        if frames < 0:  # not in WAL mode: no log to copy
            return True
        if copied >= frames:
            quiet = _quiet(conn, version)
            if quiet:
                return True
            if quiet is None:
                time.sleep(WRITER_WAIT)  # the next pass once the transaction has ended
        elif copied == copied_before:  # a reader's snapshot holds the rest back
            return False
        copied_before = copied
    return False


WRITER_WAIT = 0.001
"""Seconds :func:`catch_up` waits when it finds a write transaction open (the server's commit takes well under one)."""


def _quiet(conn: sqlite3.Connection, version: int) -> bool | None:
    """True when no write transaction is open and none was committed since ``conn`` read ``data_version``; False
    when one was committed; None when one is open."""
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError:  # "database is locked": a write transaction is open
        return None
    try:
        return conn.execute("PRAGMA data_version").fetchone()[0] == version
    finally:
        conn.execute("ROLLBACK")


WAL_KEPT_BYTES = 64 << 20
"""The write-ahead log's file is cut back to this size when the writer starts it over (SQLite's
``journal_size_limit``): a log that grew during a long read, which holds checkpoints back, gives its disk space
back once they catch up. A second of 5,000 games writes about 36 MB of it."""


def _unusable(path: str, exc: sqlite3.DatabaseError) -> str:
    """Why the SQLite file ``path`` could not be opened, in words: a file on read-only storage (SQLite needs to
    write beside it, even to read, for its write-ahead log) is not a damaged one."""
    if path != ":memory:" and os.path.exists(path):
        folder = os.path.dirname(os.path.abspath(path))
        mounted_read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)  # (root may write anything else)
        if mounted_read_only or not os.access(path, os.W_OK) or not os.access(folder, os.W_OK):
            where = "the file" if not mounted_read_only and not os.access(path, os.W_OK) else f"its folder {folder}"
            return (f"cannot be opened: {where} is read-only, and SQLite writes beside a database even to read it "
                    f"({exc}); copy it somewhere writable")
    return f"is not a usable Plyhall database: {exc}"


class SQLiteStorage(SQLStorage):
    """The embedded default: one SQLite file in WAL mode, one writer."""

    begin = "BEGIN IMMEDIATE"
    moves_logged = True

    def __init__(self, path: str | Path, node: str = "main") -> None:
        self.path = str(path)
        self._checkpoints: tuple[threading.Event, threading.Thread] | None = None
        self._owner: Any = None  # the open file whose lock makes this server the database's one owner
        self._short_wait = False
        if self.path != ":memory:":
            check_file_path(self.path)
        try:
            super().__init__(node)
        except sqlite3.DatabaseError as exc:
            raise StorageError(f"{self.path} {_unusable(self.path, exc)}") from None

    def _reader(self) -> Any:
        if self.path == ":memory:":  # every connection to :memory: is a database of its own
            return self._writer
        return super()._reader()

    def apply(self, writes: Sequence[Write]) -> None:
        """Commit ``writes`` (on the event loop: the writer waits for a lock briefly, and a locked file fails the
        commit, which the writer retries later, instead of stalling every client)."""
        if not self._short_wait:
            with self._write_lock:
                self._writer.execute(f"PRAGMA busy_timeout={WRITER_BUSY_MS}")
            self._short_wait = True
        super().apply(writes)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=10.0, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=10000")
        return conn

    def _connect_writer(self) -> sqlite3.Connection:
        """The writer's connection keeps its statement journals in memory: a statement that may fail halfway
        inside a transaction (the moves' many-row insert) journals the pages it changes, and past 64 KiB SQLite
        spills that journal into a temporary file, created, written and deleted within the commit (dozens a
        second at saturation). The writer's statements are small; the readers, whose sorts may be large, keep
        the default (files)."""
        conn = self._connect()
        conn.execute("PRAGMA temp_store=MEMORY")
        return conn

    @property
    def commits_inline(self) -> bool:
        """A commit in WAL mode with ``synchronous=NORMAL`` writes to the page cache only: quick."""
        return True

    def checkpoint_in_background(self, interval: float = 1.0) -> None:
        """Move the write-ahead log into the database on a thread of its own, every ``interval`` seconds,
        instead of in the commit that fills it (a checkpoint writes and syncs the file: milliseconds or
        more, which an event loop must not wait for)."""
        if self.path == ":memory:" or self._checkpoints is not None:
            return
        with self._write_lock:
            self._writer.execute("PRAGMA wal_autocheckpoint=0")
            self._writer.execute(f"PRAGMA journal_size_limit={WAL_KEPT_BYTES}")
        stop = threading.Event()

        def run() -> None:
            conn = self._connect()
            uncaught = 0
            try:
                while not stop.wait(interval):
                    try:
                        caught = catch_up(conn)
                    except sqlite3.Error as exc:  # busy now: the next round will do it
                        log.debug("checkpoint skipped: %s", exc)
                        caught = False
                    uncaught = 0 if caught else uncaught + 1
                    if uncaught == UNCAUGHT_WARNING:
                        log.warning("the write-ahead log %s-wal has not been copied into the database for %d s "
                                    "(a long read holds it back, or writes outpace the copying); it grows meanwhile",
                                    self.path, round(uncaught * interval))
                conn.execute("PRAGMA busy_timeout=1000")  # the last one: a locked file must not hold a stop up
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as exc:
                log.warning("the last checkpoint was skipped: %s", exc)
            finally:
                conn.close()

        self._checkpoints = (stop, threading.Thread(target=run, name="plyhall-checkpoint", daemon=True))
        self._checkpoints[1].start()

    def own(self) -> None:
        """Hold an exclusive lock on the database file for as long as this server runs (released by the
        operating system when the process ends, however it ends): a second server on the same file stops
        at once with a message naming the first, instead of both writing and each losing the other's work."""
        if self.path == ":memory:" or self._owner is not None:
            return
        self._owner = take_lock(self.path)

    @property
    def spill_path(self) -> str | None:
        """Beside the database file: ``plyhall.db.spill``."""
        return None if self.path == ":memory:" else self.path + ".spill"

    def close(self) -> None:
        """Move the moves log into the moves table, stop the checkpoints (with a last one), close every connection,
        and give up the ownership."""
        self._settle_before_closing()
        if self._checkpoints is not None:
            stop, thread = self._checkpoints
            stop.set()
            thread.join(30)
            self._checkpoints = None
        super().close()
        if self._owner is not None:
            self._owner.close()
            self._owner = None

    def __repr__(self) -> str:
        return f"<SQLiteStorage {self.path}>"


SECRET_WORDS = ("secret", "password", "token")
"""Options whose values :func:`command_shown` hides (``--organiser-secret``, ``--secret``, ...)."""


def command_shown(argv: list[str]) -> str:
    """A process's command line for a message anybody may read: the values of its secret options (see
    :data:`SECRET_WORDS`, as ``--option VALUE`` or ``--option=VALUE``) and the passwords in its URLs as ``***``."""
    shown: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            shown.append("***")
            hide_next = False
            continue
        option, equals, _ = arg.partition("=")
        secret = arg.startswith("-") and any(word in option.lower() for word in SECRET_WORDS)
        if secret and equals:
            shown.append(f"{option}=***")
            continue
        hide_next = secret
        shown.append(without_password(arg) if "://" in arg else arg)
    return " ".join(shown)


def take_lock(path: str) -> IO[bytes]:
    """The exclusive lock on the database file ``path``, held while the file object returned stays open (the
    operating system lets it go when the process ends, however it ends); StorageError naming the holder when another
    Plyhall process has it."""
    import fcntl

    owner = open(path, "rb")  # noqa: SIM115 - held open by the caller
    try:
        fcntl.flock(owner.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        owner.close()
        raise StorageError(f"{path} is in use by another Plyhall server ({_lock_holder(path)}); stop it first, or "
                           "give this one another --db") from None
    return owner


def _lock_holder(path: str) -> str:
    """Who holds the lock on ``path``, as well as Linux tells (``/proc/locks``): its process id and command."""
    import os

    try:
        inode = os.stat(path).st_ino
        with open("/proc/locks", encoding="ascii", errors="replace") as locks:
            for line in locks:
                parts = line.split()
                if len(parts) > 5 and parts[1] == "FLOCK" and parts[5].rsplit(":", 1)[-1] == str(inode):
                    pid = parts[4]
                    with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                        argv = cmdline.read().decode(errors="replace").strip("\0").split("\0")
                    return f"process {pid}: {command_shown(argv)[:160]}"
    except OSError:
        pass
    return "another process"
