"""The event-loop writer (server/writer.py): an idle server commits at once, a busy one gathers the
writes of several turns of the loop into one transaction, and nobody is told of a write before it
is committed."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from server.writer import LoopWriter


class RecordingStorage:
    """Keeps each committed transaction's writes."""

    def __init__(self) -> None:
        self.transactions: list[list[Any]] = []

    def apply(self, writes: Sequence[Any]) -> None:
        self.transactions.append(list(writes))


async def test_an_idle_writer_commits_in_the_same_turn_and_a_busy_one_gathers_turns():
    storage = RecordingStorage()
    committed: list[int] = []
    now = [100.0]
    # a minute between commits on a clock of the test's own: no real timer fires while it runs
    writer = LoopWriter(storage, asyncio.get_running_loop(), committed.append, min_interval=60.0,
                        clock=lambda: now[0])  # type: ignore[arg-type]
    assert writer.submit(["login ann"]) == 1
    await asyncio.sleep(0)  # the end of this turn of the loop
    assert storage.transactions == [["login ann"]] and committed == [1]

    # the next writes come within the interval: they wait for the next commit, however many turns pass
    now[0] += 1.0
    writer.submit(["move 1"])
    await asyncio.sleep(0)
    writer.submit(["move 2", "move 3"])
    await asyncio.sleep(0)
    assert storage.transactions == [["login ann"]] and committed == [1] and writer.queued == 3
    assert writer.stop()  # commits what is left, as the server does when it stops
    assert storage.transactions == [["login ann"], ["move 1", "move 2", "move 3"]] and committed == [1, 4]

    # a quiet while later: at once again
    now[0] += 120.0
    writer.submit(["move 4"])
    await asyncio.sleep(0)
    assert storage.transactions[-1] == ["move 4"] and committed[-1] == 5
