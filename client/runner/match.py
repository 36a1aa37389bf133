"""``plyhall match``: two bot levels play a series of local games, no server needed.

    plyhall match --game connect4 minimax-3 novice --games 20 --jobs 2

Level A and level B swap seats every game, so each moves first in half the
games (A first in games 1, 3, 5, ...). Every game gets its own seeds, drawn
from the match seed, so a match with the same seed plays the same games
whatever ``--jobs`` says. Levels that search deterministically would replay
the same two games; ``--opening-plies N`` starts each pair of games (one per
seating) from N random moves so the games differ. The summary counts wins, losses and draws for each
side and for the first and second player, and gives A's score
(wins + draws/2) / games with a 95% Wilson score interval
(:func:`protocol.statistics.wilson_interval`, the statistics tournaments use too).

``--sprt elo0=0,elo1=20`` stops the match as soon as fishtest's SPRT on the colour-swapped pairs of games
decides (:func:`protocol.statistics.sprt_pairs`, as tournaments' gauntlets); ``--games`` is then the most it
plays. Two fixed-depth ``minimax-N`` levels need ``--opening-plies`` for it.

``--time-per-move`` is handed to the bots as their :class:`~bots.TimeBudget`;
the fixed-depth baseline levels ignore it and play to full depth, so it never
decides a game here. Moves that took longer are counted in the summary.

:func:`play_match` is the library form, used by tests and benchmarks.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from protocol.statistics import SPRT_MODELS, SprtModel, SprtResult, SprtStatus, pentanomial, sprt_pairs, wilson_interval


@dataclass(frozen=True)
class MatchGame:
    """How one game of a match went.

    ``a_seat`` is level A's seat (seat 0 moves first); ``winner`` is ``"A"``,
    ``"B"`` or ``None`` for a draw. ``longest_think`` and ``over_time`` hold
    A's figure then B's: the longest time one move took, in seconds, and how
    many moves took longer than the time per move. ``moves`` is the whole
    game in notation, the first ``opening_plies`` of them random.
    """

    index: int
    a_seat: int
    winner: str | None
    reason: str
    plies: int
    longest_think: tuple[float, float]
    over_time: tuple[int, int]
    moves: tuple[str, ...] = ()
    opening_plies: int = 0

    @property
    def first_player(self) -> str:
        """``"A"`` or ``"B"``: who moved first in this game."""
        return "A" if self.a_seat == 0 else "B"


@dataclass(frozen=True)
class Tally:
    """Wins, losses and draws of one side over some games."""

    wins: int = 0
    losses: int = 0
    draws: int = 0

    @property
    def games(self) -> int:
        """Number of games counted."""
        return self.wins + self.losses + self.draws

    @property
    def score(self) -> float:
        """(wins + draws / 2) / games; 0 when no game was counted."""
        return (self.wins + self.draws / 2) / self.games if self.games else 0.0


@dataclass(frozen=True)
class MatchSprt:
    """The SPRT a match may stop on: H0 Elo = ``elo0`` against H1 Elo = ``elo1`` for A, on its colour-swapped
    pairs of games, in the ``normalized`` (default) or ``logistic`` Elo model."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: str = SprtModel.NORMALIZED.value

    HELP = "elo0=E,elo1=E[,alpha=P,beta=P,model=normalized|logistic], e.g. elo0=0,elo1=20"

    def __post_init__(self) -> None:
        if self.model not in (SprtModel.NORMALIZED, SprtModel.LOGISTIC):
            raise ValueError(f"the SPRT model of a match is normalized or logistic, not {self.model!r}")
        self.test((0, 0, 0, 0, 0))  # ValueError naming a bad bound, alpha or beta

    @classmethod
    def parse(cls, text: str) -> MatchSprt:
        """From ``elo0=0,elo1=20,alpha=0.05,beta=0.05,model=normalized`` (alpha, beta, model optional)."""
        values: dict[str, Any] = {}
        for item in text.split(","):
            key, equals, value = (part.strip() for part in item.partition("="))
            if not equals or key not in ("elo0", "elo1", "alpha", "beta", "model") or key in values:
                raise ValueError(f"--sprt {text!r}: use {cls.HELP}")
            try:
                values[key] = value if key == "model" else float(value)
            except ValueError:
                raise ValueError(f"--sprt: {key} must be a number, not {value!r}") from None
        if not {"elo0", "elo1"} <= set(values):
            raise ValueError(f"--sprt needs elo0 and elo1: {cls.HELP}")
        if values.get("model", SprtModel.NORMALIZED.value) not in SPRT_MODELS:
            raise ValueError(f"--sprt: model is normalized or logistic, not {values['model']!r}")
        return cls(**values)

    def test(self, counts: tuple[int, ...]) -> SprtResult:
        """The test on A's pentanomial ``counts`` (see :meth:`MatchResult.pair_counts`)."""
        return sprt_pairs(counts, elo0=self.elo0, elo1=self.elo1, alpha=self.alpha, beta=self.beta,
                          model=self.model)


