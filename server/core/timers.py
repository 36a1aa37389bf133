"""The hall's timers: one heap of deadlines for rooms, and coalesced pushes (the lobby, each tournament).

A room is woken at its next deadline (a flag falls, a grace period ends); the ladder is woken like a room, under
the key ``LADDER``, when a widening rating window will make a pair. A deadline only ever moves later
with a move, so a room's entry is pushed only when it comes earlier than the one waiting: the waiting one
then finds nothing due and the room is scheduled again (one heap entry a room, not one a move).

A push (the room listing to lobby watchers, a tournament to its watchers) goes out at most once every
``interval`` seconds: a change inside the interval marks the key dirty and wakes the hall when the
interval has passed. Stale heap entries are harmless.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Final

PUSH_INTERVAL = 0.5  # seconds between two pushes of one key; changes in between are coalesced
LOBBY = ""  # the lobby's push key (no room has an empty name)
LADDER = "\x01ladder"  # the ladder's deadline among the rooms' (when a widening rating window makes a pair)
_PUSH = "\x00"  # prefix of a push key in the heap (no room name has it)
NEVER: Final = float("inf")  # no deadline yet (made once: every move schedules its room)
_heappush: Final = heapq.heappush  # compiled, a Final is a C static: no look-up of heapq and its attribute a move


@dataclass
class Due:
    """What :meth:`Timers.due` found due: rooms to tick, and push keys whose coalesced push is owed."""

    rooms: set[str] = field(default_factory=set)
    pushes: set[str] = field(default_factory=set)


class Timers:
    """Deadlines of rooms and coalesced pushes, in one heap."""

    def __init__(self, interval: float = PUSH_INTERVAL) -> None:
        self.interval = interval
        self._heap: list[tuple[float, str]] = []
        self._scheduled: dict[str, float] = {}  # room -> the earliest deadline it has in the heap
        self._pushed: dict[str, float] = {}  # push key -> when it was last pushed
        self._dirty: set[str] = set()  # push keys changed since their last push

    def schedule(self, room: str, deadline: float | None) -> None:
        """Wake ``room`` at ``deadline`` (None: it has none)."""
        if deadline is not None and deadline < self._scheduled.get(room, NEVER):
            self._scheduled[room] = deadline
            _heappush(self._heap, (deadline, room))

    def forget(self, room: str) -> None:
        """``room`` is gone: its entry, if any, finds nothing when it comes up."""
        self._scheduled.pop(room, None)

    def changed(self, key: str, now: float) -> bool:
        """``key`` changed: True when it may be pushed now; else it is pushed when the interval has passed."""
        pushed = self._pushed.get(key, float("-inf"))
        if now - pushed >= self.interval:
            return True
        if key not in self._dirty:
            self._dirty.add(key)
            heapq.heappush(self._heap, (pushed + self.interval, _PUSH + key))
        return False

    def pushed(self, key: str, now: float) -> None:
        """``key`` was pushed at ``now``."""
        self._pushed[key] = now
        self._dirty.discard(key)

    def due(self, now: float) -> Due:
        """Everything due at ``now`` (taken off the heap)."""
        due = Due()
        while self._heap and self._heap[0][0] <= now:
            deadline, key = heapq.heappop(self._heap)
            if key.startswith(_PUSH):
                key = key[len(_PUSH):]
                if key in self._dirty:
                    due.pushes.add(key)
                continue
            due.rooms.add(key)
            if self._scheduled.get(key) == deadline:
                del self._scheduled[key]
        return due

    def next_deadline(self) -> float | None:
        """The earliest time at which :meth:`due` may find something."""
        return self._heap[0][0] if self._heap else None
