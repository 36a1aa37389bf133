"""One pairing pass of the ladder (:meth:`server.core.ladder.Ladder.pairings`): the bots that wait for a game,
sorted by rating, and for each the closest acceptable opponent still free, found by looking outwards from its
own rating. Sans I/O, like the ladder.

A :class:`Rung` (a name on the ladder of a game) is defined here, below the ladder, and the pass asks the ladder's
rules through :class:`PairingRules`, which :class:`~server.core.ladder.Ladder` fulfils: so this module never
imports the ladder back."""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import Protocol


@dataclass
class Rung:
    """A name on the ladder of a game: since when it waits (None while it plays, or until its last result is
    stored; only the :class:`~server.core.ladder.Ladder` sets it, as it keeps the waiting rungs of each game), and
    whom it played last."""

    name: str
    game: str
    since: float | None
    last_opponent: str | None = None
    address: str = "?"  # where its seek came from (the per-address limit of names on the ladder counts it)


class PairingRules(Protocol):
    """What a pairing pass asks of the ladder (:class:`~server.core.ladder.Ladder` answers)."""

    def rating(self, game: str, name: str) -> tuple[float, float]:
        """The rating and deviation ``name`` is paired by."""

    def window(self, rung: Rung, now: float) -> float:
        """Rating points around its own that ``rung`` accepts now."""

    def long_waiter(self, rung: Rung, now: float) -> bool:
        """True when ``rung`` has waited long enough to meet anybody it may meet."""

    def may_meet(self, a: Rung, b: Rung, waiting: int, now: float) -> bool:
        """True when ``a`` and ``b`` may be paired at ``now`` whatever their ratings (``waiting`` rungs wait)."""

    def allowance(self, address: str, now: float) -> float:
        """Ladder games the names of ``address`` may start now."""


class PairingPass:
    """One pairing pass over the rungs of a game that wait: they are sorted by rating, and each, the longest waiting
    first, takes the closest acceptable rung still free, found by looking outwards from its own rating (rungs taken
    are skipped in constant time), so a pass costs about ``n log n`` for ``n`` waiting, not ``n`` cubed."""

    def __init__(self, ladder: PairingRules, waiting: list[Rung], now: float) -> None:
        self.ladder = ladder
        self.now = now
        self.waiting = waiting  # the longest waiting first
        self.left = len(waiting)
        self.steps = 0
        self.spent: dict[str, int] = {}  # address -> ladder games its names start in this pass
        self.rating = {rung.name: ladder.rating(rung.game, rung.name)[0] for rung in waiting}
        self.window = {rung.name: ladder.window(rung, now) for rung in waiting}
        self.long = {rung.name: ladder.long_waiter(rung, now) for rung in waiting}
        self.order = sorted(waiting, key=lambda rung: (self.rating[rung.name], rung.since, rung.name))
        self.ratings = [self.rating[rung.name] for rung in self.order]
        self.index = {rung.name: i for i, rung in enumerate(self.order)}
        size = len(self.order)
        self._next = list(range(size + 1))  # i -> the first free index >= i (size: none), path-compressed
        self._prev = list(range(-1, size))  # i + 1 -> the last free index <= i (-1: none), path-compressed

    def rotated(self, resume: tuple[float | None, str] | None) -> list[Rung]:
        """The waiting rungs from the one a pass stopped at (``resume``), round to the start."""
        if resume is None:
            return self.waiting
        at = next((i for i, rung in enumerate(self.waiting) if (rung.since, rung.name) >= resume), 0)
        return self.waiting[at:] + self.waiting[:at]

    def alive(self, rung: Rung) -> bool:
        """True while ``rung`` is not paired in this pass."""
        i = self.index[rung.name]
        return self._find_next(i) == i

    def _find_next(self, i: int) -> int:
        root = i
        while self._next[root] != root:
            root = self._next[root]
        while self._next[i] != root:
            self._next[i], i = root, self._next[i]
        return root

    def _find_prev(self, i: int) -> int:
        root = i
        while self._prev[root + 1] != root:
            root = self._prev[root + 1]
        while self._prev[i + 1] != root:
            self._prev[i + 1], i = root, self._prev[i + 1]
        return root

    def take(self, a: Rung, b: Rung) -> None:
        """``a`` and ``b`` are paired: neither is free any more."""
        for rung in (a, b):
            i = self.index[rung.name]
            self._next[i] = i + 1
            self._prev[i + 1] = i - 1
        self.left -= 2
        self.spend(a, b)

    def remaining(self) -> list[Rung]:
        """The rungs still free."""
        return [rung for rung in self.order if self.alive(rung)]

    def acceptable(self, a: Rung, b: Rung) -> bool:
        """True when ``a`` and ``b`` may meet now: their ratings close enough (within both windows, or one of them has
        waited long) and the variety rule."""
        gap = abs(self.rating[a.name] - self.rating[b.name])
        close = gap <= min(self.window[a.name], self.window[b.name]) or self.long[a.name] or self.long[b.name]
        return close and self.ladder.may_meet(a, b, self.left, self.now) and self.may_start(
            b, 2.0 if a.address == b.address else 1.0)

    def may_start(self, rung: Rung, games: float) -> bool:
        """True when the address of ``rung`` may start ``games`` more ladder games in this pass."""
        spent = self.spent.get(rung.address, 0)
        return self.ladder.allowance(rung.address, self.now) - spent >= games

    def spend(self, a: Rung, b: Rung) -> None:
        """The addresses of ``a`` and ``b`` start a game each."""
        for rung in (a, b):
            self.spent[rung.address] = self.spent.get(rung.address, 0) + 1

    def closest(self, a: Rung) -> Rung | None:
        """The free rung closest in rating that ``a`` accepts and that accepts it (then the longest waiting, then by
        name), or None. Rungs are looked at in order of their distance from ``a``, a group of equal ratings at a
        time, up to ``a``'s window (an anchor's, or a long waiter's, has no end)."""
        i = self.index[a.name]
        mine = self.rating[a.name]
        reach = self.window[a.name]
        left, right = self._find_prev(i - 1), self._find_next(i + 1)
        size = len(self.order)
        while left >= 0 or right < size:
            low = mine - self.ratings[left] if left >= 0 else math.inf
            high = self.ratings[right] - mine if right < size else math.inf
            gap = min(low, high)
            if gap > reach:
                return None
            found: list[Rung] = []
            if high == gap:
                right = self._group(right, a, found, size)
            if low == gap:
                start = bisect.bisect_left(self.ratings, self.ratings[left])
                self._group(self._find_next(start), a, found, left + 1)
                left = self._find_prev(start - 1)
            if found:
                return min(found, key=lambda rung: (rung.since, rung.name))
        return None

    def _group(self, i: int, a: Rung, found: list[Rung], end: int) -> int:
        """Look at the free rungs from index ``i`` (below ``end``) that share its rating: the first that ``a`` may
        meet goes into ``found`` (the group is sorted by time waited). The index after the group."""
        rating = self.ratings[i]
        while i < end and self.ratings[i] == rating:
            self.steps += 1
            rung = self.order[i]
            if rung is not a and self.acceptable(a, rung):
                found.append(rung)
                end = i  # the rest of the group waited less: only the end of the group is wanted now
            i = self._find_next(i + 1)
        return self._find_next(bisect.bisect_right(self.ratings, rating))
