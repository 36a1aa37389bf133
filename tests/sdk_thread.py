"""SDK clients for the browser tests, driven from Playwright's synchronous thread: each on an event loop of its own
in a thread of its own (Playwright's sync API holds the test thread's loop)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any

from tests.helpers import login as sdk_login


class SdkClient:
    """A logged-in SDK client of ``name`` on the server at ``port``, used from synchronous code."""

    def __init__(self, port: int, name: str, **login: Any) -> None:  # noqa: D107 - as the class says
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.client = self.run(sdk_login(f"ws://127.0.0.1:{port}/ws", name, **login))

    def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Run ``coro`` on the client's loop; its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=30)

    def request(self, msg: dict[str, Any]) -> dict[str, Any]:
        """Send a request; its reply."""
        return self.run(self.client.request(msg))

    def close(self) -> None:
        """Close the connection and stop the loop."""
        self.run(self.client.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
