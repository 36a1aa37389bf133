"""What a call into the hall (or one of its desks) produced, for the I/O edge to carry out.

:class:`HallOutbox` holds messages by connection, connections to close, durable writes (committed before
the messages are sent), secret checks and name look-ups to run off the event loop, games that ended,
house bots to start or stop, and the refusals to count (:class:`~server.core.refusals.Refusal`, which the
I/O edge imports from here too). :func:`tag_reply` is the one rule that puts a request's ``id`` on its reply.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from protocol import messages as m

from ..storage.records import GameRecord, Write
from .identity import ClaimLookup, SecretCheck
from .refusals import Refusal

if TYPE_CHECKING:
    from .house import HouseStart


@dataclass(eq=False, slots=True)
class HallOutbox:
    """What a Hall call produced: messages by connection, connections to close, durable writes,
    secret checks to run off the event loop, and the games that ended."""

    messages: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    close: list[tuple[int, str]] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    checks: list[SecretCheck] = field(default_factory=list)
    lookups: list[ClaimLookup] = field(default_factory=list)  # names to look up in a shared database
    ended: list[GameRecord] = field(default_factory=list)
    house: list[HouseStart] = field(default_factory=list)  # house bot processes to start
    house_stop: list[str] = field(default_factory=list)  # house bots no longer needed (their process ends)
    refused: list[Refusal] = field(default_factory=list)  # why requests were refused by a quota or throttle

    def __init__(self, *, messages: list[tuple[int, dict[str, Any]]] | None = None,
                 writes: list[Write] | None = None, house: list[HouseStart] | None = None) -> None:
        """An empty outbox (every request makes one: list literals, cheaper than the generated default_factory
        calls), or one that starts with ``messages``, ``writes`` or ``house`` starts (the I/O edge's own)."""
        self.messages = [] if messages is None else messages
        self.writes = [] if writes is None else writes
        self.house = [] if house is None else house
        self.close, self.checks, self.lookups, self.ended, self.house_stop, self.refused = [], [], [], [], [], []

    def __eq__(self, other: object) -> bool:
        """The same contents (an outbox is mutable: it has no hash)."""
        if not isinstance(other, HallOutbox):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in _FIELDS)

    def send(self, conn: int, msg: dict[str, Any]) -> None:
        """Queue ``msg`` for connection ``conn``."""
        self.messages.append((conn, msg))

    def error(self, conn: int, code: str, text: str, **extra: Any) -> None:
        """Queue an ``error`` for connection ``conn``."""
        self.messages.append((conn, m.error(code, text, **extra)))

    def refuse(self, conn: int, reason: Refusal, code: str, text: str, **extra: Any) -> None:
        """Queue an ``error`` for a request a quota or throttle refused; ``reason`` is counted in the metrics."""
        self.refused.append(reason)
        self.error(conn, code, text, **extra)

    def extend(self, other: HallOutbox) -> HallOutbox:
        """Append another outbox's contents."""
        self.messages.extend(other.messages)
        self.close.extend(other.close)
        self.writes.extend(other.writes)
        self.checks.extend(other.checks)
        self.lookups.extend(other.lookups)
        self.ended.extend(other.ended)
        self.house.extend(other.house)
        self.house_stop.extend(other.house_stop)
        self.refused.extend(other.refused)
        return self


_FIELDS = ("messages", "close", "writes", "checks", "lookups", "ended", "house", "house_stop", "refused")



def tag_reply(out: HallOutbox, conn: int, msg_id: Any, replies: frozenset[str] = frozenset({"error"})) -> None:
    """The one rule: the first message for the requester that answers the request carries its id."""
    if msg_id is None:
        return
    for index, (target, msg) in enumerate(out.messages):
        if target == conn and msg["type"] in replies:
            out.messages[index] = (conn, {**msg, "id": msg_id})
            return
