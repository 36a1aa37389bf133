"""House bot processes: started, reaped, reported when they end, stopped at shutdown.

The hall decides (``server.core.house.HouseStart``); this runs ``plyhall bot`` processes for it. Each bot's
stderr goes to a file of its own, so it never blocks on a pipe, and its last lines are logged when it ends.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from typing import IO

from ..core.house import SECRET_VARIABLE, HouseStart

log = logging.getLogger("plyhall.house")


class HouseBots:
    """Runs house bot processes and reports their end (``on_exit(name, returncode)``)."""

    def __init__(self, url: str, secret: str, on_exit: Callable[[str, int], None]) -> None:
        self.url = url
        self.secret = secret
        self.on_exit = on_exit
        self.running: dict[str, subprocess.Popen] = {}
        self._logs: dict[str, IO[bytes]] = {}  # each bot's stderr, in a file so that it never blocks on a pipe
        self._stopped: set[str] = set()  # bots the hall asked to stop (their SIGTERM is no failure)

    def start(self, request: HouseStart) -> bool:
        """Start a bot process; False (and logged) when the process cannot be started."""
        # the secret goes in the environment, which only this user (and root) can read, never on the command
        # line, which `ps` shows to every user of the machine; it is made per server start
        env = dict(os.environ, PYTHONUNBUFFERED="1", **{SECRET_VARIABLE: self.secret})
        errors = tempfile.TemporaryFile()
        try:
            proc = subprocess.Popen(request.argv(self.url), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=errors, env=env, start_new_session=True)
        except OSError as exc:
            errors.close()
            log.error("could not start house bot %s: %s", request.name, exc)
            return False
        self.running[request.name] = proc
        self._logs[request.name] = errors
        log.info("house bot %s (%s, %s) started for %s", request.name, request.level, request.game,
                 request.room or ("the ladder" if request.ladder else f"tournament {request.tournament}"))
        return True

    def run(self, starts: list[HouseStart], stops: list[str]) -> list[str]:
        """Start the bots of ``starts`` and end those named in ``stops``; the names of the bots that could not
        start (their seats are the hall's to give back)."""
        failed = [request.name for request in starts if not self.start(request)]
        for name in stops:
            proc = self.running.get(name)
            if proc is not None and proc.poll() is None:
                proc.terminate()
                self._stopped.add(name)
        return failed

    async def reap_forever(self, every: float = 0.5) -> None:
        """:meth:`reap` every ``every`` seconds, until cancelled."""
        while True:
            await asyncio.sleep(every)
            try:
                self.reap()
            except Exception:
                log.exception("reaping house bots failed")

    def reap(self) -> None:
        """Report every bot process that has ended since the last call."""
        for name, proc in list(self.running.items()):
            code = proc.poll()
            if code is None:
                continue
            del self.running[name]
            errors = self._logs.pop(name)
            errors.seek(0)
            tail = errors.read().decode(errors="replace").strip().splitlines()[-3:]
            errors.close()
            if name in self._stopped and code == -signal.SIGTERM:  # ended as the hall asked: nothing went wrong
                log.info("house bot %s stopped", name)
            elif code:
                log.warning("house bot %s ended with code %s%s", name, code, f": {' | '.join(tail)}" if tail else "")
            else:
                log.info("house bot %s finished", name)
            self._stopped.discard(name)
            self.on_exit(name, code)

    def stop_all(self, timeout: float = 5.0) -> None:
        """End every bot process: SIGTERM, and SIGKILL for those still running after ``timeout`` seconds in all."""
        for proc in self.running.values():
            if proc.poll() is None:
                proc.terminate()
        deadline = time.monotonic() + timeout
        for proc in self.running.values():
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for errors in self._logs.values():
            errors.close()
        self.running.clear()
        self._logs.clear()
