"""What one node of a cluster knows about the others: their rooms and tournaments, and who holds names there.

A cluster (docs/SCALING.md) is several ``plyhall serve`` processes that share a Redis and a
PostgreSQL database and act as one hall. Each room is owned by one node, which checks its moves
and clocks; a client connected to another node reaches it through that node, which forwards its
requests over Redis (``server.io.cluster``). This module is the sans-I/O part the hall reads: the
other nodes' room listings (for the lobby and for routing), where a room or a tournament lives,
and who holds a name elsewhere when a login for it arrives. The I/O layer keeps it up to date.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .identity import Holder
from .rooms import room_key

WAITED = 0.05  # seconds a move's announcement must have waited (for its commit) before the wait is given back


def credit_wait(room: Any, seconds: float, now: float) -> float:
    """Give the seat to move in ``room`` back up to ``seconds`` of its running clock: time it could not use because
    it had not been told it was its turn (the announcement waited for a database that was away, or for Redis to
    carry it to the player's node). Never more than its turn has lasted; what was given back."""
    clocks = getattr(room, "clocks", None)
    if clocks is None or clocks.running is None or clocks.final is not None or seconds <= 0:
        return 0.0
    given = min(seconds, max(0.0, now - clocks.turn_started))
    clocks.turn_started += given
    return given


TURN_MESSAGES = frozenset({"moved", "game_start"})  # what tells a player its turn: a move, a game's start or state


def turn_rooms(messages: Iterable[tuple[int, dict[str, Any]]]) -> set[str]:
    """The rooms a batch of messages tells a player whose turn it is in: a move announced (``moved``), or a game's
    start or its whole state (``game_start``)."""
    return {msg["room"] for _, msg in messages
            if msg.get("type") in TURN_MESSAGES and isinstance(msg.get("room"), str)}


@dataclass
class ClusterView:
    """The other nodes as this node sees them (``node`` is this node's own name)."""

    node: str
    listings: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)  # node -> room name -> listing
    summaries: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # node -> its tournaments' summaries
    rooms: dict[str, str] = field(default_factory=dict)  # casefolded room name -> the node that owns it
    routes: dict[str, str] = field(default_factory=dict)  # ... learned from the owner's messages, ahead of listings
    events: dict[str, str] = field(default_factory=dict)  # tournament id -> the node that runs it
    holders: dict[str, Holder] = field(default_factory=dict)  # name -> who holds it on another node
    seats: dict[str, list[str]] = field(default_factory=dict)  # name -> rooms elsewhere where it holds a seat
    house_free: dict[str, int] = field(default_factory=dict)  # node -> house bots it may start now
    numbers: list[int] = field(default_factory=list)  # room-name numbers reserved for this node (Redis blocks)

    def learn(self, node: str, rooms: list[dict[str, Any]], tournaments: list[dict[str, Any]]) -> bool:
        """``node`` published its listing; True when its rooms differ from what this node knew."""
        if node == self.node:
            return False
        known = self.listings.get(node, {})
        whole = {room["name"]: room for room in rooms}
        changed = known != whole
        self.forget(node)
        self.listings[node] = {}
        self.update(node, whole, tournaments)
        return changed

    def update(self, node: str, rooms: dict[str, dict[str, Any] | None], tournaments: list[dict[str, Any]]) -> bool:
        """``node`` published what changed: rooms by name (None: closed), and all its tournaments' summaries.
        True when its rooms differ from what this node knew."""
        if node == self.node:
            return False
        listing = self.listings.setdefault(node, {})
        changed = any(listing.get(name) != room for name, room in rooms.items())
        for name, room in rooms.items():
            key = name.casefold()
            if room is None:
                listing.pop(name, None)
                if self.rooms.get(key) == node:
                    del self.rooms[key]
                if self.routes.get(key) == node:
                    del self.routes[key]
            else:
                listing[name] = room
                self.rooms[key] = node
        for summary in self.summaries.pop(node, []):
            if self.events.get(summary["id"]) == node:
                del self.events[summary["id"]]
        self.summaries[node] = tournaments
        for summary in tournaments:
            self.events[summary["id"]] = node
        return changed

    def forget(self, node: str) -> None:
        """``node`` is gone (or about to publish a fresh listing)."""
        self.house_free.pop(node, None)
        for name in self.listings.pop(node, {}):
            key = name.casefold()
            if self.rooms.get(key) == node:
                del self.rooms[key]
            if self.routes.get(key) == node:
                del self.routes[key]
        for summary in self.summaries.pop(node, []):
            if self.events.get(summary["id"]) == node:
                del self.events[summary["id"]]
        for key in [key for key, owner in self.routes.items() if owner == node and key not in self.rooms]:
            del self.routes[key]

    def claimed(self, room: str) -> None:
        """This node holds ``room``'s name in the cluster's register now: another node's listing that still shows
        a room of that name is out of date (its close is on its way, published after the register's release)."""
        key = room_key(room)
        node = self.rooms.pop(key, None)
        self.routes.pop(key, None)
        listing = self.listings.get(node or "", {})
        for name in [name for name in listing if name.casefold() == key]:
            del listing[name]

    def route(self, room: str, node: str) -> None:
        """A message from ``node`` is about ``room``: requests about it go there (until a listing says else)."""
        if node != self.node:
            self.routes[room_key(room)] = node

    def owner(self, room: str) -> str | None:
        """The other node that owns ``room`` (a name as a client typed it), or None."""
        key = room_key(room)
        return self.routes.get(key) or self.rooms.get(key)

    def taken(self, room: str) -> bool:
        """True when another node has a room of this name (ignoring case)."""
        return self.owner(room) is not None

    def listing(self, game: str | None = None) -> list[dict[str, Any]]:
        """The other nodes' rooms, optionally of one game."""
        return [room for node in sorted(self.listings) for room in self.listings[node].values()
                if game is None or room["game"] == game]

    def tournaments(self) -> list[dict[str, Any]]:
        """The other nodes' tournaments' summaries."""
        return [summary for node in sorted(self.summaries) for summary in self.summaries[node]]

    def next_number(self) -> int | None:
        """The next room-name number reserved for this node, or None when its block ran out."""
        return self.numbers.pop(0) if self.numbers else None

    def holder(self, name: str) -> Holder:
        """Who holds ``name`` on another node, as the last look-up for a login of it found."""
        return self.holders.get(name, Holder.NOBODY)
