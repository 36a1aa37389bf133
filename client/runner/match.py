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

:func:`play_match` is the library form, used by tests and benchmarks; what a match's games add up to (the
summary, the SPRT) is :mod:`client.runner.match_result`.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from protocol.statistics import SprtStatus

from .match_result import MatchGame, MatchResult, MatchSprt

MAX_GAMES = 100_000
"""The most games a match plays (with ``--sprt``, the most it may play): each game's arguments are made at the start,
and ten million of them took 1.4 GB before the first game."""


class MatchError(RuntimeError):
    """A bot failed during a game (an exception or an illegal move): a bug in the bot."""


class MatchInterrupted(KeyboardInterrupt):
    """Ctrl-C during a match: ``result`` holds the games finished before it (in game order)."""

    def __init__(self, result: MatchResult) -> None:
        super().__init__(f"interrupted after {len(result.records)} of {result.planned} games")
        self.result = result


class _Decided(Exception):
    """The match's SPRT has decided: no more games."""


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
    if isinstance(games, bool) or not isinstance(games, int) or not 1 <= games <= MAX_GAMES:
        raise ValueError(f"the number of games must be a whole number from 1 to {MAX_GAMES:,}, not {games!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"the number of jobs must be a whole number of at least 1, not {jobs!r}")
    if time_per_move is not None and not (isinstance(time_per_move, (int, float)) and time_per_move > 0):
        raise ValueError(f"the time per move must be a positive number of seconds, not {time_per_move!r}")
    if isinstance(opening_plies, bool) or not isinstance(opening_plies, int) or opening_plies < 0:
        raise ValueError(f"the random opening must be a whole number of moves, 0 or more, not {opening_plies!r}")
    if opening_plies:
        _check_opening_leaves_play(game_id, opening_plies)
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


def _check_opening_leaves_play(game_id: str, plies: int) -> None:
    """``ValueError`` when ``plies`` random moves play a game to its end (tried on one opening): the bots would never
    move, and every game's result would be the opening's."""
    from protocol.games import GAMES

    game = GAMES[game_id]
    state = game.initial_state()
    moves = random_opening(game, 0, 0, plies)
    for move in moves:
        state = game.apply(state, move)
    if len(moves) < plies or game.outcome(state) is not None:
        raise ValueError(f"a random opening of {plies} moves plays a whole {game_id} game (one ended after "
                         f"{len(moves)}), and the bots would never move: use fewer opening moves")


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
