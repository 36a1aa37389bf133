"""Tournament formats, pairings and the schedule of games.

Vocabulary
    *entrant*: a bot (or person) in the event, by name. *pairing*: two
    entrants meeting in a round; it consists of ``games_per_pairing`` (N)
    *games*. *white* is seat 0 and *black* seat 1, whatever the game calls its
    sides. A *bye* is an entrant left without an opponent in a round.

Colour-swapped pairs
    The games of a pairing come in pairs that play the same opening once from
    each side: game 1 has the pairing's white in seat 0, game 2 swaps the
    seats, game 3 swaps back with the next opening, and so on; with an odd N
    the last game is a single one (the pairing's white in seat 0). This is
    cutechess-cli's ``-games 2 -repeat``.

Formats (``FORMATS``)
    ``round-robin``
        Everyone meets everyone once per *cycle* (cutechess-cli's ``-rounds``;
        default 1). Rounds follow the circle (Berger) method, so an entrant
        plays one pairing per round; with an odd number of entrants one
        entrant *rests* each round (a pairing with ``black=None`` that scores
        nothing). Pairing colours follow the Berger tables: over a cycle every
        entrant's whites and blacks differ by at most one and nobody has the
        same colour three times running. Each later cycle repeats the first
        with colours reversed.
    ``double-round-robin``
        ``round-robin`` with twice the cycles: each pair meets twice, the
        second time with colours reversed. With N = 1 that is the classical
        double round robin (one game with each colour); with the default N = 2
        each meeting is already a colour-swapped pair, so each pair plays four
        games.
    ``gauntlet``
        The first entrant listed plays every other entrant, one pairing per
        round, taking white in the pairing in alternate rounds.
    ``swiss``
        ``rounds`` rounds (required). Each round is paired from the results of
        the rounds before (see :func:`swiss_pairings`): by score, no pairing
        repeated, colours balanced, a bye for an odd count never twice to the
        same entrant. A bye scores a win (1 point) for each of the round's N
        game slots (:meth:`Schedule.bye_results`).

Entrants are listed in seed order, strongest first (sort them by rating to
seed by rating): the order decides the Berger numbers, the gauntlet's
challenger and the Swiss ranking among equal scores.

Openings
    With ``openings=K`` (the number of openings in the list), each
    colour-swapped pair of games (and each single odd game) takes the next
    opening index 0, 1, ..., K-1, 0, ... in schedule order (round, board,
    game), as cutechess-cli's sequential order. ``opening`` is ``None`` when
    ``K`` is 0.

Everything is deterministic: the same spec and results give the same schedule.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .results import GameResult

FORMATS: dict[str, str] = {
    "round-robin": "everyone meets everyone once per cycle",
    "double-round-robin": "everyone meets everyone twice, the second time with colours reversed",
    "gauntlet": "the first entrant listed plays every other entrant",
    "swiss": "a given number of rounds, each paired by score",
}
"""Format name -> one-line description."""


class ScheduleError(ValueError):
    """A tournament that cannot be scheduled as asked (bad spec, or results that do not fit)."""


@dataclass(frozen=True)
class Pairing:
    """Two entrants meeting in a round; ``white`` takes seat 0 in the pairing's first game.

    ``black`` is ``None`` when ``white`` has no opponent this round: a bye in a
    Swiss event (it scores, see :meth:`Schedule.bye_results`), a rest in a
    round robin (it does not). ``board`` numbers the pairings of a round from 1.
    """

    round: int
    board: int
    white: str
    black: str | None

    @property
    def is_bye(self) -> bool:
        """True when the entrant has no opponent this round."""
        return self.black is None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values."""
        return {"round": self.round, "board": self.board, "white": self.white, "black": self.black}


