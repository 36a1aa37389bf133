"""The analysis worker: a process that analyses games with the master engines (``bots.analysis``), for the
server's analysis queue and ``plyhall analyse`` (neither of which may import the engines themselves).

It reads one JSON request a line on stdin, ``{"id": ..., "game": "connect4", "moves": [...], "options":
{...}, "nodes": N or null}``, and answers on stdout with ``{"id": ..., "progress": [done, total]}`` lines
while it works and one ``{"id": ..., "analysis": {...}}`` (or ``{"id": ..., "error": "..."}``) at the end.
It keeps each game's engine between requests, and runs at a lower priority than the server (``nice``), so
that analysing never slows play. Run as ``python -m client.runner.analyse``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

NICENESS = 10
"""How much lower than its parent the worker runs (Unix ``nice``)."""


def emit(message: dict[str, Any]) -> None:
    """One answer line."""
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def handle(request: dict[str, Any], analysers: dict[tuple[str, int | None], Any]) -> None:
    """Analyse one requested game, answering as the module says."""
    from bots.analysis import Analyser, analyse

    ident = request.get("id")
    game, nodes = request.get("game"), request.get("nodes")
    try:
        key = (game, nodes)
        if key not in analysers:
            analysers[key] = Analyser(str(game), nodes)
        result = analyse(str(game), list(request.get("moves") or []), request.get("options") or {},
                         analyser=analysers[key],
                         progress=lambda done, total: emit({"id": ident, "progress": [done, total]}))
    except Exception as exc:  # a bad request or a broken record: said, and the worker goes on
        emit({"id": ident, "error": f"{type(exc).__name__}: {exc}"})
        return
    emit({"id": ident, "analysis": result})


def main() -> int:
    """Serve requests until stdin ends."""
    try:
        os.nice(NICENESS)
    except (AttributeError, OSError):  # not on this platform, or not allowed: run at the same priority
        pass
    analysers: dict[tuple[str, int | None], Any] = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except ValueError as exc:
            emit({"id": None, "error": f"not a JSON request: {exc}"})
            continue
        if not isinstance(request, dict):
            emit({"id": None, "error": "a request is a JSON object"})
            continue
        handle(request, analysers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
