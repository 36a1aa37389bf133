"""Where a move's server CPU goes, section by section, timed in the server itself (``server_load.py --sections``).

A sampling profiler run beside the server (py-spy) slows it and moves its figures: the scale run's p99 went from
30 to 160-640 ms under it. This instead wraps the server's few hot methods, once, in the benchmark's server
process only, and adds up the wall time spent inside each, per whole second of the loop's clock; the report
keeps the whole seconds inside the measured window and sets each section against the process's CPU time over
the same seconds. The server is single-threaded but for the SQLite checkpoint thread, and is not waiting for a
CPU most of the time (``server_load.py`` prints that share), so wall time inside a section is its CPU time
within a few per cent.

Sections nest: ``frames in`` (``DirectMessages.data_received``: the read's frame, decode, validate, the hall)
holds ``the hall`` (``Hall.handle``); ``the commit`` (``LoopWriter._commit``, once a turn of the loop) holds
``SQLite`` (``SQLiteStorage.apply``: begin, the moves' insert, the other writes, commit) and ``delivery``
(``PlyhallServer._committed``), which holds ``pushes`` (``Connection.push``: the encoding, shared by a batch, and
the ``write`` system call, on loopback the receiver's TCP work included) and ``gathered pushes``
(``Connection.push_all``: a game's end, each member's messages in one write). What no section holds (uvloop's own C
code: ``epoll``, the socket reads; timers; the checkpoint thread) is the rest. Each wrapped call costs the
wrapper about half a microsecond, which the section it wraps (and its parents) count: the figures are a little
high, and the CPU a move of a run with ``--sections`` is not one to compare with a run without.
"""

from __future__ import annotations

import gc
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

# (label, where, method): the sections timed, outermost first within each nest
SECTIONS: list[tuple[str, str, str]] = [
    ("frames in", "server.io.transport:DirectMessages", "data_received"),
    ("  the hall", "server.core.hall:Hall", "handle"),
    ("the commit", "server.storage.writer:LoopWriter", "_commit"),
    ("  SQLite", "server.storage.sqlite:SQLiteStorage", "apply"),
    ("    begin", "server.storage.batch:Transaction", "__enter__"),
    ("    the moves' insert", "server.storage.sql:SQLStorage", "_insert_moves"),
    ("    other writes", "server.storage.sql:SQLStorage", "_write"),
    ("    commit", "server.storage.batch:Transaction", "__exit__"),
    ("  delivery", "server.io.server:PlyhallServer", "_committed"),
    ("    pushes", "server.io.connections:Connection", "push"),
    ("    gathered pushes", "server.io.connections:Connection", "push_all"),
    ("keepalive sweep", "server.io.keepalive:KeepaliveSweep", "sweep"),
]


class SectionClock:
    """The wrapped sections' time and calls, and the process's CPU time, per whole second of the loop's clock."""

    def __init__(self) -> None:
        self.spent: defaultdict[tuple[str, int], int] = defaultdict(int)  # (label, second) -> nanoseconds
        self.calls: defaultdict[tuple[str, int], int] = defaultdict(int)
        self.cpu: dict[int, float] = {}  # second -> process CPU time when the second was first seen
        self._gc_started = 0

    def install(self) -> None:
        """Wrap every section's method (in this process only) and time the collector's passes."""
        import importlib

        for label, where, method in SECTIONS:
            module, _, name = where.partition(":")
            owner = getattr(importlib.import_module(module), name)
            setattr(owner, method, self._timed(label, getattr(owner, method)))
        gc.callbacks.append(self._on_gc)

    def _timed(self, label: str, function: Callable[..., Any]) -> Callable[..., Any]:
        clock, spent, calls, cpu = time.perf_counter_ns, self.spent, self.calls, self.cpu
        monotonic, process_time = time.monotonic, time.process_time

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = clock()
            try:
                return function(*args, **kwargs)
            finally:
                second = int(monotonic())
                if second not in cpu:
                    cpu[second] = process_time()
                spent[label, second] += clock() - started
                calls[label, second] += 1

        return timed

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter_ns()
        else:
            second = int(time.monotonic())
            self.spent["collector", second] += time.perf_counter_ns() - self._gc_started
            self.calls["collector", second] += 1

    def report(self, start: float, end: float) -> dict[str, Any]:
        """The sections over the whole seconds within [start, end] (monotonic): their seconds and calls, and the
        process CPU time over those seconds (empty when the window held no two whole seconds)."""
        seconds = sorted(s for s in self.cpu if start <= s <= end)
        if len(seconds) < 2:
            return {}
        first, last = seconds[0], seconds[-1]
        labels = [label for label, _, _ in SECTIONS] + ["collector"]
        return {
            "cpu": self.cpu[last] - self.cpu[first], "seconds": last - first,
            "sections": {label: (sum(v for (k, s), v in self.spent.items() if k == label and first <= s < last) / 1e9,
                                 sum(v for (k, s), v in self.calls.items() if k == label and first <= s < last))
                         for label in labels},
        }


def print_sections(report: dict[str, Any], moves_a_second: float) -> None:
    """The table: each section's share of the server's CPU, its time a move and its calls a move."""
    if not report:
        print("sections: the window held no two whole seconds of the server's clock")
        return
    cpu, sections = report["cpu"], report["sections"]
    moves = moves_a_second * report["seconds"]
    print(f"\nWhere the server's CPU went, by section ({report['seconds']} whole seconds of the window, "
          f"{cpu:.2f} s of CPU, about {moves:.0f} moves; wall time inside each section)")
    print(f"{'section':<28}{'share':>8}{'µs a move':>11}{'calls a move':>14}")
    outer = 0.0
    for label, (spent, calls) in sections.items():
        if not label.startswith(" "):
            outer += spent
        print(f"{label:<28}{spent / cpu:>8.1%}{1e6 * spent / max(1.0, moves):>11.1f}{calls / max(1.0, moves):>14.2f}")
    rest = cpu - outer
    print(f"{'the rest (uvloop, reads, …)':<28}{rest / cpu:>8.1%}{1e6 * rest / max(1.0, moves):>11.1f}")