class _Decided(Exception):
    """The match's SPRT has decided: no more games."""


@dataclass
class MatchResult:
    """The games of a match between level A and level B, and their totals."""

    game_id: str
    level_a: str
    level_b: str
    seed: int
    planned: int
    time_per_move: float | None = None
    opening_plies: int = 0
    records: list[MatchGame] = field(default_factory=list)
    sprt: SprtResult | None = None  # the SPRT's state after the last game, when the match has one

    def pair_counts(self) -> tuple[int, int, int, int, int]:
        """A's colour-swapped pairs (games 2k and 2k+1) as pentanomial counts (LL, LD, LW+DD, DW, WW), over the
        pairs in order up to the first one not complete: the same whatever order workers finish games in."""
        by_index = {record.index: record for record in self.records}
        points = []
        while (first := by_index.get(2 * len(points))) and (second := by_index.get(2 * len(points) + 1)):
            points.append(sum(1.0 if r.winner == "A" else 0.5 if r.winner is None else 0.0 for r in (first, second)))
        return pentanomial(points)

    def _tally(self, side: str, keep: Callable[[MatchGame], bool] = lambda record: True) -> Tally:
        wins = losses = draws = 0
        for record in self.records:
            if not keep(record):
                continue
            if record.winner is None:
                draws += 1
            elif record.winner == side:
                wins += 1
            else:
                losses += 1
        return Tally(wins, losses, draws)

    @property
    def a(self) -> Tally:
        """Level A's results over all games."""
        return self._tally("A")

    @property
    def b(self) -> Tally:
        """Level B's results over all games."""
        return self._tally("B")

    @property
    def a_first(self) -> Tally:
        """Level A's results in the games where A moved first."""
        return self._tally("A", lambda record: record.first_player == "A")

    @property
    def a_second(self) -> Tally:
        """Level A's results in the games where B moved first."""
        return self._tally("A", lambda record: record.first_player == "B")

    @property
    def first_player(self) -> Tally:
        """Results of whoever moved first, over all games."""
        wins = sum(1 for r in self.records if r.winner is not None and r.winner == r.first_player)
        draws = sum(1 for r in self.records if r.winner is None)
        return Tally(wins, len(self.records) - wins - draws, draws)

    @property
    def second_player(self) -> Tally:
        """Results of whoever moved second, over all games."""
        first = self.first_player
        return Tally(first.losses, first.wins, first.draws)

    @property
    def a_score(self) -> float:
        """A's score, (wins + draws / 2) / games."""
        return self.a.score

    def distinct_games(self) -> int:
        """How many of the games differ in at least one move.

        Bots that search deterministically play the same two games over and
        over; then the games are not independent trials and the interval
        overstates what the match shows. Random openings fix that.
        """
        return len({record.moves for record in self.records})

    def a_interval(self) -> tuple[float, float]:
        """The 95% Wilson score interval of A's score."""
        return wilson_interval(self.a.score, self.a.games)

    def table(self) -> str:
        """The summary a person reads at the end of ``plyhall match``."""
        rows = [
            (f"A  {self.level_a}", self.a),
            (f"B  {self.level_b}", self.b),
            ("A moving first", self.a_first),
            ("A moving second", self.a_second),
            ("first player", self.first_player),
            ("second player", self.second_player),
        ]
        width = max(len(name) for name, _ in rows) + 2
        lines = [
            f"{self.game_id}: A = {self.level_a}, B = {self.level_b}, "
            f"{len(self.records)} games, seed {self.seed}",
            "",
            f"{'':<{width}}{'games':>6}{'wins':>7}{'losses':>8}{'draws':>7}{'score':>8}",
        ]
        for name, tally in rows:
            lines.append(
                f"{name:<{width}}{tally.games:>6}{tally.wins:>7}{tally.losses:>8}{tally.draws:>7}"
                f"{tally.score:>8.3f}"
            )
        low, high = self.a_interval()
        lines += [
            "",
            f"A's score {self.a_score:.3f}, 95% interval {low:.3f} to {high:.3f} "
            "(Wilson score interval; a draw counts half a win)",
        ]
        if self.records:
            lines.append(f"distinct games: {self.distinct_games()} of {len(self.records)}")
            if self.opening_plies:
                lines[-1] += (
                    f" (each pair of games, one per seating, starts with the same {self.opening_plies} "
                    "random moves)"
                )
            longest = [max(r.longest_think[side] for r in self.records) for side in (0, 1)]
            lines.append(f"longest move: A {longest[0]:.2f} s, B {longest[1]:.2f} s")
        if self.time_per_move is not None:
            over = [sum(r.over_time[side] for r in self.records) for side in (0, 1)]
            lines.append(f"moves over {self.time_per_move:g} s: A {over[0]}, B {over[1]} (not forfeited)")
        if self.sprt is not None:
            lines.append(self.sprt.describe())
            if self.sprt.status is not SprtStatus.CONTINUE:
                lines.append(f"stopped after {len(self.records)} of at most {self.planned} games: "
                             f"{self.sprt.status.value} accepted")
        return "\n".join(lines)


