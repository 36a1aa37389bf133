"""``plyhall serve``: the server's options, each registered and checked here, and the run that starts the server
from them (``--workers N`` starts N of it, supervised by :mod:`plyhall.workers`)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import re
import signal
import socket
import sys
from typing import Any

from plyhall import compiled
from plyhall.commands import names
from plyhall.database import add_db_option
from protocol.wording import without_password
from server.core.hall import Limits
from server.core.house import HOUSE_LEVELS
from server.core.ladder import (
    GAMES_BURST,
    GAMES_PER_ADDRESS,
    LADDER_TIMES,
    LadderConfig,
    parse_anchors,
    parse_ladder_times,
)
from server.io import event_loop
from server.io.analysis import MAX_QUEUED, PER_REQUESTER
from server.io.event_loop import EVENT_LOOPS, default_event_loop, installed
from server.io.http import BURST_SECONDS, HTTP_RATE, HttpQuota
from server.io.transport import parse_networks

QUOTAS: tuple[tuple[str, int, str], ...] = (
    ("max_connections_per_address", 0, "WebSocket connections open from one address"),
    ("max_opening_per_address", 0, "connections from one address whose opening request (a WebSocket handshake or a "
                                    "plain HTTP request) is not answered yet; past it 429 at once"),
    ("max_rooms_per_address", 0, "open rooms created from one address"),
    ("max_rooms_per_name", 1, "open rooms one name has created"),
    ("max_seek_games_per_name", 1, "rooms opened by seeks that one name sits in at once"),
    ("max_rooms", 1, "rooms on the whole server (seeks may open 10%% more, so play goes on)"),
    ("max_house_games_per_address", 0, "games against house bots played at once from one address"),
    ("max_house_games_per_name", 1, "games against house bots one name plays at once"),
    ("max_ladder_names_per_address", 0, "names on the rating ladder (of any game) from one address"),
    ("house_idle", 10, "seconds a person playing a house bot may leave a move unplayed; then it loses and the room "
                       "ends"),
    ("rated_games_per_address", 0, "rated games the names playing from one address play in 24 hours (names it "
                                   "registered and --rated-networks are not counted; docs/RATINGS.md)"),
)
"""The ``serve`` flags of :class:`server.core.hall.Limits`: field, lowest value, what it limits (defaults: Limits')."""
MAX_WORKERS = 64
DEPOSED_EXIT = 3  # the exit code of a cluster node that was deposed (another node owns its rooms now)
DEPOSED_LINGER = 2.0  # seconds a deposed node answers /healthz with its reason before it exits
"""The most node processes ``plyhall serve --workers`` starts."""
CLUSTER_SCHEMES = ("redis://", "rediss://", "unix://")
"""The URLs ``--cluster`` accepts (those of redis-py's ``Redis.from_url``)."""


def register(subparsers: Any) -> None:
    """Add the ``serve`` subcommand."""
    serve = subparsers.add_parser(
        "serve", help="run the tournament server",
        description="Run the Plyhall server: WebSocket endpoint /ws and read-only HTTP on one port. Running games "
                    "are stored move by move: after a crash or a restart on the same database they continue.")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1, this machine only; 0.0.0.0 lets bots on "
                            "other machines connect)")
    serve.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 picks a free one)")
    add_db_option(serve, "postgresql://USER:PASSWORD@HOST/DBNAME (pip install 'plyhall[postgres]')")
    serve.add_argument("--node", default=os.environ.get("PLYHALL_NODE", "main"),
                       help="this server's name among servers sharing one PostgreSQL database: its rooms and "
                            "tournaments are its own (default main, or $PLYHALL_NODE)")
    serve.add_argument("--grace", type=float, default=30.0,
                       help="default seconds a disconnected player keeps the seat (0 to 600; default 30)")
    serve.add_argument("--illegal-move", choices=["reject", "lose"], default="reject",
                       help="default cost of an illegal move in new rooms (default reject)")
    serve.add_argument("--per-move", type=float, default=30.0,
                       help="default seconds per move in new rooms (0.05 to 86400; default 30)")
    serve.add_argument("--organiser-secret", default=os.environ.get("PLYHALL_ORGANISER_SECRET"),
                       help="secret that lets `plyhall tournament` run tournaments on this server, 8 to 200 "
                            "characters (default $PLYHALL_ORGANISER_SECRET; none: no tournaments)")
    serve.add_argument("--house-bots", type=int, nargs="?", const=2, default=0, metavar="N",
                       help="let players open rooms against the server's own bots (the web page's 'play a bot', "
                            "tournaments' local entrants): up to N bot processes at once (default when given: 2; "
                            "a master bot takes about 300 MB)")
    analysis = serve.add_argument_group(
        "analysis", "the master engines' verdict on every move of a finished game, computed in worker processes "
                    "at a lower priority than play and stored with the game (GET /api/games/ID/analysis)")
    analysis.add_argument("--analyse-finished", action="store_true",
                          help="analyse every game that ends by play (otherwise only games someone asks for)")
    analysis.add_argument("--analysis-workers", type=int, default=1, metavar="N",
                          help="games analysed at once, one worker process each (1 to 16; default 1)")
    analysis.add_argument("--analysis-per-address", type=int, default=PER_REQUESTER, metavar="N", help="games one "
                          f"address may have waiting, served in turn (1 to {MAX_QUEUED}; default {PER_REQUESTER})")
    analysis.add_argument("--analysis-nodes", type=int, metavar="N",
                          help="search nodes per position (default: each game's own budget, docs/ANALYSIS.md)")
    ladder = serve.add_argument_group(
        "ladder", "bots that seek with ladder: true (plyhall bot --ladder) play rated games for as long as they are "
                  "connected, paired by rating (docs/RATINGS.md)")
    ladder.add_argument("--ladder-time", default="", metavar="GAME=SECONDS,...",
                        help="seconds a move in the ladder's games, e.g. connect4=5,amazons=30 (default: "
                             f"{', '.join(f'{game}={seconds:g}' for game, seconds in LADDER_TIMES.items())})")
    ladder.add_argument("--ladder-anchors", nargs="+", action="extend", default=[], metavar="GAME:LEVEL,...",
                        help="house bots of these levels play on the ladder of that game as anchors, their ratings "
                             "pinned (house-LEVEL-GAME), e.g. connect4:random,novice,master amazons:master; each is "
                             "one more house bot process, on top of --house-bots")
    ladder.add_argument("--ladder-games-per-address", type=float, default=GAMES_PER_ADDRESS, metavar="N",
                        help="ladder games the names of one address may start a minute, on average, in bursts of "
                             f"{GAMES_BURST:g} (default {GAMES_PER_ADDRESS:g}; 0: no limit); past it they wait")
    names.add_rated_options(serve)
    quotas = serve.add_argument_group(
        "quotas", "what one address or one name may hold, so that nobody can fill the server")
    defaults = Limits()
    for field, low, text in QUOTAS:
        quotas.add_argument("--" + field.replace("_", "-"), type=type(getattr(defaults, field)), metavar="N",
                            default=getattr(defaults, field),
                            help=f"{text} (default {getattr(defaults, field):g}{'; 0: no limit' if low == 0 else ''})")
    cluster = serve.add_argument_group(
        "cluster (docs/SCALING.md)", "several nodes serving one lobby: they share a Redis and a PostgreSQL database, "
                                     "each with its own --node name")
    cluster.add_argument("--cluster", default=os.environ.get("PLYHALL_CLUSTER") or None, metavar="URL",
                         help="redis://HOST:PORT/DB of the cluster's Redis (rediss:// with TLS, unix:///PATH for a "
                              "socket; default $PLYHALL_CLUSTER): makes this server a node of that cluster; needs "
                              "--db postgresql://... and a --node name of its own (pip install 'plyhall[cluster]')")
    cluster.add_argument("--workers", type=int, default=1, metavar="N",
                         help="start N node processes on this machine sharing one port (SO_REUSEPORT), nodes "
                              "NODE-1 to NODE-N of the cluster; needs --cluster and --db postgresql://... (1 to "
                              f"{MAX_WORKERS}; default 1: this process serves alone)")
    cluster.add_argument("--reuse-port", action="store_true",
                         help="listen with SO_REUSEPORT so several servers share the port (set by --workers)")
    serve.add_argument("--trusted-proxies", default="", metavar="ADDRESSES",
                       help="reverse proxies (addresses or networks, comma-separated) whose X-Forwarded-For header "
                            "names the real client: quotas and back-off then count by that address (default: none; "
                            "behind a TLS proxy on this machine, --trusted-proxies 127.0.0.1)")
    serve.add_argument("--rate-limit", type=float, default=50.0, metavar="N",
                       help="messages a second one connection may send on average, bursts of 4N (default 50; "
                            "accepted moves do not count)")
    serve.add_argument("--http-rate", type=float, default=HTTP_RATE, metavar="N", help="HTTP requests a second from "
                       f"one address, on average, in bursts of {BURST_SECONDS:g} seconds' worth (an answer counts one "
                       f"more for every 32 KB it holds); past it 429 (default {HTTP_RATE:g}; 0: no limit; the page's "
                       "files and /healthz are free)")
    serve.add_argument("--event-loop", choices=EVENT_LOOPS, default=default_event_loop(),
                       help="event loop: uvloop (the default where it is installed; faster sockets and timers) or "
                            f"Python's own asyncio (default here: {default_event_loop()})")
    serve.add_argument("--quiet", action="store_true", help="log warnings only")
    serve.add_argument("--verbose", action="store_true", help="log connection churn too (DEBUG)")
    serve.set_defaults(func=run_serve)


