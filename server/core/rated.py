"""Who may move whose rating: the rules of rated play that need what only the hall knows (addresses, registered
names, the day's rated games), on top of the rules of the records in :mod:`protocol.ratings`.

A rating measures play between different people (docs/RATINGS.md, "Which games are rated"). One person can claim
as many names as it likes, so, by default:

* **Linked names never rate each other.** Two names are linked when they play from one address (an IPv4 address;
  an IPv6 /64, as the I/O layer counts addresses) or one of them was claimed from the address the other plays from
  or was claimed from. Their games are recorded, unrated, with the reason.
* **One address, one opponent: a day's fair play.** All the names of one address together play one name at most
  :data:`PER_OPPONENT` rated games in 24 hours (what fair play lets one pair of names count at all), so that a
  thousand names cannot do to a third name what one may.
* **One address moves a name at most 100 points a day.** The rating changes the names of one address made to one
  name in 24 hours add up (whichever way). A further game between them counts with the weight (Glicko-2's, as fair
  play weighs games) that keeps the most it could move that name (its worse outcome, from both ratings as the hall
  knows them) within what is left of :data:`MOVE_LIMIT`, and is not rated once less than a point is left: however
  many names an address has, and however their ratings were sunk, they move a third name's rating by at most that
  in a day, newcomers' included. A game rated is counted at once with the most it could move that name, and with
  what it did move once its result is stored, so games that end at the same moment share what is left rather than
  each taking all of it. (The hall's deviations and a newcomer's volatility stand in for the stored ones, so the
  bound is as exact as they are.)
* **A budget per address.** The names playing from one address play at most ``budget`` rated games in 24 hours.

The operator lifts the address rules where they are wrong: ``networks`` hold many independent people (a
classroom behind one NAT: ``plyhall serve --rated-networks``), and names the organiser registered
(``plyhall names add``) are people it vouches for: two registered names are never linked, and their games use no
budget. ``registered_only`` rates registered names only (and anchors).

**Addresses are those of the whole game.** A game is counted against the address each player played from when it
started, and links its names by every address each logged in from while it ran: a name that starts a game from a
fresh address and moves to one whose day is used up before it resigns does not escape its loss, and two names of one
address do not unlink by one of them moving before the end.

The counts live in memory: a restarted server starts a fresh day for the budget (never for fair play between
names, which the stored results decide), and judges the games it took back by the addresses their players log in
from again. Addresses unknown to the hall (``?``: a hall fed without them) link nothing.
"""

from __future__ import annotations

import ipaddress
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from protocol.glicko2 import DEFAULT_VOLATILITY, Rating, Result, update
from protocol.ratings import MAX_DEVIATION, MIN_DEVIATION, PAIR_DAILY_LIMIT, PAIR_FADE

DAY = 86400.0
"""The window of the budget and of the per-opponent limit, in seconds."""
PER_OPPONENT = PAIR_DAILY_LIMIT + PAIR_FADE
"""Rated games a day one name plays against all the names of one address together (the most one pair of names
counts at all under fair play: the first 20 fully, 4 more fading)."""
MIN_POINTS = 1.0
"""Rating points left below which a game between a name and an address's names is not rated at all."""
MOVE_LIMIT = 100.0
"""Rating points the names of one address may move one name's rating by in 24 hours (then their games with it are
not rated)."""
DEFAULT_BUDGET = 200
"""Rated games a day the names of one address play, by default (``plyhall serve --rated-games-per-address``)."""
UNKNOWN = "?"
LOGINS_KEPT = 64
"""Logins of one name kept for the games it plays (a game links the addresses of those made while it ran)."""
NEWCOMER = (1500.0, MAX_DEVIATION)
"""The rating and deviation of a name with no rated game."""

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class Where:
    """Where a game's players played from: the address each game is counted against (``counted``, by seat; None:
    unknown) and every address that links each (``links``, by seat)."""

    counted: tuple[str | None, str | None]
    links: tuple[frozenset[str], frozenset[str]]


def within(address: str, networks: Sequence[Network]) -> bool:
    """True when ``address`` (an IP address, or an IPv6 /64 as the I/O layer writes it) lies in one of ``networks``."""
    if not networks:
        return False
    try:
        net = ipaddress.ip_network(address, strict=False)
    except ValueError:
        return False
    return any(net.version == n.version and net.subnet_of(n) for n in networks)  # type: ignore[arg-type]


def _recent(times: deque[float] | None, now: float) -> int:
    """How many of ``times`` (oldest first) are within a day of ``now``, forgetting older ones."""
    if times is None:
        return 0
    while times and times[0] <= now - DAY:
        times.popleft()
    return len(times)


