"""``plyhall cosc322``: the COSC 322 course library for Java Amazons bots: ``jar`` builds it
(:func:`client.cosc322.run_jar`), ``entrant`` plays a tournament with a course bot, a fresh process a game
(:func:`client.entrant.run_entrant`); docs/COSC322.md."""

from __future__ import annotations

import argparse
import os
from typing import Any

from client.connection import DEFAULT_URL
from client.cosc322 import DEFAULT_JAR, run_jar
from client.entrant import POLL, run_entrant


def register(subparsers: Any) -> None:
    """Add the ``cosc322`` subcommand (with its own ``jar`` and ``entrant`` subcommands)."""
    parser = subparsers.add_parser(
        "cosc322", help="the COSC 322 course library for Java Amazons bots",
        description="A Java library with the COSC 322 course client's API (ygraph.ai.smartfox.games) that plays "
                    "on Plyhall: course bots compile against it unchanged. See docs/COSC322.md.")
    commands = parser.add_subparsers(dest="cosc322_command", metavar="ACTION", required=True)
    jar = commands.add_parser(
        "jar", help="compile the library into a jar with your javac",
        description="Compile the library's Java sources with your JDK's javac (--release 11) and write the jar. "
                    "Then: javac -cp plyhall-cosc322.jar ... to compile a course bot, and java -cp "
                    "plyhall-cosc322.jar:. ... to run it (docs/COSC322.md).")
    jar.add_argument("-o", "--output", default=DEFAULT_JAR, help=f"the jar to write (default {DEFAULT_JAR})")
    jar.add_argument("--javac", help="the javac to use (default: javac on PATH, else $JAVA_HOME/bin/javac)")
    jar.set_defaults(func=run_jar)
    add_entrant(commands)


def add_entrant(commands: Any) -> None:
    """Add ``plyhall cosc322 entrant`` to the ``cosc322`` subcommands."""
    entrant = commands.add_parser(
        "entrant", help="play a tournament with a course bot: a fresh, supervised process for each game",
        description="Run a COSC 322 course bot as a tournament entrant, one fresh process per game: whenever the "
                    "server opens one of the entrant's games the bot's command starts (with PLYHALL_URL, "
                    "PLYHALL_TOURNAMENT, PLYHALL_NAME and PLYHALL_GAMES=1 set), and its process group is stopped "
                    "when that game ends, so a bot that freezes or keeps a stale board costs one game, never the "
                    "event. See docs/COSC322.md, \"Run a class tournament\".",
        usage="plyhall cosc322 entrant --tournament NAME --name USER [--url URL] [--secret SECRET] [--poll S] "
              "-- COMMAND [ARGS ...]")
    entrant.add_argument("--tournament", required=True, help="the tournament's name or id")
    entrant.add_argument("--name", required=True, help="the entrant's name (the bot logs in under it)")
    entrant.add_argument("--url", default=os.environ.get("PLYHALL_URL", DEFAULT_URL),
                         help=f"the server's WebSocket address (default $PLYHALL_URL, else {DEFAULT_URL})")
    entrant.add_argument("--secret", help="the name's secret, passed to the bot as PLYHALL_SECRET (default: "
                                          "$PLYHALL_SECRET if set, else the password the bot's command gives)")
    entrant.add_argument("--poll", type=float, default=POLL,
                         help=f"seconds between two looks for the entrant's next game (default {POLL:g})")
    entrant.add_argument("command", nargs=argparse.REMAINDER, help="-- then the bot's command and its arguments")
    entrant.set_defaults(func=run_entrant)
