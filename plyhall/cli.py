"""The ``plyhall`` command's entry point: the parser of every subcommand (:mod:`plyhall.commands`), and the run
of the one asked for, with the exit codes every command shares (130 when interrupted, SIGPIPE's when whoever read
the output stopped reading)."""

from __future__ import annotations

import argparse
import os
import sys
from types import ModuleType
from typing import Any, NoReturn

import protocol
from plyhall import compiled

# `plyhall serve` runs the compiled core where `plyhall compile` built it, loaded before any module of the server is
# imported; the other commands (bots, clients, tools) and the processes they start run the Python core
if sys.argv[1:2] == ["serve"]:
    try:
        compiled.use()
    except compiled.CompileError as exc:  # PLYHALL_CORE asks for what cannot be had: `plyhall serve` refuses to start
        compiled.REFUSED = str(exc)

from plyhall.commands import (  # noqa: E402
    analyse,
    bot,
    compile,
    cosc322,
    db,
    export,
    match,
    names,
    play,
    ratings,
    serve,
    tournament,
)

COMMANDS: tuple[ModuleType, ...] = (serve, export, db, ratings, names, analyse, tournament, bot, match, play, cosc322,
                                    compile)
"""The subcommand modules, in the order ``plyhall --help`` lists them."""


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose mistake is one line instead of the whole usage block and then the mistake: what was
    wrong (argparse's words), and where every option is listed."""

    def error(self, message: str) -> NoReturn:
        """Print ``message`` and the command's ``--help`` to look at, and exit with status 2 (as argparse does)."""
        self.exit(2, f"{self.prog}: error: {message} (every option: {self.prog} --help)\n")

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> tuple[argparse.Namespace, list[str]]:
        """argparse's, noting in the namespace the innermost (sub)command that parsed (``_parser``): arguments
        nobody took are that command's mistake (``plyhall serve --prot 1`` is said of ``plyhall serve``)."""
        if namespace is None:
            namespace = argparse.Namespace()
        namespace._parser = self  # a subcommand's parser sets it after its parent's, and it is copied up
        return super().parse_known_args(args, namespace)

    def parse_args(self, args: Any = None, namespace: Any = None) -> argparse.Namespace:  # type: ignore[override]
        """argparse's, with arguments nobody took said to be the mistake of the command they were given to."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            getattr(parsed, "_parser", self).error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every subcommand registered (each subcommand's parser a :class:`Parser` too)."""
    parser = Parser(
        prog="plyhall",
        description="Plyhall: a tournament server for two-player board-game bots.",
    )
    parser.add_argument("--version", action="version", version=f"plyhall {protocol.__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS:
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