def worst_change(mine: tuple[float, float], theirs: tuple[float, float], weight: float = 1.0) -> float:
    """The most one game of ``weight`` can change a rating of ``mine`` (rating, deviation) against ``theirs``: its
    worse outcome, win or loss, under Glicko-2 (:mod:`protocol.ratings`' update, the volatility a newcomer's)."""
    me = Rating(mine[0], mine[1], DEFAULT_VOLATILITY)
    other = Rating(theirs[0], theirs[1], DEFAULT_VOLATILITY)
    return max(abs(update(me, [Result(other, score, weight)], 0.0, floor=MIN_DEVIATION, ceiling=MAX_DEVIATION).rating
                   - mine[0]) for score in (0.0, 1.0))


def weight_within(points: float, mine: tuple[float, float], theirs: tuple[float, float]) -> float:
    """The largest weight (at most 1) of a game against ``theirs`` that moves a rating of ``mine`` by at most
    ``points`` whatever its result (to a thousandth, rounded down)."""
    if worst_change(mine, theirs) <= points:
        return 1.0
    low, high = 0.0, 1.0
    while high - low > 0.001:
        middle = (low + high) / 2
        low, high = (middle, high) if worst_change(mine, theirs, middle) <= points else (low, middle)
    return low


def _moved(changes: deque[list[float]] | None, now: float) -> float:
    """The rating points of ``changes`` ((when, points) oldest first) within a day of ``now``, forgetting older ones."""
    if changes is None:
        return 0.0
    while changes and changes[0][0] <= now - DAY:
        changes.popleft()
    return sum(entry[1] for entry in changes)


