"""``asyncio.run`` for a bot, with its first Ctrl-C taken by the event loop between two callbacks.

``asyncio.run`` cancels its main task from a Python signal handler, which runs between any two bytecodes of
whatever runs at that moment. A bot awaits its search through an executor: when its result arrives, a callback of
the loop (``asyncio.futures._copy_future_state``) checks that the awaiting future is not cancelled and then sets its
result. A Ctrl-C landing between the two cancels the future inside that callback, and the loop prints a traceback
(``InvalidStateError: invalid state``) as the bot stops. :func:`run` has the loop take the first SIGINT
(``loop.add_signal_handler``): the cancellation then runs as a callback of its own, never inside another one. A
second Ctrl-C, while the bot is stopping, raises ``KeyboardInterrupt`` at once, as with ``asyncio.run``; a bot still
running :data:`REMIND_AFTER` seconds after the first (a player of its own that caught the cancel, a slow goodbye) says
so, and that a second stops it.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

REMIND_AFTER = 2.0
"""Seconds after a first Ctrl-C at which a bot still running says that a second one stops it at once."""
REMINDER = "still stopping; Ctrl-C again stops at once"


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` as ``asyncio.run`` does; on Ctrl-C cancel it (a callback of the loop) and raise
    ``KeyboardInterrupt`` once it has finished, as ``asyncio.run`` does. Where ``asyncio.run`` would leave SIGINT
    alone (off the main thread; a process that ignores it or handles it its own way) this is ``asyncio.run``."""
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return asyncio.run(main)
    return asyncio.run(_guarded(main))


async def _guarded(main: Coroutine[Any, Any, T]) -> T:
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    interrupted = twice = False

    def again(signum: int, frame: Any) -> None:
        nonlocal twice
        twice = True
        raise KeyboardInterrupt  # a second Ctrl-C while stopping: at once, wherever the interpreter is

    def on_sigint() -> None:
        nonlocal interrupted
        interrupted = True
        loop.remove_signal_handler(signal.SIGINT)
        signal.signal(signal.SIGINT, again)
        task.cancel()
        loop.call_later(REMIND_AFTER, remind)

    def remind() -> None:
        if not task.done():
            print(REMINDER, file=sys.stderr, flush=True)

    loop.add_signal_handler(signal.SIGINT, on_sigint)  # replaces asyncio.run's own handler, this run only
    try:
        return await main
    except asyncio.CancelledError:
        if interrupted and not twice:  # not asyncio.run's cancelling of what is left, after a second Ctrl-C
            raise KeyboardInterrupt from None
        raise
    finally:
        loop.remove_signal_handler(signal.SIGINT)  # puts the interpreter's own handler back
        if signal.getsignal(signal.SIGINT) is again:
            signal.signal(signal.SIGINT, signal.default_int_handler)
