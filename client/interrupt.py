"""``asyncio.run`` for a bot, with Ctrl-C taken by the event loop between two callbacks.

``asyncio.run`` cancels its main task from a Python signal handler, which runs between any two bytecodes of
whatever runs at that moment. A bot awaits its search through an executor: when its result arrives, a callback of
the loop (``asyncio.futures._copy_future_state``) checks that the awaiting future is not cancelled and then sets its
result. A Ctrl-C landing between the two cancels the future inside that callback, and the loop prints a traceback
(``InvalidStateError: invalid state``) as the bot stops. :func:`run` has the loop take SIGINT
(``loop.add_signal_handler``): the cancellation then runs as a callback of its own, never inside another one. A
second Ctrl-C stops at once, as with ``asyncio.run``.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` as ``asyncio.run`` does; on Ctrl-C cancel it (a callback of the loop) and raise
    ``KeyboardInterrupt`` once it has finished, as ``asyncio.run`` does. Off the main thread (or where the loop
    cannot take signals) it is ``asyncio.run`` itself."""
    return asyncio.run(_guarded(main))


async def _guarded(main: Coroutine[Any, Any, T]) -> T:
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    interrupted = 0

    def on_sigint() -> None:
        nonlocal interrupted
        interrupted += 1
        if interrupted > 1:
            raise KeyboardInterrupt  # a second Ctrl-C: out of the loop at once (asyncio.run then cancels the task)
        task.cancel()

    try:
        loop.add_signal_handler(signal.SIGINT, on_sigint)
    except (NotImplementedError, RuntimeError, ValueError):  # Windows; not the main thread
        return await main
    try:
        return await main
    except asyncio.CancelledError:
        if interrupted == 1:  # the Ctrl-C's cancellation, not asyncio.run's after a second one
            raise KeyboardInterrupt from None
        raise
    finally:
        loop.remove_signal_handler(signal.SIGINT)
