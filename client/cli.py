"""The ``plyhall`` command: one entry point, one subcommand per job.

Each subcommand lives in its own module, which offers ``register(subparsers)``
to add its parser (setting ``func``). Modules import their heavy dependencies
inside ``func`` so that ``plyhall --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys

import protocol

# (module, doc) for each subcommand, in the order --help lists them.
COMMAND_MODULES = (
    "server.cli",  # serve, export
    "client.botrunner",  # bot
    "client.match",  # match
    "client.play",  # play
)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="plyhall",
        description="Plyhall: a tournament server for two-player board-game bots.",
    )
    parser.add_argument("--version", action="version", version=f"plyhall {protocol.__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue  # a command whose module is not part of this build
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
