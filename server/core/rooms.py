"""The hall's rooms: by name (unique ignoring case), free names for new ones, and who opened which.

A room counts against its creator's name and address for as long as it is open (the quotas the hall
enforces); rooms opened by seeks count against nobody here (``server.core.seeks`` keeps those).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from protocol.messages import MAX_ROOM_NAME

from .room import Room

LAKES = (
    "Kalamalka Lake", "Okanagan Lake", "Wood Lake", "Skaha Lake", "Vaseux Lake", "Mabel Lake",
    "Shuswap Lake", "Kootenay Lake", "Arrow Lake", "Slocan Lake", "Moyie Lake", "Christina Lake",
)


def lake_name(number: int) -> str:
    """The ``number``-th generated room name: the lakes in turn, then numbered (``Wood Lake 2``)."""
    lake, round_no = LAKES[number % len(LAKES)], number // len(LAKES)
    return lake if round_no == 0 else f"{lake} {round_no + 1}"


def normalised(name: str) -> str:
    """``name`` as rooms are found by it: runs of white space one space, none at either end."""
    return " ".join(name.split())


def room_key(name: str) -> str:
    """The key of a room of name ``name`` where case does not count (a cluster's register and listings)."""
    return normalised(name).casefold()


class RoomRegistry:
    """Every open room, and which name and address opened each."""

    def __init__(self) -> None:
        self.rooms: dict[str, Room] = {}
        self.folded: dict[str, str] = {}  # casefolded room name -> room name: names are unique ignoring case
        self.plain: dict[str, Room] = {}  # the rooms whose name is as find normalises one (all but restored oddities)
        self.created_by: dict[str, set[str]] = {}  # creator's name -> its open rooms
        self.by_address: dict[str, set[str]] = {}  # creator's address -> the open rooms created from it
        self.changed: list[set[str]] = []  # a cluster node's sets of rooms opened, closed or relisted (it empties them)
        self._lake = 0

    def __len__(self) -> int:
        return len(self.rooms)

    def __iter__(self) -> Iterator[Room]:
        return iter(self.rooms.values())

    def add(self, room: Room) -> None:
        """An open room (counted against its creator, if it has one)."""
        self.rooms[room.name] = room
        self.folded[room.name.casefold()] = room.name
        if normalised(room.name) == room.name:
            self.plain[room.name] = room
        self.listing_changed(room.name)
        if room.creator is not None:
            self.created_by.setdefault(room.creator, set()).add(room.name)
            if room.address:
                self.by_address.setdefault(room.address, set()).add(room.name)

    def remove(self, room: Room) -> None:
        """``room`` is gone."""
        self.rooms.pop(room.name, None)
        self.folded.pop(room.name.casefold(), None)
        self.plain.pop(room.name, None)
        self.listing_changed(room.name)
        for index, key in ((self.created_by, room.creator), (self.by_address, room.address)):
            named = index.get(key or "")
            if named is not None:
                named.discard(room.name)
                if not named:
                    del index[key or ""]

    def listing_changed(self, name: str) -> None:
        """Room ``name``'s listing changed (kept only for a cluster node, which publishes the changes)."""
        for changed in self.changed:
            changed.add(name)

    def find(self, name: str) -> Room | None:
        """The room called ``name`` (runs of spaces count as one, case is ignored), or None."""
        room = self.plain.get(name)  # the name exactly (every move names its room so): it needs no normalising
        if room is not None:
            return room
        name = normalised(name)
        room = self.rooms.get(name)
        if room is None and len(name) <= MAX_ROOM_NAME:  # a longer name names no room: don't even fold it
            room = self.rooms.get(self.folded.get(name.casefold(), ""))
        return room

    def taken(self, name: str) -> bool:
        """True when a room of this name (ignoring case) is open."""
        return name.casefold() in self.folded

    def free_name(self, elsewhere: Callable[[str], bool] | None = None, suffix: str = "") -> str:
        """A name for a new room: a lake of the Okanagan, numbered once they are all taken (here, or
        ``elsewhere``: on another node of a cluster; ``suffix`` after the lake)."""
        while True:
            name = lake_name(self._lake) + suffix
            self._lake += 1
            if not self.taken(name) and (elsewhere is None or not elsewhere(name)):
                return name

    def created(self, name: str) -> set[str]:
        """The open rooms ``name`` created."""
        return self.created_by.get(name, set())

    def from_address(self, address: str) -> set[str]:
        """The open rooms created from ``address``."""
        return self.by_address.get(address, set())
