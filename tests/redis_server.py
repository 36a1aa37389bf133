"""A throwaway Redis for tests: Debian's ``redis-server`` on a free loopback port, no persistence.

The server keeps nothing on disk (``--save '' --appendonly no``) and works in a temporary folder
of its own (``--dir``), where its log goes too (shown when it fails to start). Redis runs as
whoever runs the tests, root included (unlike PostgreSQL, see tests/pg_cluster.py).

Two ways to take Redis away from a test for a while:

- :meth:`RedisServer.pause` / :meth:`RedisServer.resume`: the process is stopped and started again
  on the same port. While paused, connections are refused at once; every key is lost (nothing is
  saved), as after a real Redis restart without persistence.
- :meth:`RedisServer.freeze` / :meth:`RedisServer.thaw`: the process is stopped with SIGSTOP and
  continued with SIGCONT. Connections stay open but nothing is answered (a hung or partitioned
  Redis: clients see timeouts, not refusals); the keys are kept.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
from pathlib import Path

from tests.throwaway import Throwaway

ENABLE = ("Redis is not installed here: install Debian's redis-server package (apt-get install redis-server) and "
          "the cluster tests run against it; CI sets PLYHALL_REQUIRE_REDIS=1, which makes this a failure")


def binary() -> str | None:
    """The path of ``redis-server``, or None."""
    return shutil.which("redis-server") or next(
        (path for path in ("/usr/bin/redis-server", "/usr/sbin/redis-server") if os.access(path, os.X_OK)), None)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _encode(*args: str) -> bytes:
    """A command in RESP, Redis's wire format."""
    parts = [f"*{len(args)}\r\n".encode()]
    for arg in args:
        data = arg.encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


class RedisServer(Throwaway):
    """One ``redis-server`` process on 127.0.0.1; ``url`` is ``redis://127.0.0.1:PORT/0``.

    Use it as a context manager (started on entry, stopped and its folder removed on exit), or call
    :meth:`start` and :meth:`stop` (which also removes the folder).
    """

    def __init__(self, port: int | None = None) -> None:
        path = binary()
        if path is None:
            raise FileNotFoundError(ENABLE)
        self.binary = path
        self.port = port or _free_port()
        self.root: Path | None = None
        self.proc: subprocess.Popen | None = None
        self._frozen = False
        self._keep_port = False  # resume(): the port must stay the same

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:PORT/0``."""
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def log(self) -> str:
        """What the server has logged so far."""
        if self.root is None or not (self.root / "redis.log").exists():
            return ""
        return (self.root / "redis.log").read_text(errors="replace")

    def start(self, timeout: float = 20) -> None:
        """Start the server (on a new free port when this one turns out to be taken, unless the port is kept for
        :meth:`resume`); returns once it answers PING."""
        if self.root is None:
            self.root = Path(tempfile.mkdtemp(prefix="plyhall-redis-"))
        self._launch_until_ready(timeout, "redis-server", keep_port=self._keep_port)

    def _launch(self) -> None:
        assert self.root is not None
        (self.root / "redis.log").unlink(missing_ok=True)
        with open(self.root / "redis.log", "wb") as log:
            self.proc = subprocess.Popen(
                [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                 "--dir", str(self.root), "--daemonize", "no", "--logfile", ""],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)

    def _answers(self) -> bool:
        return self.command("PING", timeout=1) == b"+PONG"

    def command(self, *args: str, timeout: float = 5) -> bytes:
        """Send one command on a new connection; the first line of the reply (``b"+OK"``, ``b"+PONG"``, …).
        ``OSError`` when the server does not answer."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as sock:
            sock.sendall(_encode(*args))
            reply = b""
            while not reply.endswith(b"\r\n"):
                chunk = sock.recv(4096)
                if not chunk:
                    raise ConnectionError("redis-server closed the connection")
                reply += chunk
        return reply.split(b"\r\n", 1)[0]

    def flushall(self) -> None:
        """Delete every key of every database."""
        reply = self.command("FLUSHALL")
        if reply != b"+OK":
            raise RuntimeError(f"FLUSHALL failed: {reply!r}")

    def _end_process(self, timeout: float = 10) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        if self._frozen:
            proc.send_signal(signal.SIGCONT)
            self._frozen = False
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)

    def pause(self) -> None:
        """Stop the process (terminate, then kill after 10 s); the port stays this server's for :meth:`resume`.
        Clients are refused until then, and every key is lost."""
        self._end_process()

    def resume(self, timeout: float = 20) -> None:
        """Start the server again on the same port after :meth:`pause`; returns once it answers PING."""
        self._keep_port = True
        try:
            self.start(timeout)
        finally:
            self._keep_port = False

    def freeze(self) -> None:
        """SIGSTOP the server: connections stay open, nothing is answered, until :meth:`thaw`."""
        assert self.proc is not None and self.proc.poll() is None, "redis-server is not running"
        self.proc.send_signal(signal.SIGSTOP)
        self._frozen = True

    def thaw(self) -> None:
        """SIGCONT the server after :meth:`freeze`; it answers again with its keys as they were."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)
        self._frozen = False

    def revive(self) -> None:
        """Make sure the server runs and answers, whatever a test left it in (paused or frozen)."""
        if self._frozen:
            self.thaw()
        if self.proc is None or self.proc.poll() is not None:
            self.proc = None
            self.resume()
