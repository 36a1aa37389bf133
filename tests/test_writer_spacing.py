"""The SQLite writer's commits under load (issue 44): a write submitted right after a commit waits for the next one,
COMMIT_SPACING after it, with everything submitted meanwhile, instead of a commit each turn of the loop; a write
on an idle server is committed at the end of its turn, as before. The loop is driven by hand: its clock is set."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from server.storage import open_storage
from server.storage.records import RoomRemoved
from server.storage.writer import COMMIT_SPACING, LoopWriter


class HandLoop:
    """What LoopWriter asks of the event loop, with a clock the test sets and callbacks the test runs."""

    def __init__(self) -> None:
        self.clock = 1000.0
        self.soon: list[Callable[[], Any]] = []
        self.later: list[tuple[float, Callable[[], Any]]] = []

    def time(self) -> float:
        return self.clock

    def call_soon(self, callback: Callable[[], Any]) -> None:
        self.soon.append(callback)

    def call_later(self, delay: float, callback: Callable[[], Any]) -> None:
        self.later.append((delay, callback))

    def end_turn(self) -> None:
        ready, self.soon = self.soon, []
        for callback in ready:
            callback()


def test_writes_right_after_a_commit_share_the_next_one_and_an_idle_servers_go_at_once(tmp_path: Path) -> None:
    storage = open_storage(f"sqlite:///{tmp_path / 'plyhall.db'}")
    loop, committed = HandLoop(), []
    writer = LoopWriter(storage, loop, committed.append)  # type: ignore[arg-type]
    try:
        assert writer.submit([RoomRemoved("Lake")]) == 1
        assert len(loop.soon) == 1 and loop.later == []  # nothing committed lately: at the end of this turn
        loop.end_turn()
        assert committed == [1] and writer.commits == 1

        loop.clock += COMMIT_SPACING / 4  # the next turn, a moment after that commit
        writer.submit([RoomRemoved("Kalamalka")])
        loop.clock += COMMIT_SPACING / 4
        writer.submit([RoomRemoved("Wood")])
        loop.end_turn()
        assert committed == [1] and loop.soon == []  # held for the next commit
        [(delay, commit)] = loop.later
        assert abs(delay - COMMIT_SPACING * 3 / 4) < 1e-9
        loop.clock += delay
        commit()
        assert committed == [1, 3] and writer.commits == 2  # both in one commit

        loop.clock += 60.0  # an idle minute later
        writer.submit([RoomRemoved("Skaha")])
        assert len(loop.soon) == 1 and len(loop.later) == 1
        loop.end_turn()
        assert committed == [1, 3, 4]
    finally:
        storage.close()


def test_the_retries_at_a_stop_are_logged_at_the_pace_they_are_made(caplog, monkeypatch) -> None:
    """A database down for a while had backed the retries off to 5 s; at the stop the log went on saying "retrying
    in 5.0 s" while the stop retried after 0.1, 0.2, 0.4 s."""
    import asyncio
    import logging

    from server.storage.writer import MAX_BACKOFF

    class Down:
        def apply(self, writes: Any) -> None:
            raise OSError("database or disk is full")

    slept: list[float] = []

    async def sleep(delay: float) -> None:
        slept.append(delay)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    writer = LoopWriter(Down(), HandLoop(), lambda seq: None)  # type: ignore[arg-type]
    writer._delay = MAX_BACKOFF  # what a long outage left
    writer._queue = [RoomRemoved("Lake")]
    with caplog.at_level(logging.ERROR, "server.storage.writer"):
        assert asyncio.run(writer.aclose(1.0)) is False
    said = [float(r.getMessage().rsplit("retrying in ", 1)[1].split()[0]) for r in caplog.records]
    assert slept and said[:len(slept)] == slept and slept[0] == 0.1, (said, slept)
