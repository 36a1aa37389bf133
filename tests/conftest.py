"""Shared fixtures: a live server on a free loopback port with its own database."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.app import PlyhallServer, RateLimit
from server.storage import SQLiteStorage


def free_port() -> int:
    """A port nobody listens on right now (127.0.0.1)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    """Keep each phase's report on the test item (``item.report_call``), so fixtures can tell a
    failed test at teardown (the browser tests screenshot the board then)."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report
