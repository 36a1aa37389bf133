"""``plyhall compile``: build the compiled core (:mod:`plyhall.compiled`), say which core the server would run, or
remove the builds."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from plyhall import compiled


def register(subparsers: Any) -> None:
    """Add the ``compile`` subcommand."""
    parser = subparsers.add_parser(
        "compile", help="compile the server's move path to C (about 29%% fewer instructions a move)",
        description="Compile the modules every move runs through (the hall, the room, the clocks, Connect Four's "
                    "rules, the codecs, the frames, a message's way from its connection to the hall and the sending "
                    "side) to C with mypyc, into the user's cache "
                    f"(${compiled.DIRECTORY}, else $XDG_CACHE_HOME/plyhall/core, else ~/.cache/plyhall/core). "
                    "From then on `plyhall serve` runs "
                    "them compiled, until a source file of the server changes (it then runs its Python again and "
                    "says so; run this again). The four builds used or made last are kept. Needs mypyc (pip install "
                    "'plyhall[compile]') and a C compiler with "
                    f"Python's headers; a minute or two. {compiled.ENVIRONMENT}=python turns the compiled core off.")
    parser.add_argument("--jobs", type=int, default=0, metavar="N",
                        help="C compilers run at once (default: one a CPU)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--status", action="store_true", help="say which core `plyhall serve` would run, and why")
    what.add_argument("--clean", action="store_true", help="remove every build of the compiled core from the cache")
    what.add_argument("--force", action="store_true", help="build again even if a build of these sources is there")
    parser.set_defaults(func=run_compile)


def run_compile(args: argparse.Namespace) -> int:
    """Build the compiled core, or report on it, or remove it."""
    if args.jobs < 0:
        print(f"plyhall compile: --jobs must be 1 or more (0: one a CPU), not {args.jobs}", file=sys.stderr)
        return 2
    try:
        if args.clean:
            compiled.clean()
        elif args.status:
            folder = compiled.build_dir()
            built = compiled.is_built(folder)
            words = compiled.describe(folder)
            print(f"sources: {compiled.source_root()} (fingerprint {folder.name})")
            print(f"build:   {folder if built else 'none for these sources'}")
            print(f"`plyhall serve` runs the {words}")
        else:
            compiled.build(log=lambda line: print(line, file=sys.stderr), jobs=args.jobs or None, force=args.force)
    except (compiled.CompileError, OSError) as exc:
        print(f"plyhall compile: {exc}", file=sys.stderr)
        return 1
    return 0
