"""What a bot author writes and reads: :class:`Player` (one method, ``choose``), the :class:`Turn` it is
given, and the :class:`GameResult` of each game it played."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from protocol.games import Game


@dataclass
class Turn:
    """What a bot sees when it is its turn: the reference-rules state and its clock."""

    game: Game
    state: Any
    seat: int
    room: str
    players: list[str]
    moves: list[str]
    time_left: float | None
    per_move: float | None
    increment: float
    record: str | None = None  # the game's record id (a room plays game after game, each its own record)
    _legal: list[Any] | None = field(default=None, repr=False)

    @property
    def legal_moves(self) -> list[Any]:
        """The legal moves (reference-rules move values)."""
        if self._legal is None:
            self._legal = self.game.legal_moves(self.state)
        return self._legal

    @property
    def opponent(self) -> str:
        """The other player's name."""
        return self.players[1 - self.seat]


class Resign(Exception):  # noqa: N818 - it is an instruction, not an error
    """Raised by :meth:`Player.choose` to resign the game instead of moving; the message says why (it is
    printed with the bot's status)."""


class NoMove(Exception):  # noqa: N818 - it is an instruction, not an error
    """Raised by :meth:`Player.choose` to send nothing this turn: the clock runs on and the game is lost on
    time if nothing else comes (an engine that did not answer in time). The message says why."""


class StopPlaying(Exception):  # noqa: N818 - it is an instruction, not an error
    """Raised by :meth:`Player.choose` when the player can play no more (an engine that crashes in every game): the
    game is resigned, rather than left to the opponent's wait for a player who never comes back, and the bot then
    stops with this error."""


class Player:
    """Subclass and write :meth:`choose`; everything else is done for you."""

    def choose(self, turn: Turn) -> Any:
        """Return a move: a reference move value, notation text, or the structured form (or raise
        :class:`Resign` or :class:`NoMove`)."""
        raise NotImplementedError

    def game_over(self, result: GameResult) -> None:
        """Told after each game this player had a seat in (in the thinking process, like ``choose``)."""

    def close(self) -> None:
        """Stop what the player started (an engine process) when the bot stops; called for a player thinking
        in a thread (a worker process is simply ended)."""

    def warm_up(self) -> str | None:
        """Get ready to play before the bot logs in (load or compile an engine, read a book): called once, in
        the thinking process. Returns what was warmed up, for the bot's output (None: nothing to say)."""
        return None


class FunctionPlayer(Player):
    """Wraps a plain function ``turn -> move`` (it must be picklable: a module-level function)."""

    def __init__(self, func: Callable[[Turn], Any]) -> None:
        self.func = func

    def choose(self, turn: Turn) -> Any:
        """Call the function."""
        return self.func(turn)


@dataclass
class GameResult:
    """One finished game as the bot saw it."""

    room: str
    seat: int | None
    winner: int | None
    reason: str
    players: list[str]
    record: str | None
    status: str = "finished"  # finished (played), forfeit (somebody never came) or aborted (no result)
    rating: dict[str, Any] | None = None  # a rated result: the bot's rating after it (game_over.ratings[seat])
    game_no: int | None = None  # the game's number in its room (game_over.game_no), as "playing game N in ROOM" said

    @property
    def played(self) -> bool:
        """True when the game has a result (it was not aborted: a cancelled tournament, nobody came back)."""
        return self.status != "aborted"

    @property
    def opponent(self) -> str:
        """The other player's name."""
        return self.players[1 - self.seat] if self.seat is not None else "?"

    @property
    def score(self) -> float:
        """1 for a win, 0.5 for a draw, 0 for a loss (from the bot's seat)."""
        if self.winner is None:
            return 0.5
        return 1.0 if self.winner == self.seat else 0.0
