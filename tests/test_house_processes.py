"""The house bots' processes as the server's supervisor (server/io/supervisor.py) starts, stops and reaps them: a bot
the hall asked to stop is logged as stopped, not as a failure, and a failure's line has no empty reason."""

from __future__ import annotations

import logging
import sys
import time
from dataclasses import dataclass

import pytest

from server.io.supervisor import HouseBots


@dataclass
class Start:
    """What the supervisor reads of a house bot to start (a HouseStart's fields), running ``code`` in Python."""

    name: str
    code: str
    level: str = "random"
    game: str = "connect4"
    room: str | None = "Lake"
    ladder: bool = False
    tournament: str | None = None

    def argv(self, url: str) -> list[str]:
        return [sys.executable, "-c", self.code]


def reaped(bots: HouseBots, name: str) -> None:
    """Reap until ``name`` has ended (a few seconds at most)."""
    deadline = time.monotonic() + 20
    while name in bots.running and time.monotonic() < deadline:
        time.sleep(0.05)
        bots.reap()
    assert name not in bots.running


def test_a_bot_the_hall_stops_is_logged_stopped_and_a_failure_as_one(caplog: pytest.LogCaptureFixture) -> None:
    """A person leaving a house bot's game logged "WARNING house bot house-novice-6 ended with code -15: "."""
    ended: list[tuple[str, int]] = []
    bots = HouseBots("ws://127.0.0.1:1/ws", "secret", lambda name, code: ended.append((name, code)))
    with caplog.at_level(logging.INFO, "plyhall"):
        assert bots.run([Start("house-random-1", "import time; time.sleep(60)"),  # type: ignore[list-item]
                         Start("house-random-2", "import sys; sys.exit(3)")], []) == []  # type: ignore[list-item]
        bots.run([], ["house-random-1"])
        reaped(bots, "house-random-1")
        reaped(bots, "house-random-2")
    said = {record.getMessage(): record.levelno for record in caplog.records if "house-random-" in record.getMessage()
            and "started" not in record.getMessage()}
    assert said == {"house bot house-random-1 stopped": logging.INFO,
                    "house bot house-random-2 ended with code 3": logging.WARNING}, said
    assert sorted(ended) == [("house-random-1", -15), ("house-random-2", 3)]