@dataclass
class RatedPlay:
    """The hall's desk of rated play between people: it links names by address and counts each address's day."""

    networks: tuple[Network, ...] = ()
    budget: int = DEFAULT_BUDGET  # rated games a day from one address (0: no budget)
    registered_only: bool = False
    registered: set[str] = field(default_factory=set)
    claimed_from: dict[str, str] = field(default_factory=dict)  # name -> the address its claim came from
    plays_from: dict[str, str] = field(default_factory=dict)  # claimed name -> the address of its latest login
    _day: dict[str, deque[float]] = field(default_factory=dict)  # address -> its rated games in the last day
    _against: dict[tuple[str, str], deque[float]] = field(default_factory=dict)  # (address, name) -> ... against it
    _moves: dict[tuple[str, str], deque[list[float]]] = field(default_factory=dict)  # (address, name) -> [when,
    # points]: the rating points the names of that address moved that name by (the most a game could, until its
    # result is stored)
    _unsettled: dict[str, list[tuple[int, list[float]]]] = field(default_factory=dict)  # game record -> (seat, its
    # entry in _moves) for each name whose rating it counted the most a game could move, until it is stored
    _since_sweep: int = 0
    _logins: int = 0  # logins of claimed names so far
    _history: dict[str, deque[tuple[int, str]]] = field(default_factory=dict)  # name -> its last logins (number,
    # address)
    _started: dict[str, tuple[int, tuple[str | None, ...]]] = field(default_factory=dict)  # running game record ->
    # the logins before it started, and each seat's address then

    def restore(self, claimed_from: dict[str, str], registered: Iterable[str]) -> None:
        """After a restart: where each stored claim came from, and the registered names."""
        self.claimed_from.update(claimed_from)
        self.registered.update(registered)

    def claimed(self, name: str, address: str) -> None:
        """``name`` was claimed from ``address``."""
        self.claimed_from.setdefault(name, address)

    def seen(self, name: str, address: str) -> None:
        """A claimed ``name`` logged in from ``address``."""
        self.plays_from[name] = address
        self._logins += 1
        history = self._history.get(name)
        if history is None:
            history = self._history[name] = deque(maxlen=LOGINS_KEPT)
        history.append((self._logins, address))

    def started(self, record: str, players: Sequence[str]) -> None:
        """Game ``record`` between ``players`` started (in a room that rates its games)."""
        self._started[record] = (self._logins, tuple(self.plays_from.get(name) for name in players))

    def where(self, record: str, players: Sequence[str]) -> Where:
        """Where the players of game ``record``, which ended, played from (and the game forgotten): the addresses
        they started it from, and for linking those with every address they logged in from since (a game the
        hall did not see start, taken back after a restart: the addresses they play from now)."""
        start = self._started.pop(record, None)
        if start is None:
            return self._now_where(players)
        logins, addresses = start
        links = []
        for name, address in zip(players, addresses, strict=True):
            since = {a for number, a in self._history.get(name, ()) if number > logins}
            links.append(frozenset(a for a in (address, self.claimed_from.get(name), *since) if self._counted(a)))
        return Where((addresses[0], addresses[1]), (links[0], links[1]))

    def _now_where(self, players: Sequence[str]) -> Where:
        """Where ``players`` play from now (a game that would start now)."""
        return Where((self.plays_from.get(players[0]), self.plays_from.get(players[1])),
                     (frozenset(self._addresses(players[0])), frozenset(self._addresses(players[1]))))

    def _counted(self, address: str | None) -> bool:
        """True when ``address`` links names and counts towards budgets (known, and not a network of many)."""
        return address is not None and address != UNKNOWN and not within(address, self.networks)

    def _addresses(self, name: str) -> set[str]:
        return {a for a in (self.plays_from.get(name), self.claimed_from.get(name)) if self._counted(a)}

    def reason(self, players: Sequence[str], anchors: Sequence[bool], now: float,
               ratings: Sequence[tuple[float, float]] = (NEWCOMER, NEWCOMER), where: Where | None = None) -> str | None:
        """Why a game between ``players`` (``anchors``: which of them are ladder anchors, the server's own bots;
        ``ratings``: each one's rating and deviation as the hall knows them; ``where``: where they played from, by
        default where they play from now) that the records' rules would rate is not rated, or None: it is rated."""
        where = where or self._now_where(players)
        people = [name for name, anchor in zip(players, anchors, strict=True) if not anchor]
        if self.registered_only:
            for name in people:
                if name not in self.registered:
                    return f"{name} is not a registered name, and this server rates registered names only"
        vouched = [name in self.registered for name in players]
        if len(people) == 2 and not all(vouched) and where.links[0] & where.links[1]:
            return (f"{people[0]} and {people[1]} play from one address, or were claimed from one: names one "
                    "person may control do not rate each other")
        for seat, name in enumerate(players):
            address = where.counted[seat]
            if anchors[seat] or vouched[seat] or not self._counted(address):
                continue
            assert address is not None
            opponent = players[1 - seat]
            if MOVE_LIMIT - _moved(self._moves.get((address, opponent)), now) < MIN_POINTS:
                return (f"names from {name}'s address have moved {opponent}'s rating by {MOVE_LIMIT:g} points in the "
                        "last 24 hours")
            if _recent(self._against.get((address, opponent)), now) >= PER_OPPONENT:
                return (f"{opponent} has played its {PER_OPPONENT} rated games of the last 24 hours against names "
                        f"from {name}'s address")
            if self.budget and _recent(self._day.get(address), now) >= self.budget:
                return f"{name}'s address has played its {self.budget} rated games of the last 24 hours"
        return None

    def weight(self, players: Sequence[str], anchors: Sequence[bool], now: float,
               ratings: Sequence[tuple[float, float]] = (NEWCOMER, NEWCOMER), where: Where | None = None) -> float:
        """The weight a game :meth:`reason` lets be rated counts with: 1, or less where it could move a name further
        than the rating points the other's address has left with that name today."""
        where = where or self._now_where(players)
        weight = 1.0
        for seat, name in enumerate(players):
            address = where.counted[seat]
            if anchors[seat] or name in self.registered or not self._counted(address):
                continue
            left = MOVE_LIMIT - _moved(self._moves.get((address, players[1 - seat])), now)
            weight = min(weight, weight_within(left, ratings[1 - seat], ratings[seat]))
        return weight

    def rated(self, players: Sequence[str], anchors: Sequence[bool], now: float, record: str,
              ratings: Sequence[tuple[float, float]], weight: float, where: Where | None = None) -> None:
        """Game ``record`` between ``players`` (``ratings`` and ``where`` as :meth:`reason` had them) was rated at
        ``now`` with ``weight``: count it against their addresses' days, and each opponent's rating as moved by the
        most it could move it until :meth:`moved` says what it did."""
        where = where or self._now_where(players)
        for seat, name in enumerate(players):
            address = where.counted[seat]
            if anchors[seat] or name in self.registered or not self._counted(address):
                continue
            assert address is not None
            self._day.setdefault(address, deque()).append(now)
            self._against.setdefault((address, players[1 - seat]), deque()).append(now)
            entry = [now, worst_change(ratings[1 - seat], ratings[seat], weight)]
            self._moves.setdefault((address, players[1 - seat]), deque()).append(entry)
            self._unsettled.setdefault(record, []).append((seat, entry))
        self._since_sweep += 1
        if self._since_sweep >= 1024:
            self._since_sweep = 0
            self.sweep(now)

    def moved(self, record: str, changes: Sequence[float] | None) -> None:
        """Game ``record``, rated, is stored: it changed its players' ratings by ``changes`` (by seat; None: storage
        did not rate it after all), which now count instead of the most it could have moved them."""
        for seat, entry in self._unsettled.pop(record, ()):
            entry[1] = 0.0 if changes is None else abs(changes[1 - seat])

    def sweep(self, now: float) -> None:
        """Forget the counts of addresses with no rated game in the last day (memory stays bounded)."""
        for counts in (self._day, self._against):
            for key in [k for k, times in counts.items() if not _recent(times, now)]:
                del counts[key]
        for key in [k for k, changes in self._moves.items() if not _moved(changes, now)]:
            del self._moves[key]
