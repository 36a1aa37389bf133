"""What the hall knows of house bots: our own bots, which the server starts as separate ``plyhall bot``
processes (``server.io.supervisor`` runs them; they connect through the client SDK like any remote bot,
and the server never imports ``bots``).

The hall decides which bot to start (:class:`HouseStart` in its outbox) and how many may run at once.
House bots log in under names starting with ``house-``, which only the server's own processes may use:
they prove it with a secret made when the server starts, which reaches them through their environment
(``PLYHALL_SECRET``), never their command line. A name is never handed out while anything holds it.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

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
