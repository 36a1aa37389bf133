"""What the throwaway servers of the tests (tests/redis_server.py, tests/nginx_proxy.py) share: a process and a
folder of their own, stopped and removed by ``stop`` or at the end of a ``with`` block."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Self


class Throwaway:
    """A server process (``proc``) working in a temporary folder (``root``)."""

    proc: subprocess.Popen | None = None
    root: Path | None = None

    def start(self) -> None:
        """Start the process (and make the folder)."""
        raise NotImplementedError

    def _end_process(self, timeout: float = 10) -> None:
        raise NotImplementedError

    port: int = 0
    log: str = ""

    def _launch(self) -> None:
        raise NotImplementedError

    def _launch_until_ready(self, timeout: float, what: str, keep_port: bool = False,
                            details: Callable[[], str] = str) -> None:
        """Start the process until it answers: on another free port when this one turns out to be taken (unless
        ``keep_port``); a failure raises with the log of ``what`` (and ``details()``)."""
        for attempt in range(3):
            self._launch()
            if self._wait_ready(timeout):
                return
            log = self.log
            self._end_process()
            if "Address already in use" in log and attempt < 2 and not keep_port:
                with socket.socket() as sock:
                    sock.bind(("127.0.0.1", 0))
                    self.port = sock.getsockname()[1]
                continue
            raise RuntimeError(f"{what} did not start on 127.0.0.1:{self.port}:\n{log[-3000:]}{details()}")

    def _answers(self) -> bool:
        """True when the server answers (OSError when it does not listen yet)."""
        raise NotImplementedError

    def _wait_ready(self, timeout: float) -> bool:
        """Wait until the server answers: False when its process ended, or after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                return False
            try:
                if self._answers():
                    return True
            except OSError:
                pass
            time.sleep(0.05)
        return False

    def stop(self) -> None:
        """Stop the process (SIGTERM, then SIGKILL after 10 s) and remove its folder."""
        try:
            self._end_process()
        finally:
            if self.root is not None:
                shutil.rmtree(self.root, ignore_errors=True)
                self.root = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
