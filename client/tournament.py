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
import math
import os
import re
import shlex
import sys
import tomllib
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from protocol.errors import ErrorCode
from protocol.games import GAMES
from protocol.statistics import SPRT_MODELS, format_duration

from .connection import DEFAULT_URL, Client, ServerError, ServerURLError, check_url, describe_connect_error
from .text_files import read_text

FORMATS = ("round-robin", "double-round-robin", "gauntlet", "swiss")
SETTINGS = ("name", "game", "format", "players", "local", "games_per_pairing", "cycles", "rounds", "time_control",
            "time_margin", "concurrency", "openings", "plies", "illegal_move", "grace", "sprt", "options")
"""The keys of a tournament TOML file (the ``create`` flags, with underscores)."""


class TournamentCliError(Exception):
    """A mistake in the command's input: the message says what was wrong and what is accepted; ``status`` is the
    HTTP status of the server's answer that said so, if one did."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def parse_time_control(text: str) -> dict[str, Any]:
    """``30`` or ``30s`` (per move), ``5m+2s`` or ``300+2`` (game clock plus increment), ``untimed``."""
    text = text.strip().lower()
    if text == "untimed":
        return {"untimed": True}
    seconds = r"(\d+(?:\.\d+)?)(s|m)?"
    match = re.fullmatch(seconds, text)
    if match:
        return {"per_move": _seconds(match)}
    match = re.fullmatch(seconds + r"\+" + seconds, text)
    if match:
        initial = _seconds(match, 1)
        increment = float(match.group(3)) * (60 if match.group(4) == "m" else 1)
        return {"initial": initial, "increment": increment}
    raise TournamentCliError(f"time control {text!r}: use 30 (seconds per move), 5m+2s or 300+2 (a game clock "
                             "plus an increment), or untimed")


def _seconds(match: re.Match[str], group: int = 1) -> float:
    return float(match.group(group)) * (60 if match.group(group + 1) == "m" else 1)


def parse_sprt(text: str) -> dict[str, float | str]:
    """``elo0=0,elo1=20,alpha=0.05,beta=0.05,model=normalized`` (alpha, beta and model may be left out; the model
    is one of ``protocol.statistics.SPRT_MODELS``, ``normalized`` by default)."""
    values: dict[str, float | str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, _, value = (piece.strip() for piece in part.partition("="))
        if key == "model":
            if value not in SPRT_MODELS:
                raise TournamentCliError(f"--sprt: model must be one of {', '.join(SPRT_MODELS)}, not {value[:40]!r}")
            values[key] = value
            continue
        if key not in ("elo0", "elo1", "alpha", "beta"):
            raise TournamentCliError(f"--sprt: unknown parameter {key[:40]!r}; use elo0=E,elo1=E,alpha=P,beta=P,"
                                     f"model=M (M: {', '.join(SPRT_MODELS)})")
        values[key] = _sprt_number(key, value)
    return _sprt_complete(values)


def _sprt_number(key: str, value: Any) -> float:
    """An SPRT parameter: a finite number (NaN or infinity would leave the test nothing to decide)."""
    try:
        number = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number):
        raise TournamentCliError(f"--sprt: {key} must be a finite number, not {str(value)[:40]!r}")
    return number


def _sprt_complete(values: dict[str, Any]) -> dict[str, Any]:
    if not {"elo0", "elo1"} <= set(values):
        raise TournamentCliError("--sprt needs elo0 and elo1, e.g. --sprt elo0=0,elo1=20,alpha=0.05,beta=0.05")
    return values


def _sprt_table(table: dict[str, Any]) -> dict[str, Any]:
    """An SPRT written as a TOML table: its numbers checked as on the command line (the server says the rest)."""
    return _sprt_complete({key: value if key not in ("elo0", "elo1", "alpha", "beta") else _sprt_number(key, value)
                           for key, value in table.items()})


def _names(value: Any, what: str) -> list[str]:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise TournamentCliError(f"{what} is a comma-separated list of names, or a TOML list of strings")


def definition(args: argparse.Namespace) -> dict[str, Any]:
    """The ``tournament_create`` request from a TOML file (``--file``) and the flags (which win)."""
    settings, base = _read_definition(Path(args.file)) if args.file else ({}, Path.cwd())
    for key in SETTINGS:
        value = getattr(args, key, None)
        if value is not None:
            settings[key] = value
    settings = {key: _setting(key, value) for key, value in settings.items()}
    for key in ("game", "format"):
        if key not in settings:
            raise TournamentCliError(f"a tournament needs --{key} (or {key} = ... in the TOML file)")
    if settings["format"] == "swiss" and "rounds" not in settings:
        raise TournamentCliError("a swiss tournament needs its number of rounds: --rounds N (or rounds = N in the "
                                 "TOML file)")
    request: dict[str, Any] = {"type": "tournament_create", "game": settings["game"], "format": settings["format"]}
    if settings["game"] not in GAMES:
        raise TournamentCliError(f"unknown game {settings['game']!r}; games: {', '.join(GAMES)}")
    for key in ("name", "games_per_pairing", "cycles", "rounds", "concurrency", "illegal_move", "grace", "options"):
        if key in settings:
            request[key] = settings[key]
    request["players"] = _names(settings.get("players", []), "players")
    request["local"] = _names(settings.get("local", []), "local")
    if not request["players"] and not request["local"]:
        raise TournamentCliError("a tournament needs entrants: --players a,b,c (bots that connect with plyhall bot "
                                 "--tournament NAME) and/or --local master,minimax-4 (the server's house bots)")
    request.update(_clock_and_test(settings))
    if settings.get("openings"):
        request["openings"] = _openings(base / settings["openings"], settings.get("plies"))
    elif settings.get("plies") is not None:
        raise TournamentCliError("--plies says how many plies of each opening to play: it needs --openings FILE "
                                 "(or openings = \"FILE\" in the TOML file)")
    return request


def _clock_and_test(settings: dict[str, Any]) -> dict[str, Any]:
    """The request's ``time_control`` (with the margin, which goes with the clock: the server's when none is given)
    and ``sprt``, as far as the settings give them."""
    request = {key: settings[key] for key in ("time_control", "sprt") if settings.get(key) is not None}
    if settings.get("time_margin") is not None:
        request["time_control"] = {**request.get("time_control", {}), "margin": settings["time_margin"] / 1000}
    return request


def _read_definition(path: Path) -> tuple[dict[str, Any], Path]:
    """The settings of a tournament TOML file, and the folder its relative paths (the openings) start from."""
    try:
        text = read_text(path)
    except ValueError as exc:
        raise TournamentCliError(str(exc)) from None
    try:
        settings = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TournamentCliError(f"{path} is not valid TOML: {exc}") from None
    unknown = sorted(set(settings) - set(SETTINGS))
    if unknown:
        raise TournamentCliError(f"{path}: unknown key(s) {', '.join(unknown)}; keys: {', '.join(SETTINGS)}")
    return settings, path.parent


def _openings(path: Path, plies: int | None) -> dict[str, Any]:
    """The request's ``openings``: the file's text (the server checks it), its name, and the plies to play of each."""
    try:
        text = read_text(path, "the openings file")
    except ValueError as exc:
        raise TournamentCliError(str(exc)) from None
    openings: dict[str, Any] = {"text": text, "source": path.name}
    if plies is not None:
        openings["plies"] = plies
    return openings


WHOLE_NUMBERS = ("games_per_pairing", "cycles", "rounds", "concurrency", "plies")
TEXTS = ("name", "game", "format", "illegal_move", "openings")
PARSED: dict[str, tuple[Any, str]] = {
    "time_control": (parse_time_control,
                     '30 (seconds a move), "5m+2s", "untimed" or a table such as { per_move = 30 }'),
    "sprt": (parse_sprt, '"elo0=0,elo1=20" or a table such as { elo0 = 0, elo1 = 20 }'),
}


def _setting(key: str, value: Any) -> Any:
    """One setting in the form the request wants, from a flag or a TOML value: a TOML file may write a number as
    a number or as a string (``rounds = 3`` or ``rounds = "3"``), a time control as on the command line
    (``time_control = 5``, ``"5m+2s"``) or as a table; TournamentCliError says what is accepted otherwise."""
    if key in WHOLE_NUMBERS:
        return _whole_number(key, value)
    if key == "grace":
        return _grace(value)
    if key == "time_margin":
        return _time_margin(value)
    if key in PARSED:
        return _parsed(key, value)
    if key in ("players", "local"):
        return _names(value, key)
    if key in TEXTS and not isinstance(value, str):
        raise TournamentCliError(f"{key} must be text (e.g. {key} = \"...\"), not {value!r}")
    if key == "options" and not isinstance(value, dict):
        raise TournamentCliError(f"options is a table of game options (e.g. options = {{ first = 1 }}), not {value!r}")
    return value


def _whole_number(key: str, value: Any, example: int = 3) -> int:
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit() and value.strip().isascii():
        return int(value)  # a sign too: "-1" is then said to be out of its range, not not a number
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise TournamentCliError(f"{key} must be a whole number (e.g. {key} = {example}), not {value!r}")


MAX_TIME_MARGIN_MS = 60_000


def _time_margin(value: Any) -> int:
    """Milliseconds, a whole number from 0 to MAX_TIME_MARGIN_MS."""
    margin = _whole_number("time_margin", value, 3000)  # (milliseconds: 3 would be 3 ms)
    if not 0 <= margin <= MAX_TIME_MARGIN_MS:
        raise TournamentCliError(f"time_margin is whole milliseconds from 0 to {MAX_TIME_MARGIN_MS} (e.g. "
                                 f"--time-margin 3000), not {value!r}")
    return margin


def _grace(value: Any) -> float:
    try:
        if not isinstance(value, bool) and math.isfinite(grace := float(value)):
            return grace
    except (TypeError, ValueError):
        pass
    raise TournamentCliError(f"grace must be a number of seconds (e.g. grace = 60), not {value!r}")


def _parsed(key: str, value: Any) -> Any:
    """A setting written as text on the command line (``PARSED``), or as a TOML table already in request form."""
    parse, accepted = PARSED[key]
    if key == "time_control" and isinstance(value, (int, float)) and not isinstance(value, bool):
        value = f"{value:g}"  # seconds a move, as on the command line
    if isinstance(value, str):
        return parse(value)
    if isinstance(value, dict):
        return _sprt_table(value) if key == "sprt" else value
    raise TournamentCliError(f"{key} is {accepted}, not {value!r}")


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
    except OSError as exc:
        reason = getattr(exc, "reason", exc)
        raise TournamentCliError(describe_connect_error(url, reason if isinstance(reason, BaseException) else exc,
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
    secret = args.secret or os.environ.get("PLYHALL_ORGANISER_SECRET")
    if not secret:
        raise TournamentCliError("give the server's organiser secret: --secret, or $PLYHALL_ORGANISER_SECRET "
                                 "(the one plyhall serve --organiser-secret was started with)")
    client = Client(args.url)
    try:
        await client.connect()
    except OSError as exc:
        raise TournamentCliError(describe_connect_error(args.url, exc, False)[0]) from None
    await client.login(f"organiser-{os.getpid()}", organiser=secret)
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
    except (TournamentCliError, ValueError):
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
