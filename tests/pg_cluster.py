"""A throwaway PostgreSQL cluster for tests: initdb in a temporary folder, started on a free port.

PostgreSQL refuses to run as root, so as root the cluster runs as the ``postgres`` user
(``runuser -u postgres``); as anyone else, as that user. Debian keeps ``initdb`` and ``pg_ctl`` in
the version's own folder (``/usr/lib/postgresql/15/bin``), not on PATH.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

ENABLE = ("PostgreSQL is not installed here: install Debian's postgresql package (apt-get install postgresql) "
          "and the storage tests run against it too; CI sets PLYHALL_REQUIRE_POSTGRES=1, which makes this a failure")


def binaries() -> Path | None:
    """The folder holding initdb and pg_ctl (the newest version), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb and shutil.which("pg_ctl") else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Cluster:
    """One PostgreSQL server in a folder of its own; ``url(db)`` connects as the ``postgres`` superuser."""

    def __init__(self) -> None:
        bin_dir = binaries()
        if bin_dir is None:
            raise FileNotFoundError(ENABLE)
        self.bin = bin_dir
        self.root = Path(tempfile.mkdtemp(prefix="plyhall-pg-"))
        self.root.chmod(0o755)
        self.data = self.root / "data"
        self.sockets = self.root / "sockets"
        self.port = _free_port()
        self.as_postgres = os.geteuid() == 0
        for folder in (self.data, self.sockets):
            folder.mkdir()
            if self.as_postgres:
                shutil.chown(folder, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
        self.start()

    def _run(self, tool: str, *args: str) -> None:
        command = [str(self.bin / tool), *args]
        if self.as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode:
            raise RuntimeError(f"{tool} failed: {done.stderr.strip() or done.stdout.strip()}")

    def start(self) -> None:
        """Start (or start again) the server; returns once it accepts connections."""
        options = f"-p {self.port} -k {self.sockets} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.sockets / "log"), "start", "-w")

    def stop(self) -> None:
        """Stop the server at once (in-flight connections are cut)."""
        self._run("pg_ctl", "-D", str(self.data), "stop", "-m", "fast", "-w")

    def url(self, database: str = "postgres") -> str:
        """A URL of ``database`` on this cluster."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database; its URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def destroy(self) -> None:
        """Stop the server and delete its folder."""
        try:
            self.stop()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
