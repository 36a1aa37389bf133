"""House bots: our own bots, started by the server as separate ``plyhall bot`` processes.

They connect through the client SDK like any remote bot (the server never imports ``bots``),
play the room or tournament they were started for, and exit. The hall decides which bot to
start (:class:`HouseStart` in its outbox) and how many may run at once; :class:`HouseBots`
starts the processes, reaps them, and tells the hall when one has ended.

House bots log in under names starting with ``house-``, which only the server's own processes
may use: they prove it with a secret made when the server starts, which reaches them through their
environment (``PLYHALL_SECRET``), never their command line. A name is never handed out twice.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

log = logging.getLogger("plyhall.house")

HOUSE_PREFIX = "house-"
SECRET_VARIABLE = "PLYHALL_SECRET"  # the environment variable `plyhall bot` reads its secret from
HOUSE_LEVELS: tuple[str, ...] = ("random", "novice", *(f"minimax-{n}" for n in range(1, 9)), "master")
"""The levels a house bot can play (``plyhall bot --level``); tests check them against ``bots``."""
HOUSE_LEVEL = re.compile(r"^(random|novice|master|minimax-[1-8])$")


@dataclass(frozen=True)
class HouseStart:
    """Start a house bot ``name`` playing ``level`` at ``game``: in ``room`` (``games`` games), or as an
    entrant of ``tournament`` (waiting to be seated, game after game)."""

    name: str
    game: str
    level: str
    room: str | None = None
    games: int = 1
    tournament: str | None = None

    def argv(self, url: str) -> list[str]:
        """The ``plyhall bot`` command line of this bot (its secret reaches it through the environment)."""
        argv = [sys.executable, "-m", "client.cli", "bot", "--game", self.game, "--level", self.level,
                "--name", self.name, "--url", url]
        if self.tournament is not None:
            argv += ["--tournament", self.tournament]
        else:
            assert self.room is not None
            argv += ["--room", self.room, "--games", str(self.games), "--series", str(self.games)]
        return argv


class HouseBots:
    """Runs house bot processes and reports their end (``on_exit(name, returncode)``)."""

    def __init__(self, url: str, secret: str, on_exit: Callable[[str, int], None]) -> None:
        self.url = url
        self.secret = secret
        self.on_exit = on_exit
        self.running: dict[str, subprocess.Popen] = {}
        self._logs: dict[str, IO[bytes]] = {}  # each bot's stderr, in a file so that it never blocks on a pipe

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
                 request.room or f"tournament {request.tournament}")
        return True

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
            if code:
                log.warning("house bot %s ended with code %s: %s", name, code, " | ".join(tail))
            else:
                log.info("house bot %s finished", name)
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
