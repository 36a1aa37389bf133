"""``plyhall tournament``: run a tournament on a server, as its organiser.

Every subcommand talks to a running server over the WebSocket, logged in with the server's
organiser secret (``plyhall serve --organiser-secret``; here ``--secret`` or
``$PLYHALL_ORGANISER_SECRET``). ``create`` defines an event (from flags, a TOML file, or
both), ``start``/``pause``/``resume``/``cancel`` steer it, ``status`` and ``results`` read it,
and ``run`` does it all: create, start, follow the games and print the results at the end.
Entrants are names of bots that connect with ``plyhall bot --tournament NAME`` (or the SDK's
``tournament=``); ``--local master,minimax-4`` adds the server's own house bots.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import sys
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from protocol.errors import ErrorCode
from protocol.statistics import format_duration

from .connection import DEFAULT_URL, Client, ServerError, ServerURLError, check_url, describe_connect_error
from .tournament_definition import (  # noqa: F401 - the definition, as this module has always offered it
    FORMATS,
    SETTINGS,
    TournamentCliError,
    definition,
    parse_sprt,
    parse_time_control,
)


def http_base(url: str) -> str:
    """The HTTP address of the server whose WebSocket address is ``url``, without a trailing slash: the folder of its
    ``/ws`` endpoint, so that a server a proxy serves under a path prefix keeps it (``wss://example.org/plyhall/ws``
    -> ``https://example.org/plyhall``; ``ws://127.0.0.1:8765/ws`` -> ``http://127.0.0.1:8765``); the host's root for
    an address whose path is not a ``/ws``."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    folder = path[:-len("/ws")] if path.endswith("/ws") else ""
    return urlunsplit(("https" if parts.scheme == "wss" else "http", parts.netloc, folder, "", ""))


def fetch(url: str, path: str) -> str:
    """GET ``path`` from the server's HTTP side; TournamentCliError with the server's reason on failure."""
    try:
        with urllib.request.urlopen(http_base(url) + path, timeout=30) as resp:
            return resp.read().decode()
    except urllib.error.HTTPError as exc:
        try:
            reason = json.loads(exc.read()).get("error", exc.reason)
        except ValueError:
            reason = exc.reason
        raise TournamentCliError(str(reason), exc.code) from None
    except OSError as exc:  # no server there: exit 1, as a bot that cannot reach it (2 is for bad arguments)
        reason = getattr(exc, "reason", exc)
        raise ConnectionError(describe_connect_error(url, reason if isinstance(reason, BaseException) else exc,
                                                     False)[0]) from None


def describe_progress(event: dict[str, Any]) -> str:
    """One line: games done of all (and how many were forfeited), time left, and the leader."""
    progress = event["progress"]
    line = f"{event['name']}: {progress['done']}/{progress['total']} games"
    forfeits = sum(game["status"] == "forfeit" for game in event.get("schedule") or [])
    if forfeits:
        line += f" ({forfeits} forfeited)"
    left = progress.get("seconds_left")
    if left is not None and event["status"] == "running" and progress["done"] < progress["total"]:
        line += ", under a minute left" if left < 60 else f", about {format_duration(left)} left"
    rows = event.get("standings", {}).get("rows") or []
    if rows and progress["done"]:
        line += f"; leader {rows[0]['name']} {rows[0]['points']:g}"
    if event.get("sprt"):
        test = event["sprt"]
        line += f"; SPRT llr {test['llr']:.2f} ({test['lower_bound']:.2f}, {test['upper_bound']:.2f})"
    return line


def new_forfeits(event: dict[str, Any], reported: set[int]) -> list[str]:
    """A line for each forfeited game of ``event`` not in ``reported`` (which it joins): who forfeited and why."""
    lines = []
    for game in event.get("schedule") or []:
        if game["status"] == "forfeit" and game["number"] not in reported:
            reported.add(game["number"])
            lines.append(f"forfeit: game {game['number']} (round {game['round']}) {game['white']} {game['result']} "
                         f"{game['black']}: {game.get('reason') or 'no reason recorded'}")
    return lines


async def _organiser(args: argparse.Namespace) -> Client:
    """A connection logged in as the organiser; ``follow``, which only watches, needs no secret (a watcher's login
    without one)."""
    secret = args.secret or os.environ.get("PLYHALL_ORGANISER_SECRET")
    if not secret and args.command != "follow":
        raise TournamentCliError("give the server's organiser secret: --secret, or $PLYHALL_ORGANISER_SECRET "
                                 "(the one plyhall serve --organiser-secret was started with)")
    client = Client(args.url)
    try:
        await client.connect()
    except OSError as exc:
        raise ConnectionError(describe_connect_error(args.url, exc, False)[0]) from None
    if secret:
        await client.login(f"organiser-{os.getpid()}", organiser=secret)
    else:
        await client.login(f"follower-{os.getpid()}")
    return client


READ_ONLY = ("results", "status", "list")  # what /api/tournaments answers to anybody: no organiser secret


def command(args: argparse.Namespace, action: str, *words: str) -> str:
    """The ``plyhall tournament ACTION WORDS`` command line that reaches the same server (``--url`` when not the
    default), to suggest."""
    return " ".join(("plyhall tournament", action, *words, *(("--url", args.url) if args.url != DEFAULT_URL else ())))


def fetch_event(args: argparse.Namespace, query: str = "") -> str:
    """GET the tournament ``args.tournament`` names; TournamentCliError saying how to list them when there is none."""
    try:
        return fetch(args.url, f"/api/tournaments/{quote(args.tournament)}{query}")
    except TournamentCliError as exc:
        if exc.status != 404:
            raise
        raise TournamentCliError(f"no tournament {args.tournament[:40]!r} on {args.url}; "
                                 f"`{command(args, 'list')}` lists them") from None


NEXT_STEP = {"created": ("start it first", "start"), "paused": ("to go on", "resume"),
             "running": ("its progress", "status"), "finished": ("its results", "results"),
             "cancelled": ("its results", "results")}
"""What to do instead, by the event's status, when the server refused to start, pause or resume it then."""


def control_hint(args: argparse.Namespace) -> str | None:
    """What to do after the server refused ``args.command`` on the event, from its status now (None when there is
    nothing better to say, or the server cannot tell)."""
    try:
        event = json.loads(fetch_event(args))
    except (TournamentCliError, ConnectionError, ValueError):
        return None
    words, action = NEXT_STEP.get(event.get("status"), (None, None))
    if words is None or action == args.command:
        return None
    return f"{words}: {command(args, action, event['id'])}"


def _report(args: argparse.Namespace) -> int:
    """A read-only action, from the server's HTTP side."""
    if args.command == "results":
        form = "csv" if args.csv else "json" if args.json else "text"
        text = fetch_event(args, f"?format={form}")
        print(text, end="" if text.endswith("\n") else "\n")
        return 0
    if args.command == "list":
        events = json.loads(fetch(args.url, "/api/tournaments"))["tournaments"]
        if not events:
            print(f"no tournaments on {args.url} yet (plyhall tournament create makes one)", file=sys.stderr)
        for event in events:
            print(f"{event['id']:24} {event['game']:14} {event['format']:19} {event['status']:10} "
                  f"{event['progress']['done']}/{event['progress']['total']} games")
        return 0
    event = json.loads(fetch_event(args))
    print(describe_progress(event) + f" ({event['status']})")
    for room in event.get("running", []):  # a room waits while an entrant has not come (or come back) yet
        state = "playing" if room.get("status") == "playing" else "waiting for its players"
        print(f"  {state}: {room['name']}: {room['seats'][0]} - {room['seats'][1]}")
    for line in new_forfeits(event, set()):
        print(f"  {line}")
    return 0


async def _run(args: argparse.Namespace) -> int:
    if args.command in READ_ONLY:
        return await asyncio.to_thread(_report, args)
    # the definition is checked before the secret is asked for: a mistake in it is said first, and without a server
    request = definition(args) if args.command in ("create", "run") else {}
    client = await _organiser(args)
    try:
        if args.command in ("create", "run"):
            request["start"] = args.command == "run" or args.start
            event = (await client.request(request, timeout=60))["tournament"]
            print(f"tournament {event['name']} (id {event['id']}): {event['game']} {event['format']}, "
                  f"{len(event['entrants'])} entrants, {event['progress']['total']} games, {event['status']}",
                  flush=True)
            if args.command == "create":
                players = [e for e in event["entrants"] if not e.startswith("house-")]
                if players:
                    print(f"entrants connect with: plyhall bot --game {event['game']} --name NAME "
                          f"--tournament {event['id']} --url {args.url}", flush=True)
                return 0
            return await _follow(client, args, event["id"])
        if args.command == "follow":
            event = (await client.request({"type": "watch_tournament", "tournament": args.tournament}))["tournament"]
            print(f"following tournament {event['name']} (id {event['id']}): {event['status']}", flush=True)
            return await _follow(client, args, event["id"])
        try:
            event = (await client.request({"type": "tournament_control", "tournament": args.tournament,
                                           "action": args.command}))["tournament"]  # start, pause, resume, cancel
        except ServerError as exc:
            hint = await asyncio.to_thread(control_hint, args) if exc.code == ErrorCode.BAD_OPTION else None
            if hint:
                exc.message = f"{exc.message}; {hint}"
            raise
        print(f"tournament {event['name']}: {event['status']}")
        return 0
    finally:
        await client.close()


RECONNECT_TRIES = 60  # tries (1 s, 2 s, ... then every 10 s: about ten minutes) to reach a restarting server


async def _follow(client: Client, args: argparse.Namespace, tournament: str) -> int:
    """Print progress as games finish; the results when the event ends. A server that restarts (the event goes on
    where it was) is reconnected to."""
    shown = -1
    forfeits: set[int] = set()  # the forfeited games already reported
    while True:
        try:
            event = (await client.request({"type": "watch_tournament", "tournament": tournament}))["tournament"]
            while event["status"] not in ("finished", "cancelled"):
                for line in new_forfeits(event, forfeits):
                    print(line, flush=True)
                if event["progress"]["done"] != shown:
                    shown = event["progress"]["done"]
                    print(describe_progress(event), flush=True)
                msg = await client.recv(timeout=None)
                if msg.get("type") == "tournament" and msg["tournament"]["id"] == tournament:
                    event = msg["tournament"]
            break
        except ConnectionError as exc:
            await client.close()
            client = await _reconnect(args, exc)
    for line in new_forfeits(event, forfeits):
        print(line, flush=True)
    print(describe_progress(event) + f" ({event['status']}"
          + (f": {event['stopped_early']}" if event.get("stopped_early") else "") + ")", flush=True)
    await client.close()
    text = await asyncio.to_thread(fetch, args.url, f"/api/tournaments/{quote(tournament)}?format=text")
    print()
    print(text, end="")
    return 0 if event["status"] == "finished" else 1


async def _reconnect(args: argparse.Namespace, why: BaseException) -> Client:
    """Log in again as the organiser after the connection was lost, trying for a while (a restarting server)."""
    print(f"lost the connection to the server ({why or 'closed'}); reconnecting (the tournament goes on on the "
          "server)", flush=True)
    for attempt in range(RECONNECT_TRIES):
        await asyncio.sleep(min(10.0, 2.0 ** attempt / 2))
        try:
            client = await _organiser(args)
        except (TournamentCliError, ServerError, ConnectionError, OSError, TimeoutError):
            continue
        print("reconnected", flush=True)
        return client
    raise ConnectionError(f"could not reach the server at {args.url} again after {RECONNECT_TRIES} tries")


def run_tournament(args: argparse.Namespace) -> int:
    """Run one ``plyhall tournament`` action."""
    try:
        check_url(args.url)
        return asyncio.run(_run(args))
    except (TournamentCliError, ServerURLError) as exc:
        print(f"plyhall tournament: {exc}", file=sys.stderr)
        return 2
    except ServerError as exc:
        print(f"plyhall tournament: the server refused: {exc.message}", file=sys.stderr)
        return 1
    except ConnectionError as exc:
        print(f"plyhall tournament: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        again = ""
        if args.command in ("run", "follow"):
            key = getattr(args, "tournament", None) or getattr(args, "name", None)
            url = f" --url {shlex.quote(args.url)}" if args.url != DEFAULT_URL else ""
            again = f"; plyhall tournament follow {shlex.quote(key)}{url} follows it again" if key else ""
        print(f"interrupted (the tournament goes on on the server{again})", file=sys.stderr)
        return 130
