"""A tournament's definition, as ``plyhall tournament create`` and ``run`` take it: from flags, a TOML file, or
both (the flags win), each value checked and said in one line when it is not what is accepted, before anything is
sent to the server."""

from __future__ import annotations

import argparse
import math
import re
import tomllib
from pathlib import Path
from typing import Any

from protocol.games import GAMES
from protocol.statistics import SPRT_MODELS

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
