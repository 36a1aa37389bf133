"""``plyhall names``: names the organiser registers, each with a token that is its secret.

    plyhall names add alice [--db plyhall.db]     # prints alice's token, once
    plyhall names list

A registered name is a claimed name whose claim the organiser made: its player logs in with the name and the
token as its ``secret`` (``plyhall bot --name alice --secret TOKEN``), as with any claimed name. Registered names
are people the organiser vouches for: two of them rate each other whatever addresses they play from, and
``plyhall serve --rated-names registered`` rates registered names only (docs/RATINGS.md). Names may be added while
the server runs on the same database: it looks a name it does not know up there when a login would claim it.
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import sys
import time
from typing import Any

from plyhall.database import add_db_option, open_database
from protocol.messages import NAME_PATTERN
from protocol.ratings import HOUSE_PREFIX
from server.io.transport import parse_networks

NAME = re.compile(NAME_PATTERN)
NAME_HELP = ("1 to 32 letters (a-z, A-Z: no accents), digits and _ . - (starting with a letter or digit), not "
             "starting with house-")
TOKEN_BYTES = 18
"""Random bytes in a token (24 URL-safe characters)."""


def register(subparsers: Any) -> None:
    """Add the ``names`` subcommand."""
    parser = subparsers.add_parser(
        "names", help="register names for rated play (each gets a token, its secret)",
        description="Names the organiser registers for rated play. Each registered name gets a token, printed once: "
                    "its player logs in with the name and the token as its secret. A running server on the same "
                    "database knows a new name as soon as its player logs in.")
    tools = parser.add_subparsers(dest="names_tool", metavar="ACTION", required=True)
    add = tools.add_parser("add", help="register names and print each one's token",
                           description="Register each NAME and print 'NAME TOKEN' for it (the token is shown once "
                                       "and only its salted hash is stored). A name claimed already is refused.")
    add.add_argument("names", nargs="+", metavar="NAME", help=NAME_HELP)
    add_db_option(add)
    add.set_defaults(func=run_add)
    listing = tools.add_parser("list", help="list the registered names",
                               description="Print the registered names, one a line, and how many there are "
                                           "(the tokens are not stored: only their salted hashes).")
    add_db_option(listing)
    listing.set_defaults(func=run_list)


def add_rated_options(serve: argparse.ArgumentParser) -> None:
    """The ``plyhall serve`` options of rated play (with ``--rated-games-per-address``, one of the quotas)."""
    rated = serve.add_argument_group(
        "rated play (docs/RATINGS.md)", "names that play from one address, or were claimed from one, never rate each "
                                        "other, unless the operator says otherwise")
    rated.add_argument("--rated-networks", default="", metavar="CIDR,...",
                       help="networks that hold many independent people (a classroom behind one NAT, e.g. "
                            "192.0.2.0/24): their addresses link no names and count towards no budget (default: none)")
    rated.add_argument("--rated-names", choices=("claimed", "registered"), default="claimed",
                       help="which names are rated: any claimed name (the default), or only the names the organiser "
                            "registered with 'plyhall names add' (and ladder anchors)")


def rated_option_errors(args: argparse.Namespace) -> list[str]:
    """What is wrong with the rated-play options of ``plyhall serve``, each in a sentence."""
    try:
        parse_networks(args.rated_networks)
    except ValueError as exc:
        return [f"--rated-networks: {exc}"]
    return []


def rated_limits(args: argparse.Namespace) -> dict[str, Any]:
    """The fields of :class:`server.core.hall.Limits` that valid rated-play options set."""
    return {"rated_networks": tuple(parse_networks(args.rated_networks)), "rated_names": args.rated_names}


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be registered, or None."""
    if not NAME.fullmatch(name):
        return f"{name[:40]!r} is not a name: {NAME_HELP}"
    if name.casefold().startswith(HOUSE_PREFIX):  # in any letter case, as the server refuses it
        return f"{name} starts with {HOUSE_PREFIX}, which is the server's own bots'"
    return None


def run_add(args: argparse.Namespace) -> int:
    """Register the names, printing each one's token; exit 1 when any could not be registered."""
    from server.core.identity import Claim
    from server.storage import StorageError, open_existing, open_storage, sqlite_path

    problems = [p for p in map(name_problem, args.names) if p is not None]
    if len(set(args.names)) != len(args.names):
        problems.append("a name is given twice")
    if problems:
        for problem in problems:
            print(f"plyhall names add: {problem}", file=sys.stderr)
        return 2
    path = sqlite_path(args.db)
    new = path is not None and path != ":memory:" and not os.path.exists(path)
    try:  # an existing file must be a Plyhall database (not another program's, nor empty); a new one is made
        storage = open_storage(args.db) if new else open_existing(args.db)
    except (StorageError, OSError) as exc:
        print(f"plyhall names add: {exc}", file=sys.stderr)
        return 1
    if new:
        print(f"plyhall names add: {path} did not exist: made a new database there (the server must run with "
              f"--db {path} for these names to count)", file=sys.stderr)
    failed = 0
    try:
        for name in args.names:
            token = secrets.token_urlsafe(TOKEN_BYTES)
            claim = Claim.make(token)
            if storage.register_name(name, claim.salt, claim.digest, time.time()):
                print(f"{name} {token}")
            else:
                failed += 1
                print(f"plyhall names add: {name} is claimed already (by its player, or registered before); "
                      "choose another name", file=sys.stderr)
    finally:
        storage.close()
    return 1 if failed else 0


def run_list(args: argparse.Namespace) -> int:
    """Print the registered names, one a line."""
    storage = open_database(args.db, "names list")
    if storage is None:
        return 1
    try:
        _, registered = storage.rated_names()
    finally:
        storage.close()
    for name in registered:
        print(name)
    print(f"{len(registered)} registered name{'' if len(registered) == 1 else 's'}", file=sys.stderr)
    return 0