def serve_option_errors(args: argparse.Namespace) -> list[str]:
    """Every bad ``serve`` option, each in a sentence of its own."""
    errors = []
    if not 0 <= args.port <= 65535:
        errors.append(f"--port must be 0 to 65535, not {args.port}")
    if not 0 <= args.grace <= 600:
        errors.append(f"--grace must be 0 to 600 seconds, not {args.grace:g}")
    if not 0.05 <= args.per_move <= 86400:
        errors.append(f"--per-move must be 0.05 to 86400 seconds, not {args.per_move:g}")
    errors += _secret_errors(args.organiser_secret)
    if not re.fullmatch(r"[A-Za-z0-9_.\-]{1,64}", args.node):
        errors.append(f"--node must be 1 to 64 letters, digits and _ . -, not {args.node[:70]!r}")
    if not 1 <= args.rate_limit <= 100_000:
        errors.append(f"--rate-limit must be 1 to 100000 messages a second, not {args.rate_limit:g}")
    if not 0 <= args.house_bots <= 64:
        errors.append(f"--house-bots must be 0 to 64 bot processes, not {args.house_bots}")
    for field, low, _ in QUOTAS:
        high = 3600 if field == "house_idle" else 1_000_000
        if not low <= getattr(args, field) <= high:
            errors.append(f"--{field.replace('_', '-')} must be {low}{' (no limit)' if low == 0 else ''} to {high}, "
                          f"not {getattr(args, field):g}")
    try:
        parse_networks(args.trusted_proxies)
    except ValueError as exc:
        errors.append(f"--trusted-proxies: {exc}")
    errors += names.rated_option_errors(args)
    errors += _analysis_errors(args)
    errors += _ladder_errors(args)
    errors += _cluster_errors(args)
    if not installed(args.event_loop):
        errors.append(f"--event-loop {args.event_loop}: it is not installed here (pip install {args.event_loop}), "
                      "or use --event-loop asyncio")
    return errors


