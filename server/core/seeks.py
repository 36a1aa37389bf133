"""The hall's seek desk: players waiting to be paired, and who moved first when two names last met.

Seeks with the same settings (game, options, time control, series length) pair; a seek waits until one
comes. The desk decides: :meth:`SeekDesk.seek` either finds the partner (the hall then opens a room for
the two, first mover alternating between meetings) or records the seek and says what it waits for,
including the seeks it cannot pair with because their settings differ. ``connected`` tells the desk who
is logged in now; it never calls back into the hall. Ladder seeks (``ladder: true``) wait on the desk's
:class:`~server.core.ladder.Ladder`, which pairs by rating; their colours alternate by the same rule.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Container
from dataclasses import dataclass
from typing import Any

from .ladder import Ladder, Ready, Rung
from .room import RoomSettings

log = logging.getLogger("plyhall.hall")

OTHERS_SHOWN = 10  # seeks on other settings a `seeking` message lists
LISTED = 50  # seeks the lobby listing shows (oldest first)


def settings_key(settings: RoomSettings) -> str:
    """What seeks on the same settings share, and only they."""
    return json.dumps(settings.to_json(), sort_keys=True)


@dataclass
class Seek:
    """A player waiting to be paired: for which game, on which settings."""

    name: str
    settings: RoomSettings
    key: str  # seeks with equal keys match
    since: float

    def to_json(self) -> dict[str, Any]:
        """The seek as the ``seeking`` reply shows it."""
        return {"game": self.settings.game.id, "options": self.settings.options,
                "time_control": self.settings.time_control.to_json(), "games": self.settings.games,
                "rated": self.settings.rated}


@dataclass(frozen=True)
class Pairing:
    """Two seeks that pair: the room the hall opens seats ``first`` in seat 0 (``ladder``: two ladder rungs)."""

    first: str
    second: str
    settings: RoomSettings
    ladder: bool = False


class SeekDesk:
    """Waiting seeks by settings, and the first mover of each pair of names."""

    def __init__(self, ladder: Ladder | None = None) -> None:
        self.seeks: dict[str, list[Seek]] = {}  # seek key -> waiting seeks, oldest first
        self.first_of_pair: dict[frozenset[str], str] = {}  # who had seat 0 when two names last met by seek
        self.rooms: set[str] = set()  # open rooms that seeks opened
        self.ladder = ladder or Ladder()
        self.ladder_rooms: set[str] = set()  # open rooms that the ladder opened

    def seek(self, name: str, settings: RoomSettings, now: float, connected: Container[str]) -> Pairing | Seek:
        """``name`` seeks a game on ``settings``: the pairing with a waiting seek, or the seek that now waits (an
        earlier seek of ``name`` for the same game is replaced; one on the same settings waits on as it was, and is
        what is returned: see :meth:`again`)."""
        key = settings_key(settings)
        mine = self.again(name, key)
        if mine is None:
            self.drop(name, settings.game.id)
        waiting = self.seeks.setdefault(key, [])
        for index, other in enumerate(waiting):
            if other.name != name and other.name in connected:
                del waiting[index]
                return self._pair(other.name, name, settings)
        if mine is not None:
            return mine
        seek = Seek(name, settings, key, now)
        waiting.append(seek)
        log.debug("%s seeks a game of %s", name, settings.game.id)  # not info: a client in a loop filled the log
        return seek

    def again(self, name: str, key: str) -> Seek | None:
        """``name``'s seek with settings ``key`` when it waits already (a client that sends its seek again changes
        nothing: no log line, nobody told again), else None."""
        for seek in self.seeks.get(key, ()):
            if seek.name == name:
                return seek
        return None

    def others(self, seek: Seek, connected: Container[str]) -> list[Seek]:
        """The waiting seeks of connected players for ``seek``'s game on other settings."""
        return [other for key, waiting in self.seeks.items() if key != seek.key for other in waiting
                if other.settings.game is seek.settings.game and other.name != seek.name and other.name in connected]

    def shown_to(self, found: Seek, connected: Container[str]) -> list[Seek]:
        """The other waiting seeks whose ``seeking`` message would now list ``found`` among its first
        :data:`OTHERS_SHOWN`: those to tell of it. (Everybody seeking the game was told of every new seek, each
        message listing the others: a name of 150 seeks made 22,500 messages and held the server for 2 s.)

        A name has one seek a game, so what ``other``'s message lists before ``found`` is every seek of the game
        ahead of ``found`` but those on ``other``'s settings: one pass counts them, settings by settings."""
        position = None  # found's place among the game's seeks, in the order the messages list them
        ahead_by_key: dict[str, int] = {}  # the seeks ahead of found, by settings
        ordered = []
        for waiting in self.seeks.values():
            for seek in waiting:
                if seek.settings.game is not found.settings.game or seek.name not in connected:
                    continue
                if seek is found:
                    position = len(ordered)
                elif position is None:
                    ahead_by_key[seek.key] = ahead_by_key.get(seek.key, 0) + 1
                ordered.append(seek)
        if position is None:  # found's name is not connected: nobody is told
            return []
        return [other for other in ordered if other.key != found.key and other.name != found.name
                and position - ahead_by_key.get(other.key, 0) < OTHERS_SHOWN]

    def describe_others(self, seek: Seek, connected: Container[str]) -> list[dict[str, Any]]:
        """What a ``seeking`` message says of the seeks that wait for the same game but cannot pair with ``seek``."""
        return [{"name": other.name, **other.to_json()} for other in self.others(seek, connected)[:OTHERS_SHOWN]]

    def listed(self, connected: Container[str]) -> list[dict[str, Any]]:
        """The seeks that wait now, as the lobby listing shows them (read-only): who seeks which game on which
        settings, oldest first, those of connected players only, at most ``LISTED``."""
        waiting = sorted((seek for seeks in self.seeks.values() for seek in seeks if seek.name in connected),
                         key=lambda seek: seek.since)
        return [{"name": seek.name, **seek.to_json()} for seek in waiting[:LISTED]]

    def seeking(self, name: str) -> bool:
        """Whether ``name`` has a plain seek waiting (the lobby lists it)."""
        return any(seek.name == name for waiting in self.seeks.values() for seek in waiting)

    def ladder_seek(self, name: str, game: str, now: float, address: str = "?") -> Rung:
        """``name`` seeks, from ``address``, a place on the ladder of ``game`` (its plain seek for that game is
        replaced; a rung it has stays as it is)."""
        self.drop(name, game, keep_ladder=True)
        if (game, name) not in self.ladder.rungs:
            log.info("%s is on the ladder of %s", name, game)
        return self.ladder.join(name, game, now, address)

    def ladder_pairings(self, game: str, now: float, ready: Ready) -> list[Pairing]:
        """The pairs the ladder of ``game`` makes now of its rungs that are ``ready``, colours given."""
        settings = self.ladder.settings[game]
        return [Pairing(*self._colours(a, b), settings, ladder=True) for a, b in self.ladder.pairings(game, now, ready)]

    def drop(self, name: str, game: str | None = None, keep_ladder: bool = False) -> None:
        """Withdraw ``name``'s seeks (for ``game``, or all), its ladder rungs too unless ``keep_ladder``."""
        if not keep_ladder:
            self.ladder.leave(name, game)
        for key, waiting in list(self.seeks.items()):
            kept = [s for s in waiting if s.name != name or (game is not None and s.settings.game.id != game)]
            if kept:
                self.seeks[key] = kept
            else:
                del self.seeks[key]

    def opened(self, room: str, ladder: bool = False) -> None:
        """A room was opened for a pairing (the hall opens it; ``ladder``: a ladder pairing)."""
        self.rooms.add(room)
        if ladder:
            self.ladder_rooms.add(room)

    def closed(self, room: str) -> None:
        """A room is gone (whatever opened it)."""
        self.rooms.discard(room)
        self.ladder_rooms.discard(room)

    def waiting(self) -> int:
        """Seeks waiting now, ladder rungs included (for the metrics)."""
        return sum(len(waiting) for waiting in self.seeks.values()) + self.ladder.waiting()

    def _colours(self, waiting: str, arriving: str) -> tuple[str, str]:
        """Who of two names that meet sits in seat 0 (``waiting``, unless it did when they last met) and seat 1."""
        pair = frozenset((waiting, arriving))
        first = waiting if self.first_of_pair.get(pair) != waiting else arriving
        self.first_of_pair[pair] = first
        return first, arriving if first == waiting else waiting

    def _pair(self, waiting: str, arriving: str, settings: RoomSettings) -> Pairing:
        self.drop(waiting, keep_ladder=True)
        self.drop(arriving, keep_ladder=True)
        return Pairing(*self._colours(waiting, arriving), settings)
