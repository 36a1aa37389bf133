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
        the rounds before (see :func:`.swiss.swiss_pairings`): by score, no pairing
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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .pairing import Pairing, ScheduleError
from .results import ScoredGame
from .swiss import swiss_rounds

__all__ = ["FORMATS", "Pairing", "Schedule", "ScheduleError", "ScheduledGame", "TournamentSpec", "make_schedule",
           "round_robin_pairings"]

FORMATS: dict[str, str] = {
    "round-robin": "everyone meets everyone once per cycle",
    "double-round-robin": "everyone meets everyone twice, the second time with colours reversed",
    "gauntlet": "the first entrant listed plays every other entrant",
    "swiss": "a given number of rounds, each paired by score",
}
"""Format name -> one-line description."""


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


def _entrant_names(entrants: Any) -> tuple[str, ...]:
    """The entrants as a tuple; ``ScheduleError`` unless they are at least 2 distinct non-empty names."""
    if isinstance(entrants, str) or not isinstance(entrants, Iterable):
        raise ScheduleError("entrants must be a list of names")
    entrants = tuple(entrants)
    for name in entrants:
        if not isinstance(name, str) or not name.strip():
            raise ScheduleError(f"an entrant's name must be a non-empty string, not {name!r}")
    doubles = sorted(name for name, count in Counter(entrants).items() if count > 1)
    if doubles:
        raise ScheduleError(f"entrants listed twice: {', '.join(doubles)}")
    if len(entrants) < 2:
        raise ScheduleError(f"a tournament needs at least 2 entrants, not {len(entrants)}")
    return entrants


def _positive_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ScheduleError(f"{what} must be a whole number >= 1, not {value!r}")
    return value


MAX_ENTRANTS = 256
"""The most entrants an event takes (a Swiss round of this many is paired in about a tenth of a second here)."""

MAX_GAMES = 10_000
"""The most games an event plays. The hall builds an event's schedule and shows it whole (`/api/tournaments/ID`):
10,000 games take about 20 ms to schedule and make an answer of about 2 MB."""


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
        object.__setattr__(self, "entrants", _entrant_names(self.entrants))
        _positive_int(self.games_per_pairing, "games per pairing")
        _positive_int(self.cycles, "cycles")
        if isinstance(self.openings, bool) or not isinstance(self.openings, int) or self.openings < 0:
            raise ScheduleError(f"openings must be the number of openings (>= 0), not {self.openings!r}")
        self._check_rounds()

    def check_size(self) -> None:
        """``ScheduleError`` for an event bigger than a server runs (:data:`MAX_ENTRANTS`, :data:`MAX_GAMES`): checked
        when an organiser defines one, not when a stored event is read back."""
        if len(self.entrants) > MAX_ENTRANTS:
            raise ScheduleError(f"a tournament takes at most {MAX_ENTRANTS} entrants, not {len(self.entrants)}")
        if self.total_games > MAX_GAMES:
            raise ScheduleError(f"a tournament plays at most {MAX_GAMES:,} games; this one would play "
                                f"{self.total_games:,} ({self._size()}): ask for fewer. A longer match between "
                                "house bot levels runs without a server: plyhall match")

    def _size(self) -> str:
        """The options that make up the number of games (for the error of an event too big)."""
        shape = f"rounds {self.rounds:,}" if self.format == "swiss" else f"cycles {self.cycles:,}"
        return f"{len(self.entrants)} entrants, {self.format}, {shape}, games per pairing {self.games_per_pairing:,}"

    def _check_rounds(self) -> None:
        """A swiss event has a possible number of rounds and no cycles; the other formats have no rounds."""
        if self.format != "swiss":
            if self.rounds is not None:
                rounds = self._rounds_per_cycle
                raise ScheduleError(f"rounds are for swiss events; a {self.format} has cycles (each cycle is "
                                    f"{rounds} round{'' if rounds == 1 else 's'})")
            return
        if self.rounds is None:
            raise ScheduleError("a swiss tournament needs its number of rounds")
        _positive_int(self.rounds, "rounds")
        most = self.max_swiss_rounds
        if self.rounds > most:
            raise ScheduleError(f"{len(self.entrants)} entrants can play at most {most} swiss rounds without "
                                f"meeting twice, not {self.rounds}; use a round robin for more")
        if self.cycles != 1:
            raise ScheduleError("cycles apply to round robins and gauntlets; a swiss event has rounds")

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

    def bye_results(self) -> list[ScoredGame]:
        """The results the byes score: N wins per Swiss bye; none for a round-robin rest.

        Add them to the played results given to ``compute_standings``; Swiss
        pairing counts byes from the pairings, with or without them.
        """
        if self.spec.format != "swiss":
            return []
        return [ScoredGame.bye(p.white, p.round) for p in self.byes for _ in range(self.spec.games_per_pairing)]

    def pending(self, results: Iterable[ScoredGame]) -> list[ScheduledGame]:
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


def make_schedule(spec: TournamentSpec, results: Iterable[ScoredGame] = (),
                  known: Sequence[Pairing] = ()) -> Schedule:
    """The schedule of ``spec`` given the results so far.

    Round robins and gauntlets ignore ``results`` (everything is known from the
    start). A Swiss event pairs round 1, then each following round as soon as
    the round before has all its results; ``ScheduleError`` when a result
    does not belong to the pairings. ``known``: the pairings of this event's
    schedule for fewer results, whose rounds are kept rather than paired again.
    """
    results = list(results)
    if spec.format == "swiss":
        pairings = swiss_rounds(spec.entrants, results, spec.total_rounds, spec.games_per_pairing, known)
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