def _secret_errors(secret: str | None) -> list[str]:
    if secret == "":
        return ["--organiser-secret is empty (is the shell variable set?); it must be 8 to 200 characters"]
    if secret is not None and not 8 <= len(secret) <= 200:
        return ["--organiser-secret must be 8 to 200 characters"]
    return []


def _analysis_errors(args: argparse.Namespace) -> list[str]:
    errors = []
    if not 1 <= args.analysis_workers <= 16:
        errors.append(f"--analysis-workers must be 1 to 16 processes, not {args.analysis_workers}")
    if not 1 <= args.analysis_per_address <= MAX_QUEUED:
        errors.append(f"--analysis-per-address must be 1 to {MAX_QUEUED} games, not {args.analysis_per_address}")
    if not 0 <= args.http_rate <= 1e6:
        errors.append(f"--http-rate must be 0 (no limit) to 1000000 requests a second, not {args.http_rate:g}")
    if args.analysis_nodes is not None and not 1000 <= args.analysis_nodes <= 10**9:
        errors.append(f"--analysis-nodes must be 1000 to 1000000000 nodes a position, not {args.analysis_nodes}")
    return errors


def _ladder_errors(args: argparse.Namespace) -> list[str]:
    errors = []
    try:
        parse_ladder_times(args.ladder_time)
    except ValueError as exc:
        errors.append(f"--ladder-time: {exc}")
    if not 0 <= args.ladder_games_per_address <= 1e6:
        errors.append(f"--ladder-games-per-address must be 0 (no limit) to 1e6, not {args.ladder_games_per_address:g}")
    try:
        parse_anchors(args.ladder_anchors, HOUSE_LEVELS)
    except ValueError as exc:
        errors.append(f"--ladder-anchors: {exc}")
    return errors


