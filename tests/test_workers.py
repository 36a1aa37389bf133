"""`plyhall serve --cluster/--workers`: the options a cluster node needs, the supervisor of
`--workers N` (plyhall/workers.py) with stand-in workers, the throwaway Redis of the cluster tests,
and N real nodes sharing a port."""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import free_port
from tests.helpers import http_json, read_until
from tests.test_command_checks import CLUSTER_MISTAKES, PG, REDIS

CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("PLYHALL_NODE", "PLYHALL_CLUSTER", "PLYHALL_DB")}


def serve(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "plyhall", "serve", *args], capture_output=True, text=True,
                          timeout=60, cwd=cwd, env=CLEAN_ENV)


@pytest.mark.parametrize(("options", "message"), CLUSTER_MISTAKES)
def test_cluster_options_are_checked_before_anything_starts(tmp_path, options, message):
    out = serve(*options, cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    errors = [line for line in out.stderr.splitlines() if line.startswith("plyhall serve: ")]
    assert len(errors) == 1 and message in errors[0], out.stderr  # one mistake, one message
    assert "hunter22" not in out.stderr  # a URL's password is never echoed
    assert not list(tmp_path.iterdir())  # no database was created


def test_workers_pass_every_option_on_but_their_own():
    """Each worker gets the options the user gave (not the defaults: the environment gives it those), and the
    supervisor sets --node and --reuse-port."""
    from plyhall.commands.serve import cluster_shown, register, serve_argv

    subparsers = argparse.ArgumentParser().add_subparsers()
    register(subparsers)
    parser = subparsers.choices["serve"]
    given = ["--workers", "3", "--cluster", REDIS, "--db", PG, "--node", "w", "--port", "9000", "--quiet",
             "--house-bots", "--ladder-anchors", "connect4:random,novice", "--grace", "12.5", "--max-rooms", "50"]
    args = parser.parse_args(given)
    argv = serve_argv(args)
    assert "--workers" not in argv and "--node" not in argv and "--reuse-port" not in argv
    assert "--per-move" not in argv  # left at its default
    again = parser.parse_args(argv)
    differ = {name for name, value in vars(args).items() if getattr(again, name) != value}
    assert differ == {"workers", "node"}

    assert cluster_shown("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"
    assert cluster_shown("redis://:hunter22@10.0.0.5:6379/1") == "redis://:***@10.0.0.5:6379/1"
    assert cluster_shown("rediss://plyhall:hunter22@r.example/0") == "rediss://plyhall:***@r.example/0"


# The supervisor, with stand-in workers -------------------------------------------------------------------

SUPERVISOR = """
import argparse, sys
from plyhall.workers import Workers

supervisor = Workers(argparse.Namespace(node="w", workers=2, host="127.0.0.1", port=1), [])
for worker in supervisor.workers:
    worker.command = [sys.executable, sys.argv[1], worker.node]
sys.exit(supervisor.main())
"""

WORKER = """
import os, pathlib, signal, sys, time

node, mode = sys.argv[1], os.environ["MODE"]
runs_file = pathlib.Path(os.environ["STATE"]) / node
runs = int(runs_file.read_text()) + 1 if runs_file.exists() else 1
runs_file.write_text(str(runs))
if mode == "bad":
    print(f"{node}: no such database", file=sys.stderr, flush=True)
    sys.exit(3)
if mode == "crash-once" and node == "w-1" and runs == 1:
    print(f"{node} run {runs} ready", flush=True)
    print("plyhall-worker-ready", file=sys.stderr, flush=True)  # what a real worker says once it serves
    time.sleep(2.3)
    sys.exit(7)
got = []
for sig in (signal.SIGINT, signal.SIGTERM):
    signal.signal(sig, lambda sig, frame: got.append(sig))
print(f"{node} run {runs} ready", flush=True)
print("plyhall-worker-ready", file=sys.stderr, flush=True)
while not got:
    time.sleep(0.02)
time.sleep(0.5)  # a second signal, if any, arrives meanwhile
print(f"{node} stopped by {signal.Signals(got[0]).name} x{len(got)}", flush=True)
sys.exit(0 if len(got) == 1 else 1)
"""


def supervise(tmp_path: Path, mode: str) -> subprocess.Popen:
    """The supervisor of two stand-in workers (WORKER, in ``mode``), in a session of its own as if started from a
    terminal (a Ctrl-C there signals its whole process group)."""
    (tmp_path / "worker.py").write_text(textwrap.dedent(WORKER))
    (tmp_path / "state").mkdir()
    env = {**os.environ, "MODE": mode, "STATE": str(tmp_path / "state")}
    return subprocess.Popen([sys.executable, "-c", SUPERVISOR, str(tmp_path / "worker.py")], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)


def finish(proc: subprocess.Popen, timeout: float = 60) -> tuple[str, str]:
    """The output of ``proc`` once it has exited (its process group killed after ``timeout``)."""
    try:
        return proc.communicate(timeout=timeout)
    finally:
        kill(proc)


def kill(proc: subprocess.Popen) -> None:
    """Stop the supervisor ``proc`` if it still runs, so that a failed test leaves nothing behind: SIGTERM (which
    it passes on to its workers), then SIGKILL to its process group."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(40)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_a_ctrl_c_reaches_each_worker_once_and_all_stop(tmp_path):
    """A terminal's Ctrl-C signals the supervisor's whole process group; the workers, in a group of their own,
    get it once, from the supervisor (twice would mean 'stop at once')."""
    proc = supervise(tmp_path, "good")
    try:
        head = read_until(proc, ["w-1 run 1 ready", "w-2 run 1 ready", "2 workers sharing"])
        pids = [int(pid) for pid in re.findall(r"worker \d pid (\d+) node w-\d", head)]
        assert len(pids) == 2
        os.killpg(proc.pid, signal.SIGINT)
        out, err = finish(proc)
    finally:
        kill(proc)
    assert proc.returncode == 0, err
    assert "w-1 stopped by SIGINT x1" in out and "w-2 stopped by SIGINT x1" in out
    assert "plyhall: 2 workers stopped" in out
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_a_worker_that_exits_is_started_again(tmp_path):
    proc = supervise(tmp_path, "crash-once")
    try:
        read_until(proc, ["w-1 run 2 ready", "w-2 run 1 ready"])
        proc.send_signal(signal.SIGTERM)
        out, err = finish(proc)
    finally:
        kill(proc)
    assert proc.returncode == 0, err
    assert "plyhall: worker 1 (w-1) exited unexpectedly (exit code 7); starting it again in 1 s" in err
    assert re.search(r"plyhall: worker 1 \(w-1\) started again, pid \d+", err)
    assert "w-1 stopped by SIGTERM x1" in out and "w-2 stopped by SIGTERM x1" in out
    assert (tmp_path / "state" / "w-2").read_text() == "1"  # the other worker ran on


def test_a_worker_that_cannot_start_stops_everything_fast(tmp_path):
    proc = supervise(tmp_path, "bad")
    started = time.monotonic()
    out, err = finish(proc)
    assert proc.returncode == 1, out + err
    assert time.monotonic() - started < 30
    summary = err[err.index("times in a row"):]
    assert re.search(r"plyhall serve: worker \d \(w-\d\) could not start, 3 times in a row "
                     r"\(exit code 3\); stopping the workers\. Its last lines:\n  w-\d: no such database", err), err
    assert "no such database" in summary and err.count("no such database") == 1, "the reason is said once"
    assert "2 workers stopped" not in out


# The throwaway Redis ---------------------------------------------------------------------------------------

def test_the_throwaway_redis_can_be_paused_and_frozen(redis_server):
    import redis

    from tests.redis_server import RedisServer

    with RedisServer() as own:
        assert own.port != redis_server.port and own.url == f"redis://127.0.0.1:{own.port}/0"
        client = redis.Redis.from_url(own.url, socket_timeout=0.5, socket_connect_timeout=0.5)
        client.set("seat", "ann")
        own.freeze()  # hung: connections open, nothing answered
        with pytest.raises(redis.exceptions.TimeoutError):
            client.get("seat")
        own.thaw()
        client = redis.Redis.from_url(own.url, socket_timeout=2)
        assert client.get("seat") == b"ann"
        own.pause()  # down: refused at once
        with pytest.raises(redis.exceptions.ConnectionError):
            redis.Redis.from_url(own.url, socket_timeout=2).ping()
        own.resume()
        assert client.ping() and client.get("seat") is None  # the same port again; nothing kept
        root = own.root
    assert own.proc is None and root is not None and not root.exists()


def test_each_test_gets_an_empty_redis(redis_url):
    import redis

    client = redis.Redis.from_url(redis_url)
    assert client.dbsize() == 0
    client.set("left", "behind")  # the next test of this process does not see it


def test_each_test_gets_an_empty_redis_too(redis_url):
    import redis

    assert redis.Redis.from_url(redis_url).dbsize() == 0


# Real nodes ------------------------------------------------------------------------------------------------

def test_two_workers_serve_one_port_and_stop_on_sigterm(tmp_path, pg_url, redis_url):
    pytest.importorskip("server.io.cluster", reason="the cluster core (server/io/cluster/) is not there yet")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "plyhall", "serve", "--workers", "2", "--cluster", redis_url,
                             "--db", pg_url, "--node", "w", "--port", str(port), "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=CLEAN_ENV,
                            start_new_session=True)
    try:
        head = read_until(proc, ["2 workers sharing", "node w-1 of cluster", "node w-2 of cluster"], timeout=90)
        pids = [int(pid) for pid in re.findall(r"worker \d pid (\d+) node w-\d", head)]
        assert len(pids) == 2
        assert f"2 workers sharing ws://127.0.0.1:{port}/ws" in head
        deadline = time.monotonic() + 60
        while True:
            try:
                status, body = http_json(port, "/healthz")
                break
            except OSError:
                assert time.monotonic() < deadline, "no worker answered /healthz"
                time.sleep(0.1)
        assert status == 200 and body["ok"]
        proc.send_signal(signal.SIGTERM)
        out, err = finish(proc)
    finally:
        kill(proc)
    assert proc.returncode == 0, out + err
    assert "plyhall: 2 workers stopped" in out
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
