"""``plyhall cosc322 entrant``: a course bot in a tournament, one fresh process per game, supervised.

Real COSC 322 bots play one game per process (many never reset their board), and some hang in their own search.
The entrant runner keeps such a bot from costing more than one game. It follows the tournament over the server's
read-only HTTP side (no login, so the name stays free for the bot): every ``--poll`` seconds it looks for a room of
the event holding a seat of the entrant (``/api/rooms``, a short answer), and now and then at the whole event
(``/api/tournaments/ID``, to see it end). Whenever the server opens a game of the entrant it starts the bot's
command fresh, in a process group of its own, with ``PLYHALL_URL``, ``PLYHALL_TOURNAMENT``, ``PLYHALL_NAME`` (the
entrant's name, whatever the bot's code calls itself) and ``PLYHALL_GAMES=1`` set: the course library logs in, is
seated in that game (the position and the opponent's last move included, when the game is under way) and plays it.
When the game ends — played to its end, lost on time by a bot that froze, or forfeited — the runner gives the bot a
moment to end by itself, then stops its whole process group. Between games nothing runs. Ctrl-C stops the bot's
process group too.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from protocol.messages import NAME_PATTERN
from protocol.wording import counted

from .connection import DEFAULT_URL, ServerURLError, check_url
from .tournament import http_base

POLL = 2.0
"""Seconds between two looks for the entrant's next game or the end of its game (the default of ``--poll``): thirty
runners on one machine then ask the server 15 times a second, below its limit for one address."""
EVENT_EVERY = 5
"""While it waits, the runner reads the whole tournament (to see it end) every this many looks."""
END_GRACE = 3.0
"""Seconds a bot has to end by itself after its game, before its process group is stopped."""
KILL_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL when the process group is stopped."""
RESTARTS = 2
"""Times a bot process that ended while its game runs is started again (it resumes its seat)."""
UNREACHABLE_LIMIT = 600.0
"""Seconds the runner keeps trying to reach a server that stopped answering (a restart) before it gives up."""
OVER = ("finished", "cancelled")


LOGIN_REFUSED = 4
"""The exit code of a course bot whose login the server refused for good (``Session.LOGIN_REFUSED_EXIT`` in the
Java library: a wrong password, a name it does not take): starting it again cannot help, so the runner stops."""


def _points(points: float) -> str:
    """``1 point``, ``2.5 points``."""
    return f"{points:g} point{'' if points == 1 else 's'}"


class EntrantError(Exception):
    """The runner cannot go on: the message says what was wrong and what would work, in one line for people."""


class Stopped(Exception):
    """The runner was asked to stop (Ctrl-C, SIGTERM)."""


@dataclass
class EntrantOptions:
    """What ``plyhall cosc322 entrant`` runs: ``command`` for each game of ``name`` in ``tournament``."""

    tournament: str
    name: str
    command: list[str]
    url: str = DEFAULT_URL
    secret: str | None = None
    poll: float = POLL
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))


def check_options(options: EntrantOptions) -> None:
    """EntrantError naming the first thing wrong with ``options`` and what is accepted."""
    if not options.tournament.strip():
        raise EntrantError("--tournament is empty: give the tournament's name or id (plyhall tournament list)")
    if not re.match(NAME_PATTERN, options.name) or options.name.lower().startswith("house-"):
        raise EntrantError(f"--name {options.name!r} is not an entrant's name: 1 to 32 letters (a-z, A-Z), digits, "
                           "_ . -, starting with a letter or digit (names starting with house- are the server's bots)")
    try:
        check_url(options.url)
    except ServerURLError as exc:
        raise EntrantError(f"--url: {exc}") from None
    if not 0.1 <= options.poll <= 60:
        raise EntrantError(f"--poll {options.poll:g}: give 0.1 to 60 seconds between two looks at the tournament")
    if not options.command:
        raise EntrantError("give the bot's command after --, e.g. plyhall cosc322 entrant --tournament class "
                           "--name alice -- java -cp plyhall-cosc322.jar:. ubc.cosc322.COSC322Test alice "
                           "alice-password")
    program = options.command[0]
    if shutil.which(program, path=options.env.get("PATH")) is None and not os.access(program, os.X_OK):
        raise EntrantError(f"cannot run the bot's command: {program} is not a program on PATH")