def _cluster_errors(args: argparse.Namespace) -> list[str]:
    errors = []
    workers = args.workers
    if not 1 <= workers <= MAX_WORKERS:
        errors.append(f"--workers must be 1 to {MAX_WORKERS} processes, not {workers}")
    if args.cluster is not None and not args.cluster.startswith(CLUSTER_SCHEMES):
        errors.append(f"--cluster must be the URL of the cluster's Redis: redis://HOST:PORT/DB, rediss://HOST:PORT/DB "
                      f"(TLS) or unix:///PATH/redis.sock, not {_url_shown(args.cluster)}")
    if workers > 1 and not args.cluster:
        errors.append(f"--workers {workers} starts {workers} nodes of one cluster on this machine: give --cluster "
                      "redis://HOST:PORT/DB, the Redis they share (and --db postgresql://..., the database they share)")
    if args.cluster and not args.db.startswith(("postgresql://", "postgres://")):
        errors.append("--cluster needs the PostgreSQL database every node shares: --db "
                      f"postgresql://USER:PASSWORD@HOST/DBNAME, not {_url_shown(args.db)} (a SQLite file belongs to "
                      "one server)")
    if args.cluster and args.node == "main":
        errors.append("--cluster: every node of a cluster needs its own --node NAME (or $PLYHALL_NODE), not the "
                      f"default main{' (with --workers the nodes are NAME-1 to NAME-N)' if workers > 1 else ''}")
    if workers > 1 and args.port == 0:
        errors.append(f"--port 0 picks a free port for each process, but the --workers {workers} share one port: give "
                      "it, e.g. --port 8765")
    if workers > 1 and len(f"{args.node}-{workers}") > 64:
        errors.append(f"--node must be at most {63 - len(str(workers))} characters with --workers {workers} (the "
                      f"nodes are NAME-1 to NAME-{workers})")
    if (args.reuse_port or workers > 1) and not hasattr(socket, "SO_REUSEPORT"):
        errors.append(f"{'--workers' if workers > 1 else '--reuse-port'}: this system has no SO_REUSEPORT, so "
                      "servers cannot share a port; run one server a port")
    return errors


def _url_shown(url: str) -> str:
    """A URL or path for an error message, without the password a URL may carry (and cut short)."""
    if "://" in url:
        return f"{url.split('://', 1)[0][:20]}://..."
    return repr(url[:70])


def cluster_shown(url: str) -> str:
    """A ``--cluster`` URL for the log: its password, if any, hidden."""
    return without_password(url)