@dataclass(frozen=True)
class ScheduledGame:
    """One game to play: ``white`` in seat 0, ``black`` in seat 1, from opening ``opening`` (or none).

    ``number`` counts the event's games from 1 in schedule order; ``game`` is
    the game's place (from 1) in its pairing; games ``2k-1`` and ``2k`` of a
    pairing are a colour-swapped pair with the same opening.
    """

    number: int
    round: int
    board: int
    game: int
    white: str
    black: str
    opening: int | None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values."""
        return {"number": self.number, "round": self.round, "board": self.board, "game": self.game,
                "white": self.white, "black": self.black, "opening": self.opening}


def _positive_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ScheduleError(f"{what} must be a whole number >= 1, not {value!r}")
    return value


@dataclass(frozen=True)
class TournamentSpec:
    """What kind of event to run: format, entrants (seed order) and options.

    ``games_per_pairing`` is N above (default 2, a colour-swapped pair).
    ``cycles`` repeats a round robin or gauntlet (cutechess-cli ``-rounds``);
    ``rounds`` is the number of Swiss rounds; ``openings`` the number of
    openings to cycle through (0: none). Invalid values raise
    ``ScheduleError`` naming what is accepted.
    """

    format: str
    entrants: tuple[str, ...]
    games_per_pairing: int = 2
    cycles: int = 1
    rounds: int | None = None
    openings: int = 0

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ScheduleError(f"unknown tournament format {self.format!r}; formats: {', '.join(FORMATS)}")
        if isinstance(self.entrants, str) or not isinstance(self.entrants, Iterable):
            raise ScheduleError("entrants must be a list of names")
        entrants = tuple(self.entrants)
        object.__setattr__(self, "entrants", entrants)
        for name in entrants:
            if not isinstance(name, str) or not name.strip():
                raise ScheduleError(f"an entrant's name must be a non-empty string, not {name!r}")
        doubles = sorted(name for name, count in Counter(entrants).items() if count > 1)
        if doubles:
            raise ScheduleError(f"entrants listed twice: {', '.join(doubles)}")
        if len(entrants) < 2:
            raise ScheduleError(f"a tournament needs at least 2 entrants, not {len(entrants)}")
        _positive_int(self.games_per_pairing, "games per pairing")
        _positive_int(self.cycles, "cycles")
        if isinstance(self.openings, bool) or not isinstance(self.openings, int) or self.openings < 0:
            raise ScheduleError(f"openings must be the number of openings (>= 0), not {self.openings!r}")
        if self.format == "swiss":
            if self.rounds is None:
                raise ScheduleError("a swiss tournament needs its number of rounds")
            _positive_int(self.rounds, "rounds")
            most = self.max_swiss_rounds
            if self.rounds > most:
                raise ScheduleError(f"{len(entrants)} entrants can play at most {most} swiss rounds without "
                                    f"meeting twice, not {self.rounds}; use a round robin for more")
            if self.cycles != 1:
                raise ScheduleError("cycles apply to round robins and gauntlets; a swiss event has rounds")
        elif self.rounds is not None:
            raise ScheduleError(f"rounds are for swiss events; a {self.format} has cycles (each cycle is "
                                f"{self._rounds_per_cycle} rounds)")

    @property
    def max_swiss_rounds(self) -> int:
        """The most Swiss rounds this many entrants can play without a repeat pairing (n-1, or n when odd)."""
        n = len(self.entrants)
        return n if n % 2 else n - 1

    @property
    def _rounds_per_cycle(self) -> int:
        n = len(self.entrants)
        if self.format == "gauntlet":
            return n - 1
        return n if n % 2 else n - 1

    @property
    def total_cycles(self) -> int:
        """Cycles played: ``cycles``, doubled for a double round robin (1 for swiss)."""
        return 2 * self.cycles if self.format == "double-round-robin" else self.cycles

    @property
    def total_rounds(self) -> int:
        """The number of rounds the event will have."""
        if self.format == "swiss":
            return int(self.rounds or 0)
        return self._rounds_per_cycle * self.total_cycles

    @property
    def total_games(self) -> int:
        """The number of games the event will play (byes and rests are not games)."""
        n = len(self.entrants)
        if self.format == "swiss":
            pairings = (n // 2) * self.total_rounds
        elif self.format == "gauntlet":
            pairings = (n - 1) * self.total_cycles
        else:
            pairings = n * (n - 1) // 2 * self.total_cycles
        return pairings * self.games_per_pairing

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values; ``from_json`` reads them back."""
        return {"format": self.format, "entrants": list(self.entrants), "games_per_pairing": self.games_per_pairing,
                "cycles": self.cycles, "rounds": self.rounds, "openings": self.openings}

    @classmethod
    def from_json(cls, obj: Any) -> TournamentSpec:
        """A spec from ``to_json``'s form; ``ScheduleError`` naming what is wrong."""
        if not isinstance(obj, dict) or "format" not in obj or "entrants" not in obj:
            raise ScheduleError("a tournament spec is an object with format and entrants")
        known = {"format", "entrants", "games_per_pairing", "cycles", "rounds", "openings"}
        unknown = set(obj) - known
        if unknown:
            raise ScheduleError(f"unknown tournament option(s): {', '.join(sorted(unknown))}; "
                                f"options: {', '.join(sorted(known))}")
        return cls(**obj)


