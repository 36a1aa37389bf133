"""benchmarks/ladder_churn.py's bystanders: a ping whose pong never comes stops the run with a clear message after
``--pong-timeout`` seconds (it used to wait for ever); a pong that comes is timed as before. Against a small
WebSocket server of the test's own, which welcomes a login and answers pings, or not."""

from __future__ import annotations

import asyncio
import importlib
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from websockets.asyncio.server import ServerConnection, serve

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture
def ladder_churn(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The benchmark's module, imported as its script runs it (its folder first on the path, for ``common``)."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module("ladder_churn")


async def bystander_against(ladder_churn: ModuleType, pongs: bool, timeout: float) -> list[float]:
    """One bystander ``watcher`` against a server that welcomes it and answers its pings if ``pongs``: the round
    trips it kept before it was stopped (once it kept three) or raised."""
    async def handler(ws: ServerConnection) -> None:
        async for frame in ws:
            kind = json.loads(frame)["type"]
            if kind == "login":
                await ws.send(json.dumps({"type": "welcome"}))
            elif kind == "ping" and pongs:
                await ws.send(json.dumps({"type": "pong"}))

    async with serve(handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        stop, rtts = asyncio.Event(), []

        async def three_kept() -> None:
            while len(rtts) < 3:
                await asyncio.sleep(0.01)
            stop.set()

        counting = asyncio.create_task(three_kept())
        try:
            await asyncio.wait_for(ladder_churn.watcher(f"ws://127.0.0.1:{port}", "w0", stop, rtts, timeout), 30)
        finally:
            counting.cancel()
        return rtts


def test_a_lost_pong_stops_the_bystander_with_a_clear_message(ladder_churn: ModuleType) -> None:
    with pytest.raises(ladder_churn.PongLost, match=r"^bystander w0 got no pong within 2 s of its ping"):
        asyncio.run(bystander_against(ladder_churn, pongs=False, timeout=2.0))


def test_answered_pings_are_timed(ladder_churn: ModuleType) -> None:
    rtts = asyncio.run(bystander_against(ladder_churn, pongs=True, timeout=5.0))
    assert len(rtts) >= 3 and all(0 < rtt < 5.0 for rtt in rtts)


def test_the_pong_timeout_is_an_option_and_checked() -> None:
    script = [sys.executable, str(BENCHMARKS / "ladder_churn.py")]
    shown = subprocess.run([*script, "--help"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and "--pong-timeout SECONDS" in shown.stdout
    refused = subprocess.run([*script, "--pong-timeout", "0"], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2
    assert "'0' is not a number of seconds above zero" in refused.stderr