def serve_limits(args: argparse.Namespace) -> Limits:
    """The hall's :class:`Limits` from valid ``serve`` options: the quotas, and who is rated."""
    return Limits(**{f: getattr(args, f) for f, _, _ in QUOTAS}, **names.rated_limits(args))


def ladder_config(args: argparse.Namespace) -> LadderConfig:
    """The ladder the (validated) ``serve`` options ask for."""
    return LadderConfig(parse_ladder_times(args.ladder_time), tuple(parse_anchors(args.ladder_anchors, HOUSE_LEVELS)),
                        args.ladder_games_per_address)


SERVE_OWN = {"workers", "node", "reuse_port", "func", "command"}
"""``serve`` options that :func:`serve_argv` leaves out: ``--workers`` sets each worker's own."""


def serve_argv(args: argparse.Namespace) -> list[str]:
    """The ``serve`` options of ``args`` that every worker gets, as command-line arguments: each option whose
    value differs from its default (the workers see the same environment, so the defaults are theirs too),
    except ``--workers``, ``--node`` and ``--reuse-port``."""
    subparsers = argparse.ArgumentParser().add_subparsers()
    register(subparsers)
    serve = subparsers.choices["serve"]
    argv: list[str] = []
    for action in serve._actions:  # argparse lists a parser's options nowhere else
        if not action.option_strings or action.dest in SERVE_OWN or not hasattr(args, action.dest):
            continue
        value = getattr(args, action.dest)
        if value == action.default:
            continue
        option = action.option_strings[-1]
        if action.nargs == 0:  # a flag (store_true)
            argv.append(option)
        elif isinstance(value, list):
            argv += [option, *map(str, value)]
        else:
            argv += [option, str(value)]
    return argv


def run_serve(args: argparse.Namespace) -> int:
    """Start the server and run until SIGINT/SIGTERM."""
    from server.storage import StorageError, open_storage

    level = logging.WARNING if args.quiet else logging.DEBUG if args.verbose else logging.INFO
    node = f"[{args.node}] " if args.cluster else ""  # the nodes of --workers share one terminal
    logging.basicConfig(level=level, format=f"%(asctime)s {node}%(levelname)s %(message)s")
    if not args.verbose:
        logging.getLogger("plyhall.websockets").setLevel(logging.WARNING)
    errors = serve_option_errors(args)
    if compiled.REFUSED:
        errors.append(compiled.REFUSED)
    for error in errors:
        print(f"plyhall serve: {error}", file=sys.stderr)
    if errors:
        return 2
    if args.workers > 1:
        from plyhall.workers import run_workers

        return run_workers(args, serve_argv(args))
    if args.cluster:  # fail before joining the cluster, not after (the others would take this node for dead)
        from server.io.cluster import preflight

        problem = preflight(args.cluster, args.host, args.port, args.reuse_port)
        if problem:
            print(f"plyhall serve: {problem}", file=sys.stderr)
            return 1
    try:
        storage = open_storage(args.db, args.node)
    except (OSError, StorageError) as exc:
        print(f"plyhall serve: {exc}", file=sys.stderr)
        return 1
    stopped: dict[str, bool] = {}
    code = event_loop.run(_serve(args, storage, stopped), args.event_loop)
    if stopped.get("stuck"):  # a database thread still waits: do not let the interpreter wait for it at exit
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