class MatchError(RuntimeError):
    """A bot failed during a game (an exception or an illegal move): a bug in the bot."""


class MatchInterrupted(KeyboardInterrupt):
    """Ctrl-C during a match: ``result`` holds the games finished before it (in game order)."""

    def __init__(self, result: MatchResult) -> None:
        super().__init__(f"interrupted after {len(result.records)} of {result.planned} games")
        self.result = result


def game_seeds(seed: int, index: int) -> tuple[int, int]:
    """The seeds of A's and B's bots in game ``index`` (0-based) of a match with ``seed``."""
    rng = random.Random(f"plyhall-match-{seed}-{index}")
    return rng.randrange(2**32), rng.randrange(2**32)


def random_opening(game: Any, seed: int, index: int, plies: int) -> list[Any]:
    """The random first ``plies`` moves of game ``index``; games ``2k`` and ``2k+1`` share them.

    No opening move ends the game (unless every move would); it stops early if
    the game is over.
    """
    rng = random.Random(f"plyhall-opening-{seed}-{index // 2}")
    state = game.initial_state()
    moves: list[Any] = []
    for _ in range(plies):
        legal = game.legal_moves(state)
        if not legal:
            break
        going_on = [move for move in legal if game.outcome(game.apply(state, move)) is None]
        move = rng.choice(going_on or legal)
        moves.append(move)
        state = game.apply(state, move)
    return moves


def play_match_game(
    game_id: str,
    level_a: str,
    level_b: str,
    index: int,
    seed: int,
    time_per_move: float | None = None,
    opening_plies: int = 0,
) -> MatchGame:
    """Play game ``index`` of a match: A sits in seat ``index % 2``; returns its record.

    The first ``opening_plies`` moves are random (see :func:`random_opening`).
    A module-level function, so that worker processes can run it. Raises
    :class:`MatchError` when a bot fails or plays an illegal move.
    """
    from bots import TimeBudget, make_bot
    from protocol.games import GAMES, IllegalMove

    game = GAMES[game_id]
    a_seat = index % 2
    seed_a, seed_b = game_seeds(seed, index)
    sides = {
        a_seat: ("A", make_bot(game_id, level_a, seed_a)),
        1 - a_seat: ("B", make_bot(game_id, level_b, seed_b)),
    }
    for _, bot in sides.values():
        bot.new_game()
    budget = TimeBudget(per_move=time_per_move) if time_per_move is not None else None
    longest = {"A": 0.0, "B": 0.0}
    over = {"A": 0, "B": 0}
    state = game.initial_state()
    played: list[str] = []
    for move in random_opening(game, seed, index, opening_plies):
        state = game.apply(state, move)
        played.append(game.notation(move))
    while game.outcome(state) is None:
        side, bot = sides[game.to_move(state)]
        started = time.perf_counter()
        try:
            move = bot.choose(state, budget)
        except Exception as exc:
            raise MatchError(f"game {index + 1}: {side} ({bot.level}) failed: {exc!r}") from exc
        spent = time.perf_counter() - started
        longest[side] = max(longest[side], spent)
        if time_per_move is not None and spent > time_per_move:
            over[side] += 1
        try:
            state = game.apply(state, move)
        except IllegalMove as exc:
            raise MatchError(
                f"game {index + 1}: {side} ({bot.level}) played the illegal move {move!r}: {exc.reason}"
            ) from exc
        played.append(game.notation(move))
    outcome = game.outcome(state)
    assert outcome is not None
    winner = None if outcome.winner is None else sides[outcome.winner][0]
    return MatchGame(
        index=index,
        a_seat=a_seat,
        winner=winner,
        reason=outcome.reason,
        plies=len(played),
        longest_think=(longest["A"], longest["B"]),
        over_time=(over["A"], over["B"]),
        moves=tuple(played),
        opening_plies=opening_plies,
    )


