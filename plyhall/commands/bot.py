"""``plyhall bot``: connect one of our bots (or an engine program, or a Kaggle agent file) to a server as a player;
the run is :func:`client.runner.bot.run_bot`."""

from __future__ import annotations

import argparse
import os
from typing import Any

from bots import LEVELS_HELP
from client.engine import START_TIMEOUT
from client.runner.bot import SECRET_VARIABLE, game_id, run_bot
from client.sdk import DEFAULT_URL
from protocol.games import GAMES, OptionError
from server.core.clock import TimeControl


def per_move(text: str) -> float:
    """``--per-move``: seconds a server takes for a room's clock (its own check, said with the flag, not the wire's
    field ``time_control.per_move``)."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"give a number of seconds, not {text!r}") from None
    try:
        TimeControl.parse({"per_move": seconds})
    except OptionError as exc:
        raise argparse.ArgumentTypeError(f"{str(exc).removeprefix('time_control.per_move ')}, not {text}") from None
    return seconds


def register(subparsers: Any) -> None:
    """Add the ``bot`` subcommand."""
    parser = subparsers.add_parser(
        "bot", help="connect one of our bots to a server",
        description="Connect one of Plyhall's bots as a player. Without --room it asks the server for an opponent "
                    "(a seek): two bots seeking the same game are paired at once, whatever order they start in. "
                    "With --room it joins that room, creating it if needed.")
    parser.add_argument("--game", type=game_id, metavar="GAME",
                        help=f"game to play: {', '.join(GAMES)} (required, but for --warm-up)")
    parser.add_argument("--level", help=f"bot level: {LEVELS_HELP} (default random)")
    parser.add_argument("--engine", metavar="CMD",
                        help="play with your own engine program, in any language, speaking the stdio engine protocol "
                             "(docs/ENGINE-PROTOCOL.md), e.g. --engine ./my-engine or --engine 'java -cp out Greedy'; "
                             "the program is started once and warmed up before the bot logs in")
    parser.add_argument("--engine-start-timeout", type=float, default=START_TIMEOUT, metavar="SECONDS",
                        help=f"seconds the engine has to say 'ready' after it starts (default {START_TIMEOUT:g})")
    parser.add_argument("--kaggle", metavar="FILE",
                        help="play connect4 with a Kaggle ConnectX agent file as it is (the last function it defines, "
                             "called with observation and configuration as on Kaggle)")
    parser.add_argument("--agent", metavar="NAME", help="with --kaggle: the agent function to call (default: the last "
                                                        "callable the file defines, as Kaggle picks it)")
    parser.add_argument("--name", help="player name (letters, digits, _ . -; required, but for --warm-up)")
    parser.add_argument("--secret", default=os.environ.get(SECRET_VARIABLE),
                        help="secret that claims the name (recommended: a restarted bot resumes; default "
                             f"${SECRET_VARIABLE}, which keeps it out of the process list)")
    parser.add_argument("--room", help="room to join (created if it does not exist) instead of seeking a game")
    parser.add_argument("--tournament", metavar="NAME",
                        help="play in this tournament: the server seats the bot in each of its games, until the end")
    parser.add_argument("--ladder", action="store_true",
                        help="play rated games on the server's ladder of --game for as long as the bot runs: the "
                             "server pairs it by rating, game after game, at the ladder's time per move (needs a "
                             "--secret: only claimed names are rated)")
    parser.add_argument("--url", default=DEFAULT_URL, help=f"server WebSocket address (default {DEFAULT_URL})")
    parser.add_argument("--games", type=int, help="stop after N games (default: play on)")
    parser.add_argument("--retries", type=int, metavar="N",
                        help="reconnection attempts in a row before the bot gives up, waits of up to 10 s between "
                             "them (default 8; 60 with --tournament, about ten minutes)")
    parser.add_argument("--series", type=int, default=1,
                        help="games per room: a series of N games with the first move alternating (default 1)")
    parser.add_argument("--coords", default="algebraic", choices=["algebraic", "cosc322", "matrix"],
                        help="coordinate convention on the wire (default algebraic)")
    parser.add_argument("--seed", type=int, help="random seed for the bot")
    parser.add_argument("--per-move", type=per_move,
                        help="seconds per move in rooms this bot creates or seeks (0.05 to 86400)")
    parser.add_argument("--warm-up", action="store_true",
                        help="build the master engines (of --game, or of every game) into numba's cache, then exit: "
                             "the first game of a fresh install then starts at once (every bot also warms up before "
                             "it logs in)")
    parser.set_defaults(func=run_bot)