async def _serve(args: argparse.Namespace, storage: Any, stopped: dict[str, bool]) -> int:
    """Run the server until a signal; the exit code (1 when something could not be stored)."""
    from server.io.server import SHUTDOWN_SECONDS, PlyhallServer, RateLimit
    from server.storage import StorageError

    server = PlyhallServer(storage, args.host, args.port, limits=serve_limits(args),
                           room_defaults={"grace": args.grace, "illegal_move": args.illegal_move,
                                          "time_control": {"per_move": args.per_move}},
                           rate_limit=RateLimit(rate=args.rate_limit, burst=4 * args.rate_limit),
                           organiser_secret=args.organiser_secret, serving_gc=True, ladder=ladder_config(args),
                           house_bots=args.house_bots + len(ladder_config(args).anchors),
                           trusted_proxies=parse_networks(args.trusted_proxies),
                           analysis={"finished": args.analyse_finished, "workers": args.analysis_workers,
                                     "nodes": args.analysis_nodes, "per_requester": args.analysis_per_address},
                           cluster=args.cluster, reuse_port=args.reuse_port)
    server.api.http.quota = HttpQuota(args.http_rate)
    try:
        await server.start()
    except StorageError as exc:
        print(f"plyhall serve: {exc}", file=sys.stderr)
        storage.close()
        return 1
    except OSError as exc:
        print(f"plyhall serve: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        storage.close()
        return 1
    stop = _stop_on_signal()  # before the start line: whoever reads it may signal at once
    _say_started(args, server, storage)
    if os.environ.get("PLYHALL_WORKER_READY") == "1":  # a worker of --workers: its supervisor counts it as started
        from plyhall.workers import READY

        print(READY, file=sys.stderr, flush=True)
    waits = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(server.deposed_event.wait())]
    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    for wait in waits:
        wait.cancel()
    if server.deposed:  # another node owns this node's rooms: a process started again serves as their new owner
        await asyncio.sleep(DEPOSED_LINGER)  # /healthz says so meanwhile; the clients' close frames go out
        await server.stop()
        print(f"plyhall: stopped: this node was deposed ({server.deposed}); start it again to serve afresh",
              file=sys.stderr, flush=True)
        return DEPOSED_EXIT
    print(f"plyhall: shutting down within {SHUTDOWN_SECONDS:g} s (running games are kept and continue at the next "
          "start; a second Ctrl-C stops at once)", flush=True)
    await server.stop()
    stopped["stuck"] = server.stuck
    if server.unsaved:
        print(f"plyhall: stopped; the database refused {server.unsaved}", flush=True)
        return 1
    count = server.games_recorded
    print(f"plyhall: stopped; {count} game{'' if count == 1 else 's'} ended this run", flush=True)
    return 0


def _say_started(args: argparse.Namespace, server: Any, storage: Any) -> None:
    if server.replayed:
        print(f"plyhall: stored {server.replayed} that the last stop kept in {storage.spill_path}", flush=True)
    rooms, running = server.restored
    if rooms:
        print(f"plyhall: restored {rooms} room{'' if rooms == 1 else 's'}, {running} running "
              f"game{'' if running == 1 else 's'} (players have each room's grace to come back: {args.grace:g} s "
              "unless the room or its tournament set another)", flush=True)
    going = sorted(d.settings.name for d in server.hall.tournaments.values() if d.status in ("running", "paused"))
    if going and not args.organiser_secret:  # restarted without it: the events go on, and nobody can stop them
        print(f"plyhall: warning: tournament{'' if len(going) == 1 else 's'} {', '.join(going)} "
              f"go{'es' if len(going) == 1 else ''} on, but this server has no --organiser-secret: nobody can pause "
              f"or cancel {'it' if len(going) == 1 else 'them'} until it is started with one", flush=True)
    if compiled.LAST is not None and compiled.LAST not in compiled.UNSAID:  # the plain default, or as asked
        print(f"plyhall: {compiled.LAST}", flush=True)
    node = f"node {args.node} of cluster {cluster_shown(args.cluster)}, " if args.cluster else ""
    print(f"plyhall serving on ws://{args.host}:{server.port}/ws  (http://{args.host}:{server.port}/), {node}"
          f"database {getattr(storage, 'where', args.db)}, event loop {args.event_loop}; Ctrl-C stops", flush=True)


def _stop_on_signal() -> asyncio.Event:
    """An event set by SIGINT or SIGTERM; a second one exits at once (the operator does not want to wait)."""
    stop = asyncio.Event()

    def signalled() -> None:
        if stop.is_set():
            print("plyhall: stopping at once (second signal); writes not yet committed are lost", flush=True)
            os._exit(1)
        stop.set()

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, signalled)
    return stop