@dataclass(frozen=True)
class Schedule:
    """The games known so far and the size of the whole event.

    For a round robin or a gauntlet every round is known at once; for a Swiss
    event, the rounds paired so far (``rounds_paired``): round r+1 appears once
    every game of round r has a result.
    """

    spec: TournamentSpec
    pairings: tuple[Pairing, ...]
    games: tuple[ScheduledGame, ...]
    rounds_paired: int
    complete: bool = field(default=False)

    @property
    def total_rounds(self) -> int:
        """Rounds in the whole event."""
        return self.spec.total_rounds

    @property
    def total_games(self) -> int:
        """Games in the whole event, including those of rounds not paired yet."""
        return self.spec.total_games

    @property
    def byes(self) -> tuple[Pairing, ...]:
        """The pairings without an opponent (Swiss byes, round-robin rests)."""
        return tuple(p for p in self.pairings if p.is_bye)

    def round_games(self, round_no: int) -> list[ScheduledGame]:
        """The games of one round, in board order."""
        return [g for g in self.games if g.round == round_no]

    def bye_results(self) -> list[GameResult]:
        """The results the byes score: N wins per Swiss bye; none for a round-robin rest.

        Add them to the played results given to ``compute_standings``; Swiss
        pairing counts byes from the pairings, with or without them.
        """
        if self.spec.format != "swiss":
            return []
        return [GameResult.bye(p.white, p.round) for p in self.byes for _ in range(self.spec.games_per_pairing)]

    def pending(self, results: Iterable[GameResult]) -> list[ScheduledGame]:
        """The scheduled games that have no result yet, in schedule order.

        A result matches a scheduled game with the same white, black and (when
        the result has one) round; ``ScheduleError`` for a result that matches
        no game.
        """
        open_games = list(self.games)
        for result in results:
            if result.is_bye:
                continue
            for k, game in enumerate(open_games):
                if (game.white, game.black) == (result.white, result.black) and result.round in (None, game.round):
                    del open_games[k]
                    break
            else:
                where = f" in round {result.round}" if result.round is not None else ""
                raise ScheduleError(f"the result {result.white} - {result.black}{where} matches no scheduled game "
                                    "(or that game already has a result)")
        return open_games

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values: the spec, pairings, games and totals."""
        return {"spec": self.spec.to_json(), "rounds_paired": self.rounds_paired, "total_rounds": self.total_rounds,
                "total_games": self.total_games, "complete": self.complete,
                "pairings": [p.to_json() for p in self.pairings], "games": [g.to_json() for g in self.games]}


# ---------------------------------------------------------------------------
# Building the schedule


def make_schedule(spec: TournamentSpec, results: Iterable[GameResult] = ()) -> Schedule:
    """The schedule of ``spec`` given the results so far.

    Round robins and gauntlets ignore ``results`` (everything is known from the
    start). A Swiss event pairs round 1, then each following round as soon as
    the round before has all its results; ``ScheduleError`` when a result
    does not belong to the pairings.
    """
    results = list(results)
    if spec.format == "swiss":
        pairings: list[Pairing] = []
        for round_no in range(1, spec.total_rounds + 1):
            if round_no > 1 and _missing_results(pairings, results, round_no - 1, spec.games_per_pairing):
                break
            pairings.extend(swiss_pairings(spec.entrants, results, round_no, games_per_pairing=spec.games_per_pairing,
                                           previous=pairings, rounds=spec.total_rounds))
        rounds_paired = max((p.round for p in pairings), default=0)
    elif spec.format == "gauntlet":
        pairings = _gauntlet_pairings(spec.entrants, spec.total_cycles)
        rounds_paired = spec.total_rounds
    else:
        pairings = round_robin_pairings(spec.entrants, spec.total_cycles)
        rounds_paired = spec.total_rounds
    games = _games(pairings, spec.games_per_pairing, spec.openings, opening_start=0)
    return Schedule(spec, tuple(pairings), tuple(games), rounds_paired,
                    complete=rounds_paired == spec.total_rounds)


def _games(pairings: Sequence[Pairing], per_pairing: int, openings: int, opening_start: int) -> list[ScheduledGame]:
    """Expand pairings into games: colour-swapped pairs first, each pair (or odd game) the next opening."""
    games = []
    slot = opening_start
    for pairing in pairings:
        if pairing.black is None:
            continue
        for k in range(per_pairing):
            if k % 2 == 0:
                opening = slot % openings if openings else None
                slot += 1
                white, black = pairing.white, pairing.black
            else:
                white, black = pairing.black, pairing.white
            games.append(ScheduledGame(len(games) + 1, pairing.round, pairing.board, k + 1, white, black, opening))
    return games


def round_robin_pairings(entrants: Sequence[str], cycles: int = 1) -> list[Pairing]:
    """Every pairing of a round robin of ``cycles`` cycles, round by round (the circle / Berger method).

    Entrant k (0-based, seed order) is Berger number k+1; with an odd count a
    phantom entrant makes the count even and whoever meets it rests
    (``black=None``, listed after the round's games). In round r (0-based) of
    a cycle of n-1 rounds the last entrant meets entrant r, and entrant
    (r+i) mod (n-1) meets (r-i) mod (n-1) for i = 1 .. n/2-1 (the circle
    method behind the Berger tables the FIDE Handbook gives for round robins). Colours: the last
    entrant is black in even rounds and white in odd ones; in the other
    pairings (r+i) takes white when i is odd, (r-i) when i is even, which keeps
    every entrant's colours within one of each other over a cycle with no
    colour three times running (checked by the tests for up to 20 entrants).
    Odd cycles reverse every pairing's colours.
    """
    players: list[str | None] = list(entrants)
    if len(players) % 2:
        players.append(None)
    n = len(players)
    pairings: list[Pairing] = []
    for cycle in range(cycles):
        for r in range(n - 1):
            round_no = cycle * (n - 1) + r + 1
            pairs: list[tuple[int, int]] = [(n - 1, r) if r % 2 == 0 else (r, n - 1)]
            for i in range(1, n // 2):
                up, down = (r + i) % (n - 1), (r - i) % (n - 1)
                pairs.append((up, down) if i % 2 else (down, up))
            games, rests = [], []
            for w, b in pairs:
                white, black = players[w], players[b]
                if white is None or black is None:
                    rests.append(black if white is None else white)
                    continue
                games.append((black, white) if cycle % 2 else (white, black))
            for board, (white, black) in enumerate(games, start=1):
                pairings.append(Pairing(round_no, board, white, black))
            for rester in rests:
                pairings.append(Pairing(round_no, len(games) + 1, str(rester), None))
    return pairings


def _gauntlet_pairings(entrants: Sequence[str], cycles: int) -> list[Pairing]:
    """The challenger (first entrant) against each other entrant in turn, white in alternate rounds.

    Odd cycles reverse the colours, so over two cycles the challenger takes each colour once against everyone.
    """
    challenger, opponents = entrants[0], list(entrants[1:])
    pairings = []
    for cycle in range(cycles):
        for k, opponent in enumerate(opponents):
            round_no = cycle * len(opponents) + k + 1
            white_first = (k % 2 == 0) != (cycle % 2 == 1)
            white, black = (challenger, opponent) if white_first else (opponent, challenger)
            pairings.append(Pairing(round_no, 1, white, black))
    return pairings


# ---------------------------------------------------------------------------
# Swiss


@dataclass
class _Record:
    """What Swiss pairing knows of an entrant: score, opponents met, pairing colours, byes."""

    seed: int
    score: float = 0.0
    opponents: Counter[str] = field(default_factory=Counter)
    colours: str = ""  # one letter per paired round: "W" or "B"
    byes: int = 0

    @property
    def balance(self) -> int:
        """Whites minus blacks (pairing colours)."""
        return self.colours.count("W") - self.colours.count("B")

    @property
    def colour_wish(self) -> int:
        """+1 wants white, -1 wants black, 0 either: the colour that evens the balance, else the alternate one."""
        if self.balance:
            return -1 if self.balance > 0 else 1
        return {"W": -1, "B": 1}.get(self.colours[-1:], 0)


_SEARCH_BUDGET = 20_000
"""Pairing search steps per attempt before a stricter level is given up."""

_LOOK_AHEAD_BUDGET = 50_000
"""Look-ahead steps per pairing attempt (all its checks together) before the attempt is given up."""


class _OutOfBudget(Exception):
    pass


def _missing_results(pairings: Sequence[Pairing], results: Sequence[GameResult], round_no: int,
                     per_pairing: int) -> list[str]:
    """The pairings of ``round_no`` still short of results (``"alice - bob"``, one per missing game)."""
    done: Counter[frozenset[str]] = Counter(
        frozenset((r.white, r.black)) for r in results if r.round == round_no and not r.is_bye
    )
    missing = []
    for p in pairings:
        if p.round == round_no and p.black is not None:
            missing += [f"{p.white} - {p.black}"] * max(0, per_pairing - done[frozenset((p.white, p.black))])
    return missing


def swiss_pairings(entrants: Sequence[str], results: Iterable[GameResult], round_no: int, *,
                   games_per_pairing: int = 2, previous: Sequence[Pairing] | None = None,
                   rounds: int | None = None) -> list[Pairing]:
    """The pairings of Swiss round ``round_no`` (from 1), given every result of the rounds before.

    ``previous`` are the pairings of rounds 1 .. round_no-1 as they were made;
    without it they are paired again from ``results`` (the same inputs give
    the same pairings). Each earlier round must have all its
    ``games_per_pairing`` results per pairing (``GameResult.round`` set),
    else ``ScheduleError`` lists the missing games.

    The method is a simplified Dutch system (FIDE Handbook C.04.3), searched
    with backtracking:

    * entrants are ranked by score, then seed (their order in ``entrants``);
      a previous bye counts N points whether or not its results are passed;
    * with an odd count the bye goes to the lowest-ranked entrant who has not
      had one (never twice to the same entrant) and leaves a pairable field;
    * the highest-ranked unpaired entrant is paired first, preferring the
      opponent half a score group below it (1-5, 2-6, 3-7, 4-8 in a group of
      eight), then the rest of its score group, then the highest-ranked of
      the groups below (floating down); no two entrants meet twice;
    * the pairing's white is the entrant with fewer whites than blacks, else
      the one who had black last time, else the higher-ranked entrant's
      alternate colour (in round 1 the higher seed has white on odd boards);
      no colour difference beyond 2 and no colour three times running.

    With ``rounds`` (the event's number of rounds) the search also looks
    ahead: it avoids a pairing after which the next round could not keep the
    colour rules, or the remaining rounds could not be paired without a
    repeat (a danger only with more rounds than half the field); see
    ``_completable``.

    When no pairing meets every rule, the look-ahead is dropped first, then
    the colour rules, and only if no pairing without a repeat exists at all
    the fewest repeats are allowed. In practice (a trial of about 2,700 random
    events of 5 to 12 entrants at every round count) no pairing repeats up to
    the most rounds the spec allows, and the colour rules hold whenever fewer rounds
    are played; with every possible round played the last rounds are forced
    (each entrant meets the only ones left) and colours may have to give way.
    Byes come last in the list, on the last board.
    """
    if isinstance(round_no, bool) or not isinstance(round_no, int) or round_no < 1:
        raise ScheduleError(f"round numbers start at 1, not {round_no!r}")
    entrants = list(entrants)
    if len(set(entrants)) != len(entrants) or len(entrants) < 2:
        raise ScheduleError("a swiss round needs at least 2 entrants, each listed once")
    if rounds is not None and (isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < round_no):
        raise ScheduleError(f"rounds is the event's number of rounds (at least {round_no}), not {rounds!r}")
    results = list(results)
    if previous is None:
        previous = []
        for earlier in range(1, round_no):
            previous += swiss_pairings(entrants, results, earlier, games_per_pairing=games_per_pairing,
                                       previous=previous, rounds=rounds)
    previous = [p for p in previous if p.round < round_no]
    rounds_before = {p.round for p in previous}
    if rounds_before != set(range(1, round_no)):
        raise ScheduleError(f"round {round_no} needs the pairings of every round before it")
    records = _swiss_records(entrants, results, previous, round_no, games_per_pairing)

    ranked = sorted(entrants, key=lambda name: (-records[name].score, records[name].seed))
    rounds_after = 0 if rounds is None else rounds - round_no
    vertices = len(entrants) + len(entrants) % 2  # an odd field gets a phantom entrant: meeting it is the bye
    # look-ahead: (colour rules kept, rounds checked ahead, next round's colours checked too)
    deep = rounds_after if rounds is not None and rounds > vertices // 2 else 0
    levels: list[tuple[bool | None, int, bool]] = []
    if rounds_after:
        levels.append((True, max(deep, 1), True))
    if deep:
        levels.append((False, deep, False))
    levels += [(True, 0, False), (False, 0, False), (None, 0, False)]
    for strict, ahead, colour_ahead in levels:
        budget = [_LOOK_AHEAD_BUDGET]
        for bye in _bye_candidates(ranked, records):
            field_ = [name for name in ranked if name != bye]

            def accept(pairs: list[tuple[str, str]], bye: str | None = bye, ahead: int = ahead,
                       colour_ahead: bool = colour_ahead, budget: list[int] = budget) -> bool:
                return _completable(entrants, records, pairs, bye, ahead, colour_ahead, budget)

            try:
                pairs = _pair_field(field_, records, strict, accept if ahead else None)
            except _OutOfBudget:
                pairs = None
            if pairs is not None:
                pairings = [Pairing(round_no, board, w, b) for board, (w, b) in enumerate(pairs, start=1)]
                if bye is not None:
                    pairings.append(Pairing(round_no, len(pairs) + 1, bye, None))
                return pairings
    raise AssertionError("unreachable: repeats allowed always pair")  # pragma: no cover


def _swiss_records(entrants: Sequence[str], results: Sequence[GameResult], previous: Sequence[Pairing],
                   round_no: int, per_pairing: int) -> dict[str, _Record]:
    """Scores, opponents, colours and byes before ``round_no``; checks the results against the pairings."""
    records = {name: _Record(seed) for seed, name in enumerate(entrants)}
    expected: Counter[tuple[int, frozenset[str]]] = Counter()
    for p in sorted(previous, key=lambda p: (p.round, p.board)):
        for name in (p.white, p.black):
            if name is not None and name not in records:
                raise ScheduleError(f"{name!r} was paired in round {p.round} but is not an entrant")
        if p.black is None:
            records[p.white].byes += 1
            records[p.white].score += per_pairing
            continue
        expected[(p.round, frozenset((p.white, p.black)))] += per_pairing
        records[p.white].opponents[p.black] += 1
        records[p.black].opponents[p.white] += 1
        records[p.white].colours += "W"
        records[p.black].colours += "B"
    counted: Counter[tuple[int, frozenset[str]]] = Counter()
    for r in results:
        if r.is_bye or r.round is None or r.round >= round_no:
            continue
        key = (r.round, frozenset((r.white, r.black)))
        counted[key] += 1
        if counted[key] > expected[key]:
            raise ScheduleError(f"the result {r.white} - {r.black} in round {r.round} does not belong to that "
                                "round's pairings (or there are more results than games)")
        records[r.white].score += r.score(r.white)
        records[r.black].score += r.score(r.black)
    missing = [f"{' - '.join(sorted(key[1]))} (round {key[0]})"
               for key, count in sorted(expected.items(), key=lambda kv: (kv[0][0], sorted(kv[0][1])))
               if counted[key] < count]
    if missing:
        raise ScheduleError(f"round {round_no} cannot be paired before every game of the rounds before it has a "
                            f"result; missing: {', '.join(missing)}")
    return records


def _bye_candidates(ranked: Sequence[str], records: dict[str, _Record]) -> list[str | None]:
    """Who may get the bye, lowest-ranked first: those with the fewest byes so far (none, if possible)."""
    if len(ranked) % 2 == 0:
        return [None]
    fewest = min(records[name].byes for name in ranked)
    return [name for name in reversed(ranked) if records[name].byes == fewest]


def _pair_field(ranked: list[str], records: dict[str, _Record], strict: bool | None,
                accept: Callable[[list[tuple[str, str]]], bool] | None) -> list[tuple[str, str]] | None:
    """Pair an even, ranked field by backtracking; ``None`` when no pairing meets the rules.

    ``strict``: True keeps the colour rules, False drops them (no repeat
    either way), None allows repeats (fewest first). ``accept`` may refuse a
    complete pairing (the look-ahead).
    """
    steps = 0

    def search(remaining: list[str], chosen: list[tuple[str, str]]) -> list[tuple[str, str]] | None:
        nonlocal steps
        if not remaining:
            return chosen if accept is None or accept(chosen) else None
        steps += 1
        if steps > _SEARCH_BUDGET:
            raise _OutOfBudget
        top, rest = remaining[0], remaining[1:]
        for other in _opponent_order(top, rest, records, repeats=strict is None):
            colours = _colours(top, other, records, board=len(chosen), strict=bool(strict))
            if colours is None:
                continue
            found = search([name for name in rest if name != other], [*chosen, colours])
            if found is not None:
                return found
        return None

    return search(ranked, [])


def _completable(entrants: Sequence[str], records: dict[str, _Record], pairs: list[tuple[str, str]],
                 bye: str | None, rounds_after: int, colours: bool, budget: list[int]) -> bool:
    """Whether ``rounds_after`` more rounds can follow this one with no repeat pairing and no second bye.

    Each round is a perfect matching of the graph of pairings not yet played
    (an odd field gets a phantom vertex whose edges are the byes), so this
    searches for that many disjoint matchings; with ``colours`` the next
    round's pairings must also be able to keep the colour rules. The search
    spends ``budget[0]`` steps, shared by all the checks of one pairing
    attempt; when it runs out the attempt is given up (``_OutOfBudget``).
    """
    phantom = ""  # not a valid entrant name, so it cannot clash
    vertices = list(entrants) + ([phantom] if len(entrants) % 2 else [])
    played = {frozenset(p) for p in pairs}
    if bye is not None:
        played.add(frozenset((bye, phantom)))
    for name in entrants:
        played.update(frozenset((name, other)) for other in records[name].opponents)
        if records[name].byes:
            played.add(frozenset((name, phantom)))
    free = {v: {w for w in vertices if w != v and frozenset((v, w)) not in played} for v in vertices}
    history = {name: records[name].colours for name in entrants}
    for white, black in pairs:
        history[white] += "W"
        history[black] += "B"

    def colour_ok(v: str, w: str) -> bool:
        if phantom in (v, w):
            return True
        return any(_colours_allowed(history[x], history[y]) for x, y in ((v, w), (w, v)))

    def matchings(left: int, free: dict[str, set[str]], check_colours: bool) -> bool:
        if left == 0:
            return True

        def match(unmatched: set[str], taken: list[frozenset[str]]) -> bool:
            budget[0] -= 1
            if budget[0] < 0:
                raise _OutOfBudget
            if not unmatched:
                rest = {v: ws - {w for pair in taken if v in pair for w in pair} for v, ws in free.items()}
                return matchings(left - 1, rest, False)
            vertex = min(unmatched, key=lambda v: (len(free[v] & unmatched), v))
            for other in sorted(free[vertex] & unmatched):
                if check_colours and not colour_ok(vertex, other):
                    continue
                if match(unmatched - {vertex, other}, [*taken, frozenset((vertex, other))]):
                    return True
            return False

        return match(set(vertices), [])

    return matchings(rounds_after, free, colours)


def _colours_allowed(white: str, black: str) -> bool:
    """Whether entrants with these colour histories may take white and black next: no difference beyond 2,
    no colour three times running."""
    balance_white = white.count("W") - white.count("B")
    balance_black = black.count("W") - black.count("B")
    return not (balance_white >= 2 or balance_black <= -2 or white.endswith("WW") or black.endswith("BB"))


def _opponent_order(top: str, rest: list[str], records: dict[str, _Record], repeats: bool) -> list[str]:
    """``top``'s candidate opponents, best first: half its score group down, the group, then lower groups."""
    score = records[top].score
    # top heads its score group G = [top, *same]; the Dutch ideal is G[len(G) // 2], then down the group's
    # lower half, then back up its upper half, then the groups below in rank order
    same = [name for name in rest if records[name].score == score]
    half = (len(same) + 1) // 2
    upper, lower = same[: max(half - 1, 0)], same[max(half - 1, 0):]
    # within the group, an opponent wanting the other colour comes first (the Dutch system's exchanges in S2)
    wish = records[top].colour_wish
    group = sorted(lower + upper[::-1], key=lambda name: wish != 0 and records[name].colour_wish == wish)
    order = group + [name for name in rest if records[name].score != score]
    if not repeats:
        return [name for name in order if records[top].opponents[name] == 0]
    return sorted(order, key=lambda name: records[top].opponents[name])  # stable: keeps the preference order


def _colours(a: str, b: str, records: dict[str, _Record], board: int, strict: bool) -> tuple[str, str] | None:
    """(white, black) for ``a`` (ranked higher) and ``b``; ``None`` if ``strict`` and both ways break a rule."""
    ra, rb = records[a], records[b]
    if ra.balance != rb.balance:
        white_first = ra.balance < rb.balance
    elif ra.colours[-1:] != rb.colours[-1:]:
        white_first = ra.colours[-1:] == "B" or rb.colours[-1:] == "W"
    elif ra.colours:
        white_first = ra.colours[-1] == "B"  # the higher-ranked entrant gets its alternate colour
    else:
        white_first = board % 2 == 0
    options = [(a, b), (b, a)] if white_first else [(b, a), (a, b)]
    if not strict:
        return options[0]
    for white, black in options:
        if _colours_allowed(records[white].colours, records[black].colours):
            return white, black
    return None
