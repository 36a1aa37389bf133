"""A cluster node that cannot start fails fast (issue 40): it exits non-zero, saying why, before it joins the
cluster (no lease, not a member: nobody tries to adopt it), whether its port, its Redis or its database is
wrong; ``--workers`` stops after repeated failures of a worker, however slowly each fails, and says why once."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.conftest import free_port
from tests.helpers import stop
from tests.test_cluster import node

pytestmark = pytest.mark.timeout(240)


def serve(*args: str, timeout: float = 90) -> tuple[subprocess.CompletedProcess, float]:
    """``plyhall serve ARGS`` run to its end: the finished process and how long it ran."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "plyhall", "serve", "--quiet", *args], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return done, time.monotonic() - started


@contextmanager
def silent_listener() -> Iterator[int]:
    """A port on 127.0.0.1 that accepts connections and never answers (a Redis that hangs): its number."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []
    stopping = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stopping.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stopping.set()
        thread.join(5)
        for conn in held:
            conn.close()
        server.close()


def members(redis_server) -> bytes:
    """The cluster's members and leases, as Redis has them."""
    return redis_server.command("SMEMBERS", "plyhall:members") + redis_server.command("KEYS", "plyhall:node:*")


async def test_a_node_that_cannot_listen_exits_before_joining(pg_url, redis_server, redis_url):
    """n2 is started on n1's port: it says it cannot listen and exits 1, and never appears in the cluster: not in
    Redis, and n1 never heard of it (nor adopted it)."""
    n1, port, _ = node(pg_url, redis_url, "n1")
    try:
        done, _ = serve("--port", str(port), "--db", pg_url, "--cluster", redis_url, "--node", "n2", timeout=60)
        assert done.returncode == 1 and "cannot listen" in done.stderr, done.stderr
        assert b"n2" not in members(redis_server)
        await asyncio.sleep(3)  # past a lease: n1 would have noticed n2 lapse, had n2 joined
    finally:
        _, log = stop(n1)
    assert "n2" not in log and "deposed" not in done.stderr, log


async def test_a_node_whose_redis_cannot_be_reached_exits(pg_url):
    """A --cluster URL where no Redis answers (nothing listening; a port that never answers): exit 1, saying so."""
    with silent_listener() as hanging:
        for port in (free_port(), hanging):
            done, _ = serve("--port", str(free_port()), "--db", pg_url, "--cluster", f"redis://127.0.0.1:{port}/0",
                               "--node", "n3", timeout=60)
            assert done.returncode == 1 and "cannot reach the cluster's Redis" in done.stderr, done.stderr


async def test_workers_stop_after_repeated_slow_failures_and_say_why_once(pg_url):
    """--workers 2 whose Redis never answers (each worker fails after its 3 s wait, slower than any 'quick
    exit'): the parent stops after a few failures in a row, exits 1, and the reason is printed once."""
    with silent_listener() as hanging:
        done, _ = serve("--workers", "2", "--port", str(free_port()), "--db", pg_url, "--cluster",
                           f"redis://127.0.0.1:{hanging}/0", "--node", "w", timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("cannot reach the cluster's Redis") == 1, done.stderr
    assert "could not start" in done.stderr
