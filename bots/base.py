"""What every bot is: an object that picks a move for a position, within a time budget.

A bot is built for one game and one level (``make_bot("connect4", "minimax-4")``)
and answers one question, :meth:`Bot.choose`. It keeps no connection, clock or
game record of its own: the SDK's bot runner, a local match or the ``play``
command feed it positions and tell it how long it may think. Bots are plain
picklable objects, so a runner can build one inside a worker process from
``(game_id, level, seed)`` and keep it there across a whole game.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from protocol.games import GAMES, Game

MIN_THINK_SECONDS = 0.05
"""The least time :meth:`TimeBudget.move_deadline_seconds` ever grants a move."""

MOVES_TO_GO = 30
"""How many more moves a bot on a clock without increment plans to make."""


@dataclass(frozen=True)
class TimeBudget:
    """How much time a bot has for the move it is asked for.

    ``remaining`` is what is left on the bot's clock in seconds (``None`` when the
    game has no clock), ``per_move`` a fixed limit on every move (``None`` for
    none) and ``increment`` the seconds added to the clock after each move.
    Both limits may apply at once; the tighter one wins.
    """

    remaining: float | None = None
    per_move: float | None = None
    increment: float = 0.0

    def move_deadline_seconds(self, margin: float = 0.2) -> float | None:
        """Seconds this move may think, or ``None`` when nothing limits it.

        The plan is simple: a fixed per-move limit less ``margin`` (time to
        send the move); on a clock, a ``1/MOVES_TO_GO`` share of what remains
        plus most of the increment, never more than the clock less ``margin``.
        The answer is never below ``MIN_THINK_SECONDS``, or half the clock when that is less: a bot always
        gets to produce some move, and to send it.
        """
        limits: list[float] = []
        if self.per_move is not None:
            limits.append(self.per_move - margin)
        if self.remaining is not None:
            share = self.remaining / MOVES_TO_GO + 0.8 * self.increment
            limits.append(min(share, self.remaining - margin))
        if not limits:
            return None
        whole = min(limit for limit in (self.per_move, self.remaining) if limit is not None)
        # the least a move gets, but never the whole of a tiny clock (0.05 s a move): half is kept to send it
        return max(min(limits), min(MIN_THINK_SECONDS, whole / 2))


class Bot(ABC):
    """A player for one game at one level.

    Subclasses implement :meth:`choose`. ``game`` is the reference rules object
    (from ``protocol.games``), ``level`` the level name this bot was made for
    and ``seed`` the seed of its random choices (``None``: not reproducible).
    Stronger engines may keep their own fast board representation, but take and
    return the reference rules' states and moves.
    """

    def __init__(self, game_id: str, level: str, seed: int | None = None) -> None:
        self.game_id = game_id
        self.level = level
        self.seed = seed
        self.rng = random.Random(seed)

    @property
    def game(self) -> Game:
        """The reference rules of the game this bot plays."""
        return GAMES[self.game_id]

    @abstractmethod
    def choose(self, state: Any, budget: TimeBudget | None = None) -> Any:
        """A legal move (of the reference rules) for the player to move in ``state``.

        ``state`` is a running position of ``game``; ``budget`` says how long
        the bot may think (``None``: no limit). Bots that search to a fixed depth
        may ignore it; engines that search by time must answer within
        ``budget.move_deadline_seconds()``.
        """

    def new_game(self) -> None:
        """Forget anything learned about the previous game (e.g. a transposition table).

        Called before the first move of each game; nothing to do for bots
        that keep no memory between moves.
        """
        return None

    def stats(self) -> dict[str, Any]:
        """Figures about the last :meth:`choose` (e.g. nodes, depth, score) for logs; may be empty."""
        return {}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.game_id} {self.level} seed={self.seed}>"
