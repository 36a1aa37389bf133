"""The settings of a room, validated: game and options, time control, what an illegal move costs, the grace
period of a dropped player, how many games the room plays, and whether its games are rated."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from protocol.games import Game, OptionError, get_game

from .clock import TimeControl

ILLEGAL_MOVE_POLICIES = {"reject": "the move is refused and the turn kept", "lose": "the mover loses"}
MAX_GRACE = 600.0
MAX_GAMES_PER_ROOM = 1000


@dataclass
class RoomSettings:
    """Validated settings of a room."""

    game: Game
    options: dict[str, Any]
    time_control: TimeControl
    illegal_move: str
    grace: float
    games: int
    rated: bool = False  # its games are rated when both players may be (protocol.ratings) and they end by play

    @classmethod
    def parse(
        cls,
        game_id: str,
        options: Any = None,
        time_control: Any = None,
        illegal_move: str | None = None,
        grace: float | None = None,
        games: int | None = None,
        defaults: dict[str, Any] | None = None,
        rated: Any = None,
    ) -> RoomSettings:
        """Validate everything ``create_room`` may carry; raises ``OptionError`` with the reason. ``rated`` defaults
        to ``defaults["rated"]`` for a timed room, else False."""
        defaults = defaults or {}
        try:
            game = get_game(game_id)
        except KeyError as exc:
            raise OptionError(exc.args[0]) from None
        options = {} if options is None else options
        if not isinstance(options, dict):
            raise OptionError("options must be a map of game options")
        game.initial_state(**options)  # validates the game options
        default = defaults.get("time_control", {"per_move": 30})
        if isinstance(time_control, dict) and set(time_control) == {"margin"}:
            time_control = {**default, **time_control}  # only a margin: the server's clock, with that margin
        control = TimeControl.parse(time_control if time_control is not None else default)
        policy = illegal_move if illegal_move is not None else defaults.get("illegal_move", "reject")
        if policy not in ILLEGAL_MOVE_POLICIES:
            raise OptionError(f"illegal_move must be one of {', '.join(ILLEGAL_MOVE_POLICIES)}, not {policy!r}")
        grace = float(defaults.get("grace", 30.0) if grace is None else grace)
        if not 0 <= grace <= MAX_GRACE:
            raise OptionError(f"grace must be from 0 to {MAX_GRACE:g} seconds")
        games = 1 if games is None else games
        if isinstance(games, bool) or not isinstance(games, int) or not 1 <= games <= MAX_GAMES_PER_ROOM:
            raise OptionError(f"games must be from 1 to {MAX_GAMES_PER_ROOM}")
        if rated is None:  # by default an untimed room is not rated (a rated one needs a clock: below)
            rated = defaults.get("rated", False) and control.timed
        if not isinstance(rated, bool):
            raise OptionError("rated must be true or false")
        if rated and not control.timed:  # a losing player could sit on its move for ever, never taking the loss
            raise OptionError('a rated game needs a clock: time_control {"per_move": S} or {"initial": S, '
                              '"increment": S}, not untimed (an untimed game is unrated: rated false)')
        return cls(game, dict(options), control, policy, grace, games, rated)

    def to_json(self) -> dict[str, Any]:
        """The settings as ``create_room`` takes them (and as they are stored)."""
        return {"game": self.game.id, "options": self.options, "time_control": self.time_control.to_json(),
                "illegal_move": self.illegal_move, "grace": self.grace, "games": self.games, "rated": self.rated}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> RoomSettings:
        """Inverse of :meth:`to_json`."""
        return cls.parse(obj["game"], obj["options"], obj["time_control"], obj["illegal_move"], obj["grace"],
                         obj["games"], rated=bool(obj.get("rated", False)))
