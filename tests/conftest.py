"""Shared fixtures: a live server on a free loopback port with its own database, PostgreSQL and Redis."""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from server.io.server import PlyhallServer, RateLimit
from server.storage import SQLiteStorage

if TYPE_CHECKING:
    from tests.redis_server import RedisServer


def free_port() -> int:
    """A port nobody listens on right now (127.0.0.1)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session", autouse=True)
def user_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``XDG_CACHE_HOME`` of the whole run (and of the processes it starts): a temporary folder shared by the
    xdist workers, so Connect Four's opening table is made once a run, never in the user's own cache."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "xdg-cache"
    folder.mkdir(exist_ok=True)
    os.environ["XDG_CACHE_HOME"] = str(folder)
    return folder


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "plyhall.db"


@pytest.fixture
async def server(db_path: Path) -> AsyncIterator[PlyhallServer]:
    """A running server on 127.0.0.1 with a port of its own."""
    srv = PlyhallServer(SQLiteStorage(db_path), host="127.0.0.1", port=0, rate_limit=RateLimit(rate=2000, burst=4000))
    await srv.start()
    yield srv
    await srv.stop()


@pytest.fixture
def url(server: PlyhallServer) -> str:
    return f"ws://127.0.0.1:{server.port}/ws"


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[object]:
    """A throwaway PostgreSQL cluster for this test process (skipped where PostgreSQL is not installed,
    unless PLYHALL_REQUIRE_POSTGRES=1, as in CI)."""
    from tests.pg_cluster import ENABLE, Cluster, binaries

    if binaries() is None:
        if os.environ.get("PLYHALL_REQUIRE_POSTGRES") == "1":
            pytest.fail(ENABLE)
        pytest.skip(ENABLE)
    cluster = Cluster()
    yield cluster
    cluster.destroy()


@pytest.fixture
def pg_url(postgres_cluster: object) -> str:
    """The URL of a fresh, empty PostgreSQL database."""
    return postgres_cluster.new_database()  # type: ignore[attr-defined]


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A throwaway Redis (tests/redis_server.py) for this test process: with pytest-xdist each worker has its
    own. Skipped where redis-server is not installed, unless PLYHALL_REQUIRE_REDIS=1, as in CI."""
    from tests.redis_server import ENABLE, RedisServer, binary

    if binary() is None:
        if os.environ.get("PLYHALL_REQUIRE_REDIS") == "1":
            pytest.fail(ENABLE)
        pytest.skip(ENABLE)
    server = RedisServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The URL of the session's Redis, emptied (FLUSHALL) for this test; running again if a test before left it
    paused or frozen."""
    redis_server.revive()
    redis_server.flushall()
    return redis_server.url


@pytest.fixture(params=["sqlite", "postgresql"])
def storage_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Each storage test runs on both databases: a fresh SQLite file, and a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    return request.getfixturevalue("pg_url")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    """Keep each phase's report on the test item (``item.report_call``), so fixtures can tell a
    failed test at teardown (the browser tests screenshot the board then)."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


CRASH_RERUNS = 1
"""How many times a test whose worker process died under it is run again on a fresh worker."""
_crashed: dict[str, int] = {}


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem: str, report: pytest.TestReport, sched: object) -> None:
    """A pytest-xdist worker that dies (a C extension's fault, from whatever the process ran before) takes
    down the test it was running at the time, which need not be the culprit: run that test once more on a
    fresh worker. A test that kills its worker again fails, and every rerun is listed in the summary."""
    _crashed[crashitem] = _crashed.get(crashitem, 0) + 1
    if _crashed[crashitem] > CRASH_RERUNS:
        return  # it failed as a crash
    sched.mark_test_pending(crashitem)  # type: ignore[attr-defined]
    report.outcome = "rerun"  # type: ignore[assignment]


def pytest_report_teststatus(report: pytest.TestReport) -> tuple[str, str, str] | None:
    """A test run again after its worker died shows as R (and 'rerun' in the counts), neither passed nor failed."""
    if report.outcome == "rerun":
        return "rerun", "R", "RERUN (its worker died)"
    return None


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Name the tests whose worker died under them, so that a rare crash is seen even when the rerun passed."""
    if _crashed:
        terminalreporter.write_sep("=", "worker crashes (the test running was run once more, on a fresh worker)")
        for nodeid, count in _crashed.items():
            terminalreporter.write_line(f"{nodeid}: its worker died {count} time(s)")
