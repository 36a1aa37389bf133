"""``plyhall serve`` and ``plyhall export``."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``serve`` and ``export`` subcommands."""
    serve = subparsers.add_parser(
        "serve", help="run the tournament server",
        description="Run the Plyhall server: WebSocket endpoint /ws and read-only HTTP on one port.")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 picks a free one)")
    serve.add_argument("--db", default="plyhall.db", help="SQLite database file (default plyhall.db)")
    serve.add_argument("--grace", type=float, default=30.0,
                       help="default seconds a disconnected player keeps the seat (default 30)")
    serve.add_argument("--illegal-move", choices=["reject", "lose"], default="reject",
                       help="default cost of an illegal move in new rooms (default reject)")
    serve.add_argument("--per-move", type=float, default=30.0,
                       help="default seconds per move in new rooms (default 30)")
    serve.add_argument("--quiet", action="store_true", help="log warnings only")
    serve.set_defaults(func=run_serve)

    export = subparsers.add_parser(
        "export", help="write recorded games as JSON lines",
        description="Write recorded games from a server database as JSON lines (one game a line).")
    export.add_argument("--db", default="plyhall.db", help="SQLite database file (default plyhall.db)")
    export.add_argument("--game", help="only the game with this record id")
    export.add_argument("--output", "-o", help="file to write (default standard output)")
    export.set_defaults(func=run_export)


def run_serve(args: argparse.Namespace) -> int:
    """Start the server and run until SIGINT/SIGTERM."""
    from .app import PlyhallServer, tune_gc_for_serving
    from .storage import SQLiteStorage

    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO,
                        format="%(asctime)s %(levelname)s %(message)s")
    if not 0 <= args.port <= 65535:
        print(f"plyhall serve: --port must be 0 to 65535, not {args.port}", file=sys.stderr)
        return 2
    if not 0 <= args.grace <= 600 or not 0.05 <= args.per_move <= 86400:
        print("plyhall serve: --grace must be 0 to 600 and --per-move 0.05 to 86400 seconds", file=sys.stderr)
        return 2
    try:
        storage = SQLiteStorage(args.db)
    except (OSError, ValueError) as exc:
        print(f"plyhall serve: {exc}", file=sys.stderr)
        return 1
    defaults = {"grace": args.grace, "illegal_move": args.illegal_move,
                "time_control": {"per_move": args.per_move}}

    async def main() -> None:
        server = PlyhallServer(storage, args.host, args.port, room_defaults=defaults)
        try:
            await server.start()
        except OSError as exc:
            print(f"plyhall serve: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
            storage.close()
            raise SystemExit(1) from None
        tune_gc_for_serving()
        print(f"plyhall serving on ws://{args.host}:{server.port}/ws  (http://{args.host}:{server.port}/healthz), "
              f"database {args.db}; Ctrl-C stops", flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        print("plyhall: shutting down", flush=True)
        await server.stop()
        count = server.games_recorded
        print(f"plyhall: stopped; {count} game{'' if count == 1 else 's'} recorded this run", flush=True)

    asyncio.run(main())
    return 0


def run_export(args: argparse.Namespace) -> int:
    """Write records as JSON lines."""
    from pathlib import Path

    from .storage import SQLiteStorage

    if not Path(args.db).is_file():
        print(f"plyhall export: no database file {args.db}", file=sys.stderr)
        return 1
    try:
        storage = SQLiteStorage(args.db)
    except (OSError, ValueError) as exc:
        print(f"plyhall export: {exc}", file=sys.stderr)
        return 1
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    count = 0
    try:
        if args.game:
            record = storage.get_game(args.game)
            if record is None:
                print(f"plyhall export: no game with id {args.game} in {args.db}", file=sys.stderr)
                return 1
            records: Any = [record]
        else:
            records = storage.iter_games()
        for record in records:
            out.write(json.dumps(record) + "\n")
            count += 1
    finally:
        if out is not sys.stdout:
            out.close()
        storage.close()
    print(f"exported {count} game(s)", file=sys.stderr)
    return 0
