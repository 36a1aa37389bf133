"""The ``plyhall`` console script: :func:`plyhall.cli.main`, with a Ctrl-C in the second or so its imports take
said as every command says it (``interrupted``, status 130) instead of with a traceback."""

from __future__ import annotations

import sys


def main() -> int:
    """Import the command line and run it; 130 when interrupted while importing."""
    try:
        from plyhall.cli import main as run
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return run()
