"""Which event loop runs the server: uvloop where it is installed, else Python's own asyncio.

uvloop (libuv underneath) does the loop's own work, its sockets and timers in C: a saturated
server relays 10-15% more moves a second on it than on asyncio's selector loop
(``benchmarks/server_load.py --event-loop uvloop --event-loop asyncio`` measures both).
Everything the server uses (transports, timers, threads, signal handlers, executors) behaves the
same on both.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

EVENT_LOOPS = ("uvloop", "asyncio")


def installed(name: str) -> bool:
    """Whether the event loop ``name`` (one of :data:`EVENT_LOOPS`) can be used here."""
    return name == "asyncio" or (name == "uvloop" and importlib.util.find_spec("uvloop") is not None)


def default_event_loop() -> str:
    """uvloop when it is installed (it is a dependency on Linux and macOS), else asyncio."""
    return "uvloop" if installed("uvloop") else "asyncio"


def run(main: Coroutine[Any, Any, T], event_loop: str | None = None) -> T:
    """Run ``main`` to completion on a new loop of the kind ``event_loop`` (default: :func:`default_event_loop`)."""
    kind = event_loop or default_event_loop()
    if kind not in EVENT_LOOPS:
        main.close()
        raise ValueError(f"unknown event loop {kind!r}: use one of {', '.join(EVENT_LOOPS)}")
    if kind == "uvloop":
        import uvloop

        return uvloop.run(main)
    return asyncio.run(main)
