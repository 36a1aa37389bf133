"""``plyhall bot``: connect one of our bots to a server as a player.

Without ``--room`` the bot seeks a game: the server pairs it with another bot seeking the same
game (on the same time control and series length), or keeps it waiting until one comes. With
``--ladder`` it plays rated games on the server's ladder for as long as it runs, paired by rating.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from typing import Any

from client import interrupt
from client.play_loop import describe_rating, own_count
from client.sdk import GameResult, Player, RunOptions, Turn, run_player
from protocol.games import GAMES

SECRET_VARIABLE = "PLYHALL_SECRET"
"""The environment variable ``plyhall bot`` reads its secret from when ``--secret`` is not given (a secret in the
environment stays out of ``ps``; the server hands its house bots their secret this way)."""


class BotPlayer(Player):
    """Adapts a level of ``bots`` to the SDK; the engine is built lazily inside the worker process."""

    def __init__(self, game_id: str, level: str, seed: int | None = None) -> None:
        from bots import check_game, parse_level

        check_game(game_id)  # validate now, in the parent, with a clear error,
        parse_level(level)  # without building (and compiling) the engine here
        self.game_id = game_id
        self.level = level
        self.seed = seed
        self._bot: Any = None
        self.warms_up = "the master engine" if parse_level(level)[0] == "master" else None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_bot": None}

    def warm_up(self) -> str | None:
        """Build the bot now: a master engine loads its compiled code (or compiles it, the first time)."""
        from bots import make_bot

        if self._bot is None:
            self._bot = make_bot(self.game_id, self.level, self.seed)
        return self.warms_up

    def choose(self, turn: Turn) -> Any:
        """Ask the bot, giving it the time left on its clock."""
        from bots import make_bot
        from bots.base import TimeBudget

        if self._bot is None:
            self._bot = make_bot(self.game_id, self.level, self.seed)
        budget = TimeBudget(remaining=turn.time_left, per_move=turn.per_move, increment=turn.increment)
        return self._bot.choose(turn.state, budget)


def run_bot(args: argparse.Namespace) -> int:
    """Run the bot until its games are done, printing what it waits for, results and a running score."""
    from client.engine import EngineError
    from client.sdk import CannotPlay, ServerError, ServerURLError, check_url

    problem = _game_problem(args.game)
    if problem is None and args.warm_up:
        return warm_up([args.game] if args.game else sorted(GAMES))
    problem = problem or _usage_problem(args)
    if problem is not None:
        print(f"plyhall bot: {problem}", file=sys.stderr)
        return 2

    def on_status(text: str) -> None:
        print(f"{args.name}: {text}", flush=True)

    try:
        check_url(args.url)
        player, think = make_player(args, on_status)
    except (KeyError, ValueError) as exc:
        print(f"plyhall bot: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    score = Scoreboard(args.name, args.games)

    room_options: dict[str, Any] = {}
    if args.per_move is not None:
        room_options["time_control"] = {"per_move": args.per_move}
    options = RunOptions(name=args.name, secret=args.secret, url=args.url, game=args.game, room=args.room,
                         tournament=args.tournament, ladder=args.ladder, games=args.games, series=args.series,
                         coords=args.coords, max_retries=args.retries,
                         room_options=room_options, on_result=score.on_result, on_status=on_status, think=think)
    try:
        interrupt.run(run_player(player, options))  # Ctrl-C between callbacks: no traceback
    except KeyboardInterrupt:
        print(f"stopped: {score} points", flush=True)
        return 130
    except (EngineError, ServerURLError, ConnectionError, CannotPlay, ServerError) as exc:
        # the engine does not start or breaks its protocol; no server, given up on, taken over; another game; a
        # refusal (a bad name, a wrong secret): the run ends, with the score of the games played so far
        if score.games:
            print(f"stopped: {score} points", flush=True)
        reason = f"the server refused: {exc.message}" if isinstance(exc, ServerError) else str(exc)
        print(f"plyhall bot: {reason}", file=sys.stderr)
        return 1
    print(f"done: {score} points", flush=True)
    return 0


def make_player(args: argparse.Namespace, say: Any) -> tuple[Player, str]:
    """The player the flags ask for, and where it thinks: one of our levels (in a worker process), an engine
    program or a Kaggle agent file (in a thread: each runs in a process of its own, that the player supervises)."""
    if args.engine is not None:
        from client.engine import EnginePlayer

        return EnginePlayer(args.engine, args.game, say=say, start_timeout=args.engine_start_timeout), "thread"
    if args.kaggle is not None:
        from client.kaggle import KaggleAgentPlayer

        return KaggleAgentPlayer(args.kaggle, args.agent), "thread"
    return BotPlayer(args.game, args.level or "random", args.seed), "process"


def game_id(text: str) -> str:
    """A game id as typed on a command line: any case (``Connect4``), as levels are."""
    return text.strip().lower()


def _game_problem(game: str | None) -> str | None:
    """One line for a game id that names no game (the whole usage would hide it), None for a good one or none."""
    if game is None or game in GAMES:
        return None
    return f"unknown game {game!r}; games: {', '.join(GAMES)}"


def _usage_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the command's flags (a required one missing, a count out of range), if anything."""
    missing = [flag for flag, value in (("--game", args.game), ("--name", args.name)) if value is None]
    if missing:
        return f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} required (or --warm-up alone)"
    chosen = [flag for flag, value in (("--level", args.level), ("--engine", args.engine),
                                       ("--kaggle", args.kaggle)) if value is not None]
    if len(chosen) > 1:
        return f"{' and '.join(chosen)} cannot go together: the bot plays with one of a level, an engine or an agent"
    if args.agent is not None and args.kaggle is None:
        return "--agent names the function of a --kaggle agent file: give --kaggle FILE too"
    if args.kaggle is not None and args.game != "connect4":
        return "a Kaggle ConnectX agent plays connect4: give --game connect4"
    if not 0 < args.engine_start_timeout < math.inf:  # (nan too: an engine that never said ready hung the bot)
        return "--engine-start-timeout must be a positive number of seconds"
    if args.tournament is not None and args.room is not None:
        return "--tournament cannot go with --room: the tournament seats its entrants in its own rooms"
    if args.ladder:
        clash = [flag for flag, value in (("--room", args.room), ("--tournament", args.tournament),
                                          ("--per-move", args.per_move)) if value is not None]
        if args.series != 1:
            clash.append("--series")
        if clash:
            return f"--ladder cannot go with {' or '.join(clash)}: the ladder pairs by game, one game a room, at its " \
                   "own time per move (the server's --ladder-time)"
    ranges = (("--games", args.games, 1, None, "at least 1"), ("--series", args.series, 1, 1000, "1 to 1000"),
              ("--retries", args.retries, 0, 100_000, "0 to 100000 reconnection attempts"))
    for flag, value, low, high, accepted in ranges:
        if value is not None and (value < low or (high is not None and value > high)):
            return f"{flag} must be {accepted}"
    return None


