"""``plyhall match``: two bot levels play a series of local games, no server needed; the run is
:func:`client.runner.match.run`, the library form :func:`client.runner.match.play_match`."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any

from bots import LEVELS_HELP
from client.runner.match import run
from client.runner.match_result import MatchSprt
from protocol.games import GAMES


def _whole_number(low: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``low``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, not {value}")
        return value

    return parse


_at_least_one = _whole_number(1)
_zero_or_more = _whole_number(0)


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, not {text!r}") from None
    if not value > 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text}")
    return value


def _sprt(text: str) -> MatchSprt:
    try:
        return MatchSprt.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(subparsers: Any) -> None:
    """Add the ``match`` subcommand to the ``plyhall`` parser."""
    parser = subparsers.add_parser(
        "match",
        help="play local games between two bot levels",
        description=(
            "Play local games between bot level A and bot level B, without a server. "
            f"The levels swap seats every game. Levels: {LEVELS_HELP}."
        ),
    )
    parser.add_argument("--game", required=True, type=str.lower, help=f"game id: {', '.join(GAMES)} (any case)")
    parser.add_argument("level_a", metavar="LEVEL_A",
                        help=f"level of bot A: {LEVELS_HELP}")
    parser.add_argument("level_b", metavar="LEVEL_B", help="level of bot B (the same choices)")
    parser.add_argument("--games", type=_at_least_one, default=10, help="number of games, at most 100,000 (default 10)")
    parser.add_argument(
        "--time-per-move",
        type=_positive_seconds,
        default=None,
        metavar="S",
        help="seconds per move handed to the bots (baseline levels ignore it; overruns are counted)",
    )
    parser.add_argument(
        "--opening-plies",
        type=_zero_or_more,
        default=0,
        metavar="N",
        help="start each pair of games (one per seating) with N random moves, so that "
        "deterministic levels play different games (default 0)",
    )
    parser.add_argument("--seed", type=int, default=None, help="seed for reproducible games (default: random)")
    parser.add_argument("--sprt", type=_sprt, default=None, metavar="SPEC",
                        help="stop as soon as the SPRT on A's colour-swapped pairs of games decides (--games is then "
                             f"the most played): {MatchSprt.HELP}")
    parser.add_argument(
        "--jobs", type=_at_least_one, default=1, metavar="J", help="play games in J worker processes (default 1)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)