def check_match_options(
    game_id: str,
    level_a: str,
    level_b: str,
    games: int,
    time_per_move: float | None,
    jobs: int,
    opening_plies: int = 0,
    seat: int | None = None,
    sprt: MatchSprt | None = None,
) -> tuple[str, str]:
    """Validate a match's options; returns the two level names in canonical form.

    Raises ``ValueError`` (``bots.BotConfigError`` for games and levels) with
    a message naming the accepted values.
    """
    from bots import check_game, parse_level

    check_game(game_id)
    names = []
    for level in (level_a, level_b):
        kind, depth = parse_level(level)
        names.append(kind if depth is None else f"{kind}-{depth}")
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ValueError(f"the number of games must be a whole number of at least 1, not {games!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"the number of jobs must be a whole number of at least 1, not {jobs!r}")
    if time_per_move is not None and not (isinstance(time_per_move, (int, float)) and time_per_move > 0):
        raise ValueError(f"the time per move must be a positive number of seconds, not {time_per_move!r}")
    if isinstance(opening_plies, bool) or not isinstance(opening_plies, int) or opening_plies < 0:
        raise ValueError(f"the random opening must be a whole number of moves, 0 or more, not {opening_plies!r}")
    if seat not in (None, 0, 1) or isinstance(seat, bool):
        raise ValueError(f"the seat must be 0 (first) or 1 (second), not {seat!r}")
    if sprt is not None:
        if seat is not None:
            raise ValueError("an SPRT tests colour-swapped pairs of games: it cannot go with one seat")
        if not opening_plies and all(name.startswith("minimax-") for name in names):
            raise ValueError(f"an SPRT of {names[0]} against {names[1]} needs --opening-plies N: fixed-depth levels "
                             "replay the same few games without random openings, and the test would measure those "
                             "games, not the levels")
    return names[0], names[1]


ProgressCallback = Callable[[int, int, "MatchResult"], None]


def play_match(
    game_id: str,
    level_a: str,
    level_b: str,
    games: int = 2,
    *,
    time_per_move: float | None = None,
    seed: int | None = None,
    jobs: int = 1,
    opening_plies: int = 0,
    progress: ProgressCallback | None = None,
    seat: int | None = None,
    in_workers: bool = False,
    say: Callable[[str], None] | None = None,
    sprt: MatchSprt | None = None,
) -> MatchResult:
    """Play ``games`` games between two levels, swapping seats every game.

    ``seed`` fixes every bot's random choices (``None``: a random seed, kept in
    the result so the match can be replayed). ``jobs`` > 1 plays games in that
    many worker processes; the games and the result are the same either way.
    ``opening_plies`` random moves start each pair of games (one per seating),
    so that deterministic bots do not replay the same two games.
    ``progress(done, total, result_so_far)`` is called after each game.
    ``seat`` (0 or 1) plays only the games with A in that seat: the same games
    as in a match of twice as many, A's other half left out.
    ``in_workers`` plays even one job in a worker process, so that Ctrl-C acts at once (a master engine
    compiling holds the process it runs in for up to a minute); ``say`` is told of that warm-up.
    ``sprt`` stops the match as soon as its test decides on the pairs played (``games`` is then the most it
    plays); its state is the result's ``sprt``.
    Raises ``ValueError`` for bad options, :class:`MatchError` when a bot fails and :class:`MatchInterrupted`,
    with the games finished so far, on Ctrl-C.
    """
    level_a, level_b = check_match_options(
        game_id, level_a, level_b, games, time_per_move, jobs, opening_plies, seat, sprt
    )
    if seed is None:
        seed = random.SystemRandom().randrange(2**31)
    result = MatchResult(game_id, level_a, level_b, seed, games, time_per_move, opening_plies)

    def finished(record: MatchGame) -> None:
        result.records.append(record)
        if progress is not None:
            progress(len(result.records), games, result)
        if sprt is not None:
            result.sprt = sprt.test(result.pair_counts())
            if result.sprt.status is not SprtStatus.CONTINUE:
                raise _Decided

    arguments = [
        (game_id, level_a, level_b, index, seed, time_per_move, opening_plies)
        for index in (range(games) if seat is None else range(seat, 2 * games, 2))
    ]
    masters = "master" in (level_a, level_b)
    try:
        if (jobs == 1 or games == 1) and not in_workers:
            for args in arguments:
                finished(play_match_game(*args))
        else:
            _play_in_workers(arguments, min(jobs, games), finished, game_id if masters else None, say)
    except _Decided:  # the workers are stopped: no more games
        pass
    except KeyboardInterrupt:
        result.records.sort(key=lambda record: record.index)
        raise MatchInterrupted(result) from None
    result.records.sort(key=lambda record: record.index)
    return result


def _ignore_interrupts() -> None:
    """A worker leaves Ctrl-C to the match, which stops it (a master engine compiling would not hear it)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _warm_up_master(game_id: str) -> None:
    """Build ``game_id``'s master engine once (numba compiles it into its cache the first time)."""
    from bots import make_bot

    make_bot(game_id, "master")


def _play_in_workers(arguments: list[tuple[Any, ...]], jobs: int, finished: Callable[[MatchGame], None],
                     warm: str | None, say: Callable[[str], None] | None) -> None:
    """Play the games in ``jobs`` worker processes, the master engine of game ``warm`` built first; the waits are
    short, so Ctrl-C reaches this process at once, and the workers are stopped whatever ends the match."""
    import multiprocessing

    pool = multiprocessing.Pool(jobs, initializer=_ignore_interrupts)
    try:
        if warm is not None:
            if say is not None:
                say(f"warming up the {warm} master engine…")
            started = time.perf_counter()
            warming = pool.apply_async(_warm_up_master, (warm,))
            _wait(lambda: warming.get(timeout=0.2))
            if say is not None:
                say(f"  ready in {time.perf_counter() - started:.1f} s")
        games = pool.imap_unordered(_play_match_game, arguments)
        for _ in arguments:
            finished(_wait(lambda: games.next(timeout=0.2)))
    finally:
        pool.terminate()
        pool.join()


def _play_match_game(arguments: tuple[Any, ...]) -> MatchGame:
    """:func:`play_match_game` of one tuple of arguments (what a pool's ``imap`` hands a worker)."""
    return play_match_game(*arguments)


def _wait(step: Callable[[], Any]) -> Any:
    """What ``step`` (a wait for a worker's answer, 0.2 s at most) returns, taken again until it answers: a wait
    without a timeout would defer Ctrl-C."""
    import multiprocessing

    while True:
        try:
            return step()
        except multiprocessing.TimeoutError:
            continue


class ProgressBar:
    """A plain-text progress line on a stream: ``[#####.....] 12/20  A 7.5 - B 4.5  3s``.

    On a terminal the line is redrawn in place; elsewhere (a log file, a pipe)
    it is written as a new line at every tenth of the way, to keep logs short.
    """

    def __init__(self, stream: TextIO, width: int = 30) -> None:
        self.stream = stream
        self.width = width
        self.started = time.monotonic()
        self.interactive = stream.isatty()
        self.last_tenth = -1

    def __call__(self, done: int, total: int, result: MatchResult) -> None:
        """Show that ``done`` of ``total`` games are over, with the running score."""
        filled = self.width * done // total
        a_points = result.a.wins + result.a.draws / 2
        line = (
            f"[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total}  "
            f"A {a_points:g} - B {done - a_points:g}  {time.monotonic() - self.started:.0f}s"
        )
        if self.interactive:
            self.stream.write("\r" + line + ("\n" if done == total else ""))
        else:
            tenth = 10 * done // total
            if tenth == self.last_tenth:
                return
            self.last_tenth = tenth
            self.stream.write(line + "\n")
        self.stream.flush()


def run(args: argparse.Namespace) -> int:
    """Carry out ``plyhall match``; prints the summary table on stdout."""
    progress = None if args.quiet else ProgressBar(sys.stderr)
    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    try:
        result = play_match(
            args.game,
            args.level_a,
            args.level_b,
            args.games,
            time_per_move=args.time_per_move,
            seed=args.seed,
            jobs=args.jobs,
            opening_plies=args.opening_plies,
            progress=progress,
            in_workers=True,
            say=None if args.quiet else say,
            sprt=args.sprt,
        )
    except MatchInterrupted as exc:
        if progress is not None and progress.interactive:
            sys.stderr.write("\n")  # off the progress line
        done = exc.result.records
        print(f"interrupted after {len(done)} of {args.games} games"
              + (": the results so far" if done else ""), file=sys.stderr, flush=True)
        if done:
            print(exc.result.table())
        return 130
    except MatchError as exc:
        print(f"plyhall match: a bot failed: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"plyhall match: error: {exc}", file=sys.stderr)
        return 2
    print(result.table())
    return 0
