"""``plyhall play``: a person plays one of our bots in the terminal; the run is :func:`client.runner.play.run`, the
game :func:`client.runner.play.play_in_terminal`."""

from __future__ import annotations

import argparse
from typing import Any

from bots import LEVELS_HELP
from client.runner.play import run
from protocol.games import GAMES


def _seat(text: str) -> int:
    if text not in ("0", "1"):
        raise argparse.ArgumentTypeError(f"must be 0 (move first) or 1 (move second), not {text!r}")
    return int(text)


def register(subparsers: Any) -> None:
    """Add the ``play`` subcommand to the ``plyhall`` parser."""
    parser = subparsers.add_parser(
        "play",
        help="play a bot in the terminal",
        description=f"Play one game against a bot in the terminal. Levels: {LEVELS_HELP}.",
    )
    parser.add_argument("--game", required=True, type=str.lower, help=f"game id: {', '.join(GAMES)} (any case)")
    parser.add_argument("--level", default="minimax-2",
                        help=f"the bot's level: {LEVELS_HELP} (default minimax-2)")
    parser.add_argument("--seat", type=_seat, default=0, help="your seat: 0 moves first (default), 1 second")
    parser.add_argument("--seed", type=int, default=None, help="seed of the bot's random choices")
    parser.set_defaults(func=run)
