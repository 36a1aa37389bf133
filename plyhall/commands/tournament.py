"""``plyhall tournament``: run a tournament on a server, as its organiser; the actions are carried out by
:func:`client.tournament.run_tournament`."""

from __future__ import annotations

import argparse
from typing import Any

from client.connection import DEFAULT_URL
from client.tournament import FORMATS, run_tournament
from protocol.games import GAMES


def _add_definition(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--file", help="a TOML file with the tournament's settings (flags given too win)")
    parser.add_argument("--name", help="the tournament's name (letters, digits, spaces, _ . -; up to 28)")
    parser.add_argument("--game", type=str.lower, choices=sorted(GAMES),
                        help="the game played (required, here or in the --file)")
    parser.add_argument("--format", choices=FORMATS,
                        help="round-robin, double-round-robin, gauntlet (the first entrant against the others) or "
                             "swiss (required, here or in the --file)")
    parser.add_argument("--players", help="entrants: names of bots that connect (comma-separated)")
    parser.add_argument("--local", help="house bot entrants the server starts: levels, comma-separated "
                                        "(e.g. master,minimax-4,novice); the server needs --house-bots")
    parser.add_argument("--games-per-pairing", type=int,
                        help="games each pairing plays (default 2), the colours swapped from one game to the next, "
                             "each two games on the same opening")
    parser.add_argument("--cycles", type=int, help="how many times a round robin or gauntlet is played (default 1)")
    parser.add_argument("--rounds", type=int, help="rounds of a swiss event (required for swiss)")
    parser.add_argument("--time-control", help="30 (seconds per move), 5m+2s (game clock + increment) or untimed "
                                               "(default: the server's)")
    parser.add_argument("--time-margin", metavar="MS",
                        help="milliseconds a move may arrive after its clock ran out without losing, like "
                             "cutechess-cli's timemargin (0 to 60000; default 0); recorded with every game")
    parser.add_argument("--concurrency", type=int, help="games played at once (default 4)")
    parser.add_argument("--openings", help="a file of openings (moves in notation per line; also the Connect Four "
                                           "test sets and Santorini placement files)")
    parser.add_argument("--plies", type=int, help="with --openings: play only the first N plies of each line")
    parser.add_argument("--illegal-move", choices=["lose", "reject"], help="an illegal move loses (default) or is "
                                                                          "refused")
    parser.add_argument("--grace", help="seconds an absent entrant has before it forfeits (default 60)")
    parser.add_argument("--sprt", help="stop a gauntlet early: elo0=0,elo1=20,alpha=0.05,beta=0.05[,model=M], M one "
                        "of normalized (the default), logistic, bayeselo")


def register(subparsers: Any) -> None:
    """Add the ``tournament`` subcommand and its own subcommands."""
    parser = subparsers.add_parser(
        "tournament", help="run a tournament on a server (organiser)",
        description="Run a tournament on a running server as its organiser (plyhall serve --organiser-secret). "
                    "Entrants connect with plyhall bot --tournament NAME and are seated game after game.")
    sub = parser.add_subparsers(dest="command", metavar="ACTION", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--url", default=DEFAULT_URL, help=f"server WebSocket address (default {DEFAULT_URL})")
        p.add_argument("--secret", help="the organiser secret (default $PLYHALL_ORGANISER_SECRET; results, status, "
                                        "list and follow need none)")

    create = sub.add_parser("create", help="define a tournament", description="Define a tournament.")
    _add_definition(create)
    create.add_argument("--start", action="store_true", help="start it at once")
    common(create)
    run = sub.add_parser("run", help="create, start and follow a tournament to the end, then print the results",
                         description="Create and start a tournament, print progress as games finish, and the "
                                     "results at the end.")
    _add_definition(run)
    common(run)
    for action, text in (("start", "start a created tournament"), ("pause", "open no new games"),
                         ("resume", "go on after a pause"), ("cancel", "stop for good (running games are aborted)"),
                         ("status", "progress and running games"),
                         ("follow", "follow a tournament to its end and print the results, as run does (after a "
                                    "run was interrupted)")):
        p = sub.add_parser(action, help=text, description=text[0].upper() + text[1:] + ".")
        p.add_argument("tournament", help="the tournament's name or id")
        common(p)
    results = sub.add_parser("results", help="standings, crosstable, Elo and pairings",
                             description="Print the standings (text table by default).")
    results.add_argument("tournament", help="the tournament's name or id")
    form = results.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="everything as JSON")
    form.add_argument("--csv", action="store_true", help="the standings as CSV")
    common(results)
    listing = sub.add_parser("list", help="the server's tournaments", description="List the server's tournaments.")
    common(listing)
    parser.set_defaults(func=run_tournament)