class Scoreboard:
    """The running score ``plyhall bot`` prints after each game: points out of the games counted, and the bot's own
    count of each game (of ``total``, when the bot stops after that many)."""

    def __init__(self, name: str = "bot", total: int | None = None) -> None:
        self.name = name
        self.total = total
        self.games = 0
        self.points = 0.0

    def __str__(self) -> str:
        return f"{self.points:g}/{self.games}"

    def on_result(self, result: GameResult) -> None:
        """Count a finished game and print it with the score so far (an aborted game is shown, not counted)."""
        opponent = result.players[1 - result.seat] if result.seat is not None else "?"
        if not result.played:  # a cancelled tournament, nobody back after a restart: no result to count
            print(f"game in {result.room} against {opponent} aborted ({result.reason}); not counted; "
                  f"score {self}", flush=True)
            return
        self.games += 1
        self.points += result.score
        outcome = {1.0: "won", 0.5: "drew", 0.0: "lost"}[result.score]
        rated = f"; rating {describe_rating(result.rating)}" if result.rating else ""
        number = f"game {result.game_no}" if result.game_no is not None else "a game"  # the room's number
        print(f"{number} in {result.room}: {outcome} against {opponent} ({result.reason}); "
              f"{own_count(self.name, self.games, self.total)}, score {self}{rated}", flush=True)


def warm_up(games: list[str]) -> int:
    """Build the master engine of each game once (numba compiles it into its cache on the first run), saying
    how long each took."""
    from bots import make_bot

    for game in games:
        print(f"warming up the {game} master engine…", flush=True)
        started = time.perf_counter()
        make_bot(game, "master")
        print(f"  ready in {time.perf_counter() - started:.1f} s", flush=True)
    return 0