class Entrant:
    """Follows one entrant's tournament and runs its bot, fresh, for each of its games (see the module)."""

    def __init__(self, options: EntrantOptions, say: Callable[[str], None] | None = None) -> None:
        check_options(options)
        self.options = options
        self.say_line = say or (lambda line: print(line, flush=True))
        self.tournament = options.tournament
        self.played: list[tuple[str, str]] = []  # (room, result from the entrant's side)
        self.proc: subprocess.Popen[bytes] | None = None
        self._said = ""

    def say(self, text: str) -> None:
        """One progress line, prefixed with the entrant's name."""
        self.say_line(f"{self.options.name}: {text}")

    # ----- the server's HTTP side -----

    def _get(self, path: str) -> tuple[int, Any, float]:
        """Status, JSON body and Retry-After (seconds, 0 if none) of GET ``path``; OSError when no server answers."""
        try:
            with urllib.request.urlopen(http_base(self.options.url) + path, timeout=30) as resp:
                return resp.status, json.loads(resp.read()), 0.0
        except urllib.error.HTTPError as exc:
            try:
                body = json.loads(exc.read())
            except ValueError:
                body = {"error": exc.reason}
            try:
                retry = float(exc.headers.get("Retry-After") or body.get("retry_after") or 0)
            except (TypeError, ValueError):
                retry = 0.0
            return exc.code, body, retry

    def _fetch(self, path: str) -> Any | None:
        """The JSON answer to GET ``path`` (None for 404). Waits, saying so, while no server answers (up to
        :data:`UNREACHABLE_LIMIT`), and as long as the server asks when it is busy (429, 503)."""
        unreachable_since: float | None = None
        while True:
            try:
                status, body, retry = self._get(path)
            except OSError as exc:
                now = time.monotonic()
                unreachable_since = unreachable_since or now
                if now - unreachable_since > UNREACHABLE_LIMIT:
                    raise EntrantError(f"no server at {self.options.url} for {UNREACHABLE_LIMIT:g} s "
                                       f"({getattr(exc, 'reason', exc)}); giving up") from None
                self._status(f"no server at {self.options.url} ({getattr(exc, 'reason', exc)}); trying again")
                time.sleep(self.options.poll)
                continue
            unreachable_since = None
            if status == 200:
                return body
            if status == 404:
                return None
            if status in (429, 503):
                time.sleep(max(self.options.poll, min(retry, 60.0)))
                continue
            raise EntrantError(f"the server says: {body.get('error', status)}")

    def event(self, wait_for_creation: bool = False) -> dict[str, Any]:
        """The tournament in full; with ``wait_for_creation``, waits (saying so) until it exists."""
        while True:
            event = self._fetch(f"/api/tournaments/{quote(self.tournament)}?format=json")
            if event is not None:
                return event
            if not wait_for_creation:
                raise EntrantError(f"the server has no tournament {self.tournament} any more")
            self._status(f"waiting for the tournament {self.tournament} to be created")
            time.sleep(self.options.poll)

    def _rooms(self) -> list[dict[str, Any]]:
        """The server's open rooms of this tournament that hold a seat of this entrant (a light answer, where the
        tournament's own is long: the runner asks for it every ``--poll`` seconds)."""
        rooms = (self._fetch("/api/rooms?game=amazons") or {}).get("rooms") or []
        return [room for room in rooms if room.get("tournament") == self.tournament
                and self.options.name in (room.get("seats") or [])]

    def _status(self, text: str) -> None:
        """Say ``text`` unless it was the last thing said."""
        if text != self._said:
            self._said = text
            self.say(text)

    def check(self, event: dict[str, Any]) -> None:
        """EntrantError when this runner cannot play in ``event`` (another game; not an entrant)."""
        if event.get("game") != "amazons":
            raise EntrantError(f"the tournament {event['name']} plays {event.get('game')}: plyhall cosc322 entrant "
                               "runs COSC 322 Amazons bots")
        entrants = event.get("entrants") or []
        if self.options.name not in entrants:
            listed = ", ".join(entrants[:30]) + (" ..." if len(entrants) > 30 else "")
            raise EntrantError(f"{self.options.name} is not an entrant of the tournament {event['name']}; its "
                               f"entrants: {listed or 'none'}")

    # ----- the games -----

    def enter(self) -> dict[str, Any]:
        """The tournament, once it exists and this runner can play in it (else EntrantError)."""
        event = self.event(wait_for_creation=True)
        self.check(event)
        self.tournament = event["id"]
        return event

    def run(self, event: dict[str, Any]) -> int:
        """Play every game of the entrant, one process each, until the tournament is over; the exit code."""
        played: set[str] = set()
        polls = 0
        while True:
            room = next((r for r in self._rooms() if r.get("status") in ("waiting", "playing")
                         and r["name"] not in played), None)
            if room is not None:
                played.add(room["name"])
                self._play(room)
                event = self.event()
                continue
            if event["status"] in OVER:
                points = sum({"won": 1.0, "draw": 0.5}.get(result.split(" ")[0], 0.0) for _, result in self.played)
                rows = (event.get("standings") or {}).get("rows") or []
                row = next((r for r in rows if r.get("name") == self.options.name), None)
                standing = "" if row is None else (f"; in the standings: rank {row['rank']}, {_points(row['points'])} "
                                                   f"from {counted(row['games'], 'game')}")
                self.say(f"the tournament {event['name']} is {event['status']}: {counted(len(self.played), 'game')} "
                         f"here, {_points(points)}{standing} (plyhall tournament results {event['id']} --url "
                         f"{self.options.url})")
                return 0 if event["status"] == "finished" else 1
            progress = event.get("progress", {})
            self._status(f"waiting for its next game (tournament {event['name']} {event['status']}, "
                         f"{progress.get('done', 0)} of {progress.get('total', '?')} games played)")
            time.sleep(self.options.poll)
            polls += 1
            if polls % EVENT_EVERY == 0:
                event = self.event()

    def _play(self, room: dict[str, Any]) -> None:
        """Run the bot for the game of ``room`` (a room summary) until it is over, then stop what is left of the
        bot's process group, and say how the game ended."""
        name = room["name"]
        number = next((g["number"] for g in self.event().get("schedule") or [] if g.get("room") == name), None)
        game = f"game {number} in {name}" if number is not None else f"the game in {name}"
        first, second = room["seats"]  # seat 0 moves first: "black" in the course's terms
        colour = "black, moves first" if first == self.options.name else "white, moves second"
        self.say(f"{game}: {first} against {second} (it plays {colour} in the course's terms); starting "
                 f"{' '.join(self.options.command)}")
        starts = 1
        self.proc = self._start()
        while True:
            time.sleep(self.options.poll)
            now = next((r for r in self._rooms() if r["name"] == name), None)
            if now is None or now.get("status") not in ("waiting", "playing"):
                break
            code = self.proc.poll() if self.proc is not None else None
            if code == LOGIN_REFUSED:  # main() stops what is left of the process
                raise EntrantError(
                    f"{game}: the server refused the bot's login (exit code {code}; its own line above says why: "
                    "a wrong password in its command, or a name the server does not take). Starting it again "
                    "cannot help, so this runner stops: fix the bot's command and run it again (the game keeps "
                    "the seat for the tournament's grace, then is forfeited)")
            if code is not None and starts <= RESTARTS:
                starts += 1
                self.say(f"the bot's process ended (exit code {code}) while its game runs; starting it again "
                         "(it resumes its seat)")
                self.proc = self._start()
            elif code is not None and self.proc is not None:
                self.say(f"the bot's process ended (exit code {code}) again; the game goes on without it (its "
                         "clock runs)")
                self.proc = None
        how = self.stop()
        entry = next((g for g in self.event().get("schedule") or [] if g["number"] == number), {})
        result = self._result(entry)
        self.played.append((name, result))
        self.say(f"{game}: {result}; {how}")

    def _start(self) -> subprocess.Popen[bytes]:
        """The bot's command, fresh, in a process group of its own, with the settings the course library reads."""
        env = {key: value for key, value in self.options.env.items() if key not in ("PLYHALL_ROOM", "PLYHALL_SEEK")}
        env.update({"PLYHALL_URL": self.options.url, "PLYHALL_TOURNAMENT": self.tournament,
                    "PLYHALL_NAME": self.options.name, "PLYHALL_GAMES": "1"})
        if self.options.secret:
            env["PLYHALL_SECRET"] = self.options.secret
        try:
            if os.name == "nt":
                return subprocess.Popen(self.options.command, env=env,
                                        creationflags=subprocess.CREATE_NEW_PROCESS_GROUP)  # type: ignore[attr-defined]
            return subprocess.Popen(self.options.command, env=env, start_new_session=True)
        except OSError as exc:
            raise EntrantError(f"cannot run the bot's command {self.options.command[0]}: {exc.strerror or exc}") \
                from None

    def stop(self) -> str:
        """Stop the bot's process group (after :data:`END_GRACE` seconds for it to end by itself): what happened."""
        proc, self.proc = self.proc, None
        if proc is None:
            return "no bot process was left"
        try:
            code = proc.wait(END_GRACE)
            how = f"the bot's process ended by itself (exit code {code})"
        except subprocess.TimeoutExpired:
            how = f"the bot's process (pid {proc.pid}) was stopped"
        _signal_group(proc, signal.SIGTERM)
        try:
            proc.wait(KILL_GRACE)
        except subprocess.TimeoutExpired:
            pass
        _signal_group(proc, signal.SIGKILL if os.name != "nt" else signal.SIGTERM)
        proc.wait()
        return how

    def _result(self, entry: dict[str, Any]) -> str:
        """The game's result from the entrant's side, with the server's reason: ``won (seat 1 ran out of time)``."""
        result = entry.get("result")
        if entry.get("status") not in ("finished", "forfeit") or result is None:
            return f"not played ({entry.get('status')})"
        seat = 0 if entry.get("white") == self.options.name else 1
        words = "draw" if result == "1/2-1/2" else "won" if (result == "1-0") == (seat == 0) else "lost"
        if entry.get("status") == "forfeit":
            words += " by forfeit"
        reason = None
        if entry.get("record"):
            try:
                status, record, _ = self._get(f"/api/games/{quote(entry['record'])}")
                reason = record.get("reason") if status == 200 else None
            except OSError:
                pass
        return f"{words} ({reason})" if reason else words


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    """Send ``sig`` to the process group of ``proc`` (to the process alone where there are no groups)."""
    try:
        if os.name == "nt":
            proc.send_signal(sig)
        else:
            os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError, OSError):
        pass  # the whole group has ended already


def _stop_on_sigterm(signum: int, frame: Any) -> None:
    raise Stopped()


def run_entrant(args: argparse.Namespace) -> int:
    """``plyhall cosc322 entrant``: exit 0 after a finished tournament, 1 after a cancelled one or a lost server,
    2 for a mistake in the command, 130 when stopped (the bot's process group is stopped with it)."""
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    options = EntrantOptions(args.tournament, args.name, command, args.url, args.secret, args.poll)
    previous = signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        entrant = Entrant(options)
        event = entrant.enter()
    except EntrantError as exc:
        print(f"plyhall cosc322 entrant: {exc}", file=sys.stderr)
        signal.signal(signal.SIGTERM, previous)
        return 2
    except (KeyboardInterrupt, Stopped):
        signal.signal(signal.SIGTERM, previous)
        return 130
    try:
        return entrant.run(event)
    except EntrantError as exc:
        entrant.stop()
        print(f"plyhall cosc322 entrant: {exc}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, Stopped):
        how = entrant.stop()
        print(f"plyhall cosc322 entrant: stopped; {how}. The tournament goes on on the server: a game of "
              f"{options.name} that opens while no runner is there is forfeited after its grace", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)
