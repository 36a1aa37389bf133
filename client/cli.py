"""The ``plyhall`` command: one entry point, one subcommand per job.

Each subcommand lives in its own module, which offers ``register(subparsers)`` to add its
parser (setting ``func``). Modules import their heavy dependencies inside ``func`` so that
``plyhall --help`` stays fast. This module sits on top of every package: the server's
commands (``serve``, ``export``) and the programs that run bots (``client.runner``).
"""

from __future__ import annotations

import argparse
import os
import sys

import protocol
from client import cosc322, tournament
from client.runner import bot, match, play
from server import cli as server_cli

# Subcommand modules, in the order --help lists them.
COMMAND_MODULES = (server_cli, tournament, bot, match, play, cosc322)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="plyhall",
        description="Plyhall: a tournament server for two-player board-game bots.",
    )
    parser.add_argument("--version", action="version", version=f"plyhall {protocol.__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the ``plyhall`` command line; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Whoever read the output stopped reading (``plyhall export | head``): stop quietly, as Unix tools
        # do, with SIGPIPE's status. Standard output goes to /dev/null first, or Python's flush at exit
        # would raise the same error again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + 13


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
