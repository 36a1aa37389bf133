"""The words the server says to people: why a game ended, and why a request was refused.

Everything a player reads on the page, in a bot's log or from the API as a result's reason is written here, with
the players' names where the rules of a game only know seats (``protocol`` does not know who sits where: the room
does, and turns a rule's reason into a sentence through :func:`rule_reason`). Machine-readable fields (the winner's
seat, error codes) are not words and stay as they are.

Records stored before these words keep the text they were stored with ("seat 0 resigned"): a reason is history, and
nothing rewrites it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_HIDDEN = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""What a chat line may not hold: control characters but tab (C0, DEL, C1: an escape sequence's start ``\\x9b``
among them), the line and paragraph separators, and the bidirectional embeddings, overrides and isolates that turn
the text after them around."""

NO_LEGAL_MOVE = "no legal move"
"""The reason the rules give when the player to move has no legal turn (and loses)."""


def _who(players: Sequence[str], seat: int) -> str:
    """The name of the player in ``seat`` (``seat N`` only when the seat has nobody's name)."""
    name = players[seat] if 0 <= seat < len(players) else ""
    return name or f"seat {seat}"


def rule_reason(reason: str, winner: int | None, players: Sequence[str]) -> str:
    """A game's rule reason, with names: ``no legal move`` says who had none (the loser); the other reasons of the
    rules (``four in a row``, ``the board is full``) already read well after ``alice won:``."""
    if reason == NO_LEGAL_MOVE and winner is not None:
        return f"{_who(players, 1 - winner)} has no legal move"
    return reason


def resigned(players: Sequence[str], seat: int) -> str:
    """The reason of a resignation."""
    return f"{_who(players, seat)} resigned"


def ran_out_of_time(players: Sequence[str], seat: int) -> str:
    """The reason of a flag fall."""
    return f"{_who(players, seat)} ran out of time"


def idle(players: Sequence[str], seat: int, seconds: float) -> str:
    """The reason of a game ended because the player to move did not move for the room's idle limit."""
    return f"{_who(players, seat)} did not move for {seconds:g} s"


def disconnected(players: Sequence[str], seat: int) -> str:
    """The reason of a game lost by a player who did not come back within the grace period."""
    return f"{_who(players, seat)} disconnected and did not come back in time"


def left(players: Sequence[str], seat: int) -> str:
    """The reason of a game lost by a player who left the room during it."""
    return f"{_who(players, seat)} left the game"


def illegal_move(players: Sequence[str], seat: int, move: str, why: str) -> str:
    """The reason of a game lost by an illegal move (in rooms where an illegal move loses)."""
    return f"illegal move by {_who(players, seat)} ({move}: {why})"


def absent(players: Sequence[str], seats: Sequence[int], why: str) -> str:
    """The reason of a forfeit: who (``seats``) ``why`` (``did not come``, ``left the room before …``)."""
    return f"{' and '.join(_who(players, seat) for seat in seats)} {why}"


def not_your_turn(players: Sequence[str], seat: int) -> str:
    """The refusal of a move sent out of turn."""
    return f"it is {_who(players, seat)}'s turn, not yours"


def house_bots_busy(limit: int) -> str:
    """The refusal of a house bot when all ``limit`` house bots a room may have are playing (the ladder's anchors
    are not among them: they have places of their own). One sentence, saying "try again" once."""
    bots = "the house bot of this server is" if limit == 1 else f"all {limit} house bots of this server are"
    return f"{bots} playing; try again when one of their games ends (usually within a few minutes)"


def unprintable(text: str) -> bool:
    """Whether ``text`` holds a character a chat line may not (:data:`_HIDDEN`)."""
    return _HIDDEN.search(text) is not None
