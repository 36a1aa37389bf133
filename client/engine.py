"""Engines in any language: ``plyhall bot --engine CMD`` plays with a program that reads positions on its
standard input and prints moves on its standard output.

docs/ENGINE-PROTOCOL.md is the reference for engine authors. In short, the driver starts the program
once, says ``plyhall 1``, and waits for ``ready`` (the engine names itself, may choose a coordinate
convention and ask for the legal moves); then, for each turn, it sends a ``position`` block (the board's
picture, the state in the engine's coordinates, the moves from the start, the clock) ending in ``go``,
and reads ``info`` lines until ``move …``. A move that breaks the rules is answered with
``illegal REASON`` and a new ``go``; after each game the engine is told ``result …``.

:class:`EnginePlayer` is a :class:`~client.player.Player`, so the SDK's play loop does everything else
(login, seeking, rooms, tournaments, reconnection). It thinks in a thread: the engine is a process of
its own already. An engine that crashes is restarted once in a game, and the game is resigned if it
crashes again; an engine that does not answer before its clock runs out loses on time like any player
(it is restarted for the next game); an engine that will not start stops the bot with a clear error.

The driver is bounded whatever the engine writes (docs/ENGINE-PROTOCOL.md, "Limits"): a stdout line over
:data:`MAX_LINE` resigns the game and is never held whole, stderr and ``info`` lines are cut and rate-limited
(:class:`Relay`), the deadline holds during any flood, and an engine that exits is a crash even while a child
keeps its pipe open. Each engine runs in a process group of its own, killed whole when the driver is done with
it (:func:`end_group`), and by the :data:`WATCHDOG` process if the bot ends any other way, SIGKILL included.
"""

from __future__ import annotations

import collections
import json
import os
import queue
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from protocol.games import IllegalMove, get_game
from protocol.games.base import check_coords

from .player import GameResult, NoMove, Player, Resign, Turn

PROTOCOL_VERSION = 1
START_TIMEOUT = 60.0
"""Seconds an engine has to say ``ready`` after it is started (loading a book, compiling, warming up)."""
GRACE = 2.0
"""Seconds past the end of its clock the driver waits for a move before it treats the engine as hung."""
MAX_ILLEGAL = 3
"""Illegal moves in a row in one turn after which the game is resigned."""
MAX_CRASHED_GAMES = 3
"""Games in a row resigned because the engine crashed twice, after which the bot stops with an error."""
STOP_WAIT = 2.0
"""Seconds an engine has to exit after ``quit`` before it is killed."""
STDERR_TAIL = 8
"""Lines of the engine's stderr quoted when it fails."""
MAX_LINE = 1 << 20
"""Bytes a line of the engine's standard output may hold (1 MiB, newline excluded): a longer line ends the
engine's game (it is resigned, the engine restarted for the next one), and is never held in memory whole."""
QUEUED_LINES = 64
"""Lines of the engine's output read ahead of the driver at most; past them the engine waits to write."""
RELAY_CHARS = 500
"""Characters of one engine line (stderr, ``info``) the bot's log shows; the rest of the line is dropped."""
RELAY_RATE = 20.0
"""Engine lines a second (stderr, ``info``, ignored lines) the bot's log shows, after a burst of
:data:`RELAY_BURST`; the others are counted, and the count shown."""
RELAY_BURST = 50
"""Engine lines the bot's log shows at once before :data:`RELAY_RATE` applies."""
POLL = 0.1
"""Seconds between two looks at whether the engine's process is still alive while the driver waits for a line."""
READ_SIZE = 1 << 16


class EngineError(Exception):
    """The engine cannot be used: it does not start, breaks the handshake or dies before it is ready."""


class EngineCrashed(EngineError):
    """The engine's process ended (or closed its output) while the driver waited for it."""


class EngineTimeout(EngineError):
    """The engine did not answer in time."""


class EngineLineTooLong(EngineError):
    """The engine wrote a line longer than :data:`MAX_LINE` bytes on its standard output."""


def split_command(command: str | Sequence[str]) -> list[str]:
    """The engine's command as a list (a string is split as a shell would, without running a shell), its
    program checked: ``ValueError`` saying what was not found."""
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    if not argv:
        raise ValueError("the engine command is empty: give the program to run, e.g. --engine ./my-engine")
    program = argv[0]
    if os.sep in program or (os.altsep and os.altsep in program):
        if not os.path.isfile(program):
            raise ValueError(f"the engine program {program!r} does not exist")
        if not os.access(program, os.X_OK):
            raise ValueError(f"the engine program {program!r} is not executable (chmod +x it)")
    elif shutil.which(program) is None:
        raise ValueError(f"the engine program {program!r} is not on PATH (give its path, e.g. ./{program})")
    return argv


# Process groups and the watchdog ----------------------------------------------------------------------------

_WATCHDOG = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
groups = set()
for line in sys.stdin:
    (groups.add if line[:1] == "+" else groups.discard)(int(line[1:]))
for group in groups:
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
"""


class Watchdog:
    """A small process that outlives the bot by a moment: it keeps the process groups of the programs the bot
    started (engines, Kaggle agents) and kills them all when the bot's end of its pipe closes, however the bot
    ended (an exception, Ctrl-C, SIGTERM, SIGHUP, or SIGKILL, which no handler sees). It runs in a session of its
    own, so a Ctrl-C at the terminal or a signal to the bot's process group does not stop it first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None

    def _pipe(self) -> Any:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen([sys.executable, "-I", "-c", _WATCHDOG], stdin=subprocess.PIPE,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                          start_new_session=True)
        return self._proc.stdin

    def _say(self, line: str) -> None:
        with self._lock:
            try:
                pipe = self._pipe()
                pipe.write(line.encode("ascii"))
                pipe.flush()
            except OSError:  # the watchdog is gone: the groups are still killed when each program is stopped
                self._proc = None

    def watch(self, group: int) -> None:
        """Kill process group ``group`` if the bot ends before :meth:`forget` is called for it."""
        self._say(f"+{group}\n")

    def forget(self, group: int) -> None:
        """Group ``group`` is gone (killed by :func:`end_group`)."""
        self._say(f"-{group}\n")

    @property
    def pid(self) -> int | None:
        """The watchdog's process id, once it runs."""
        return self._proc.pid if self._proc is not None else None


WATCHDOG = Watchdog()
"""The bot process's one watchdog (started with the first program it watches)."""


def start_in_group(argv: list[str], **popen: Any) -> subprocess.Popen[bytes]:
    """Start ``argv`` with pipes as ``popen`` says, in a process group (a session) of its own that the
    :data:`WATCHDOG` kills if the bot ends; :func:`end_group` kills the group when the program is done with."""
    proc = subprocess.Popen(argv, start_new_session=True, **popen)
    WATCHDOG.watch(proc.pid)
    return proc


def end_group(proc: subprocess.Popen[Any]) -> None:
    """Kill ``proc`` and every process left in its process group (the children an engine or an agent started,
    even when ``proc`` itself has exited), and reap ``proc``."""
    if proc.poll() is None:
        proc.kill()
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:  # nobody left in the group
        pass
    proc.wait()
    WATCHDOG.forget(proc.pid)


class Relay:
    """Passes an engine's lines to the bot's log (``say``), each cut to :data:`RELAY_CHARS` characters, at most
    ``rate`` a second after a burst of ``burst``; lines over the rate are counted and the count is shown with
    the next line passed (or by :meth:`flush`)."""

    def __init__(self, say: Callable[[str], None], rate: float = RELAY_RATE, burst: int = RELAY_BURST) -> None:
        self.say = say
        self.rate = rate
        self.burst = burst
        self._tokens = float(burst)
        self._last = time.monotonic()
        self._dropped = 0
        self._lock = threading.Lock()

    def __call__(self, text: str, cut: bool = True) -> None:
        """Show ``text`` (cut to :data:`RELAY_CHARS` unless ``cut`` is false: the caller has cut it), unless the
        rate is spent."""
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
            self._last = now
            if self._tokens < 1.0:
                self._dropped += 1
                return
            self._tokens -= 1.0
        self.flush()
        if cut and len(text) > RELAY_CHARS:
            text = f"{text[:RELAY_CHARS]}… ({len(text) - RELAY_CHARS} more characters not shown)"
        self.say(text)

    def flush(self) -> None:
        """Show how many lines were not shown since the last line that was."""
        with self._lock:
            dropped, self._dropped = self._dropped, 0
        if dropped:
            self.say(f"engine: {dropped} lines not shown (more than {self.rate:g} a second)")


class EngineProcess:
    """One running engine in a process group of its own: its standard output read by a thread into a short
    queue of lines (a line over :data:`MAX_LINE` bytes is never kept: it becomes :class:`EngineLineTooLong`), its
    standard error read by another and relayed, cut and rate-limited (:class:`Relay`), and lines to it written by
    a third."""

    def __init__(self, argv: list[str], say: Callable[[str], None]) -> None:
        self.argv = argv
        self.say = say
        self.relay = Relay(say)
        self.lines: queue.Queue[str | EngineLineTooLong | None] = queue.Queue(QUEUED_LINES)
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL)
        self._closed = threading.Event()
        self._eof = False
        try:
            self.proc = start_in_group(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       bufsize=0)
        except OSError as exc:
            raise EngineError(f"cannot start the engine {shlex.join(argv)}: {exc.strerror or exc}") from None
        # lines to the engine go through a writer thread: an engine that stops reading (its pipe full) blocks that
        # thread, never the driver, whose deadline then runs out as for any engine that does not answer
        self._outgoing: queue.Queue[str | None] = queue.Queue()
        self._write_failed = False
        threading.Thread(target=self._write_stdin, daemon=True, name="engine-stdin").start()
        threading.Thread(target=self._read_stdout, daemon=True, name="engine-stdout").start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True, name="engine-stderr")
        self._stderr_reader.start()

    def _put(self, item: str | EngineLineTooLong | None) -> None:
        while not self._closed.is_set():  # a full queue makes the engine wait; a stopped engine is not waited for
            try:
                self.lines.put(item, timeout=0.2)
                return
            except queue.Full:
                continue

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        line = bytearray()
        too_long = False  # the rest of an over-long line is read and dropped
        while chunk := os.read(fd, READ_SIZE):
            for piece, ends in _pieces(chunk):
                if not too_long and len(line) + len(piece) > MAX_LINE:
                    too_long = True
                    line.clear()
                    self._put(EngineLineTooLong(
                        f"the engine wrote a line of more than {MAX_LINE:,} bytes on its output (the limit of "
                        "docs/ENGINE-PROTOCOL.md)"))
                elif not too_long:
                    line += piece
                if ends:
                    if not too_long:
                        self._put(line.decode("utf-8", "replace").rstrip("\r"))
                    line.clear()
                    too_long = False
        if line and not too_long:
            self._put(line.decode("utf-8", "replace").rstrip("\r"))
        self._put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        fd = self.proc.stderr.fileno()
        kept = bytearray()  # at most RELAY_CHARS bytes of a line: the rest is counted, not kept
        dropped = 0
        while chunk := os.read(fd, READ_SIZE):
            for piece, ends in _pieces(chunk):
                room = max(0, RELAY_CHARS - len(kept))
                kept += piece[:room]
                dropped += len(piece) - min(room, len(piece))
                if ends:
                    self._stderr_line(kept, dropped)
                    kept.clear()
                    dropped = 0
        if kept or dropped:
            self._stderr_line(kept, dropped)

    def _stderr_line(self, kept: bytearray, dropped: int) -> None:
        text = kept.decode("utf-8", "replace").rstrip("\r")
        if dropped:
            text += f"… ({dropped:,} more bytes not shown)"
        self.stderr_tail.append(text)
        self.relay(f"engine stderr: {text}", cut=False)

    def _write_stdin(self) -> None:
        assert self.proc.stdin is not None
        while (text := self._outgoing.get()) is not None:
            try:
                self.proc.stdin.write(text.encode("utf-8"))
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                self._write_failed = True
                return
        try:
            self.proc.stdin.close()
        except (BrokenPipeError, OSError, ValueError):
            pass

    def send(self, *lines: str) -> None:
        """Queue lines for the engine, without waiting for it to read them (``EngineCrashed`` when it is gone)."""
        if self._write_failed or self.proc.poll() is not None:
            raise EngineCrashed(self.describe_exit())
        self._outgoing.put("".join(f"{line}\n" for line in lines))

    def drain(self) -> list[str]:
        """Lines the engine wrote that nobody asked for (left over from an earlier turn), taken off its output."""
        stale = []
        while not self._eof:
            try:
                line = self.lines.get_nowait()
            except queue.Empty:
                break
            if line is None:
                self._eof = True
            elif isinstance(line, str):
                stale.append(line)
        return stale

    def read(self, deadline: float | None) -> str:
        """The engine's next line. ``EngineTimeout`` at ``deadline`` (a ``time.monotonic()`` value; None waits for
        ever) whatever the engine keeps writing; ``EngineCrashed`` at the end of its output or once its process
        has exited (even if a child of it keeps the pipe open); ``EngineLineTooLong`` for an over-long line."""
        exited = False
        while True:
            if self._eof:
                raise EngineCrashed(self.describe_exit())
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                raise EngineTimeout("no answer in time")
            wait = POLL if deadline is None else min(POLL, deadline - now)
            try:
                line = self.lines.get(timeout=wait)
            except queue.Empty:
                if self.proc.poll() is not None:
                    if exited:  # a moment for what it wrote before it ended has passed: it crashed
                        raise EngineCrashed(self.describe_exit()) from None
                    exited = True
                continue
            if line is None:
                self._eof = True
            elif isinstance(line, EngineLineTooLong):
                raise line
            else:
                return line

    def describe_exit(self, when: str = "") -> str:
        """How the engine ended (its exit code or signal), ``when`` (e.g. " before it said 'ready'"), and its
        last lines of stderr."""
        try:
            code = self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            what = "closed its output"
        else:
            what = f"exited with code {code}" if code >= 0 else f"was killed by signal {-code}"
            self._stderr_reader.join(timeout=1.0)  # its last words are read before they are quoted
        tail = " | ".join(self.stderr_tail)
        return f"the engine {what}{when}" + (f"; its last stderr lines: {tail}" if tail else "")

    def stop(self) -> None:
        """Say ``quit``, close its input, kill it if it has not exited after :data:`STOP_WAIT` seconds (an engine
        that no longer reads is killed too: nothing here waits on its input), then kill whatever is left in its
        process group."""
        self._outgoing.put("quit\n")
        self._outgoing.put(None)  # then its input is closed
        if self.proc.poll() is None:
            try:
                self.proc.wait(timeout=STOP_WAIT)
            except subprocess.TimeoutExpired:
                pass
        self._closed.set()
        end_group(self.proc)
        self.relay.flush()


def _pieces(chunk: bytes) -> list[tuple[bytes, bool]]:
    """``chunk`` cut at its newlines: (bytes, True when a newline ended them), the newlines left out."""
    parts = chunk.split(b"\n")
    return [(part, True) for part in parts[:-1]] + ([(parts[-1], False)] if parts[-1] else [])


@dataclass
class Identity:
    """What an engine said about itself in the handshake."""

    name: str = "engine"
    author: str | None = None
    coords: str = "algebraic"
    legal: bool = False  # it asked for the legal moves with every position
    games: list[str] = field(default_factory=list)  # the games it says it plays (empty: not said)


def _handshake_line(identity: Identity, line: str, say: Callable[[str], None]) -> bool:
    """Read one handshake line into ``identity``; True at ``ready``."""
    word, _, rest = line.strip().partition(" ")
    rest = rest.strip()
    if word == "ready":
        return True
    if word == "id":
        key, _, value = rest.partition(" ")
        if key == "name" and value.strip():
            identity.name = value.strip()
        elif key == "author":
            identity.author = value.strip()
        elif key == "games":
            identity.games = value.split()
        else:
            say(f"engine: ignoring unknown id line {line!r}")
    elif word == "coords":
        try:
            identity.coords = check_coords(rest)
        except ValueError as exc:
            raise EngineError(f"the engine asked for coords {rest!r}: {exc}") from None
    elif word == "option" and rest == "legal":
        identity.legal = True
    elif word == "info":
        say(f"engine info: {rest}")
    elif line.strip():
        say(f"engine: ignoring {line.strip()!r} before 'ready'")
    return False


def handshake(process: EngineProcess, timeout: float) -> Identity:
    """Say ``plyhall 1`` and read the engine's answer up to ``ready``."""
    identity = Identity()
    deadline = time.monotonic() + timeout
    process.send(f"plyhall {PROTOCOL_VERSION}")
    try:
        while not _handshake_line(identity, process.read(deadline), process.relay):
            pass
    except EngineTimeout:
        raise EngineError(f"the engine did not say 'ready' within {timeout:g} s of starting "
                          "(docs/ENGINE-PROTOCOL.md: answer 'plyhall 1' with 'ready')") from None
    except EngineCrashed:
        raise EngineError(process.describe_exit(" before it said 'ready'")) from None
    return identity


def _milliseconds(seconds: float | None) -> int:
    return -1 if seconds is None else max(0, round(seconds * 1000))


class EnginePlayer(Player):
    """A player whose moves come from an engine program speaking the stdio engine protocol."""

    def __init__(self, command: str | Sequence[str], game_id: str | None = None, *,
                 say: Callable[[str], None] | None = None, start_timeout: float = START_TIMEOUT,
                 grace: float = GRACE) -> None:
        self.argv = split_command(command)
        if game_id is not None:
            get_game(game_id)
        self.game_id = game_id
        self.say = say or (lambda text: None)
        self.start_timeout = start_timeout
        self.grace = grace
        self.identity = Identity()
        self.warms_up = "the engine"
        self._process: EngineProcess | None = None
        self._game: str | None = None  # the room of the game the engine was told about
        self._crashes = 0  # crashes in the current game
        self._crashed_games = 0  # games in a row resigned because the engine crashed twice
        self._closed = False  # the bot is stopping: no engine is started again

    # Life of the engine process -------------------------------------------------------------------------

    def _start(self) -> None:
        if self._process is not None:
            self._process.stop()
            self._process = None
        if self._closed:
            raise EngineError("the bot is stopping: the engine is not started again")
        self._process = EngineProcess(self.argv, self.say)
        self._game = None
        try:
            self.identity = handshake(self._process, self.start_timeout)
            games = self.identity.games
            if games and self.game_id is not None and self.game_id not in games:
                raise EngineError(f"the engine {self.identity.name} plays only {' '.join(games)} (its 'id games' "
                                  f"line), not {self.game_id}: start the bot for one of those games")
        except EngineError:  # a failed start stops the engine here: no process is left running unasked
            self.close()
            raise

    def warm_up(self) -> str | None:
        """Start the engine and wait for its ``ready``: it is warm before the bot logs in."""
        if self._process is None:
            self._start()
        return f"engine {self.identity.name}"

    def close(self) -> None:
        """Stop the engine (and whatever it started), for good: a turn still waiting for it ends without
        starting it again."""
        self._closed = True
        self._stop_engine()

    def _stop_engine(self) -> None:
        if self._process is not None:
            self._process.stop()
            self._process = None

    # Turns ------------------------------------------------------------------------------------------------

    def choose(self, turn: Turn) -> Any:
        """The engine's move for ``turn``, checked against the rules (an illegal one is sent back to it)."""
        if self._process is None:
            self._start()
        if self._game != turn.room:
            self._crashes = 0
        while True:
            try:
                move = self._play_turn(turn)
                self._crashed_games = 0
                return move
            except EngineCrashed as exc:
                self._crashes += 1
                self.say(f"engine crashed: {exc}; restarting it")
                if self._crashes >= 2:
                    self._crashed_games += 1
                    if self._crashed_games >= MAX_CRASHED_GAMES:  # broken, not unlucky: it would resign for ever
                        raise EngineError(f"the engine crashed twice in each of {self._crashed_games} games in a row; "
                                          "the bot stops (mend the engine, then start the bot again)") from None
                    self._start()
                    self._game = turn.room  # the game is over for it: no second restart in this game
                    raise Resign("the engine crashed twice in this game") from None
                self._start()
            except EngineTimeout:
                self.say("the engine did not answer before its clock ran out; it loses on time, and is restarted")
                self._start()
                self._game = turn.room
                raise NoMove("the engine did not answer in time") from None
            except EngineLineTooLong as exc:
                self.say(f"{exc}; its game is resigned, and it is restarted")
                self._start()
                self._game = turn.room
                raise Resign(str(exc)) from None

    def _play_turn(self, turn: Turn) -> Any:
        process = self._process
        assert process is not None
        if self._game != turn.room:
            names = " ".join(turn.players)
            process.send(f"newgame {turn.game.id} {turn.seat} {names}")
            self._game = turn.room
        deadline = None if turn.time_left is None else time.monotonic() + turn.time_left + self.grace
        for stale in process.drain():  # an answer to an earlier turn must not be taken for this one's
            process.relay(f"engine: ignoring {stale.strip()!r}, written before this turn's 'go'")
        process.send(*self.position(turn), "go")
        for attempt in range(1, MAX_ILLEGAL + 1):
            text = self._await_move(process, deadline)
            try:
                return self._parse(text, turn)
            except IllegalMove as exc:
                reason = " ".join(exc.reason.split())
                self.say(f"the engine's move {text!r} is illegal: {reason}")
                if attempt == MAX_ILLEGAL:  # told why, and asked nothing more: the game is resigned
                    process.send(f"illegal {reason}")
                else:
                    process.send(f"illegal {reason}", "go")
        raise Resign(f"the engine sent {MAX_ILLEGAL} illegal moves in a row")

    def _await_move(self, process: EngineProcess, deadline: float | None) -> str:
        while True:
            line = process.read(deadline)
            word, _, rest = line.strip().partition(" ")
            if word == "move":
                return rest.strip()
            if word == "resign":
                raise Resign("the engine resigned")
            if word == "info":
                process.relay(f"engine info: {rest.strip()}")
            elif line.strip():
                process.relay(f"engine: ignoring {line.strip()!r} (expected 'move …' or 'info …')")

    def _parse(self, text: str, turn: Turn) -> Any:
        """The engine's move text as a move of the reference rules (``IllegalMove`` saying what is wrong)."""
        game, coords = turn.game, self.identity.coords
        if not text:
            raise IllegalMove("'move' needs a move after it")
        obj: Any = text
        if text[0] in "{[":
            try:
                obj = json.loads(text)
            except ValueError as exc:
                raise IllegalMove(f"not valid JSON ({exc})") from None
        try:
            move = game.parse_move(obj, turn.state, coords)
            game.apply(turn.state, move)
        except IllegalMove:
            raise
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            raise IllegalMove(f"not a move of {game.name}: {exc}") from None
        return move

    def move_text(self, game: Any, move: Any) -> str:
        """A move as the engine reads it: notation in ``algebraic``, the structured form as compact JSON in
        the other conventions."""
        if self.identity.coords == "algebraic":
            return game.notation(move)
        return json.dumps(game.format_move(move, self.identity.coords), separators=(",", ":"))

    def position(self, turn: Turn) -> list[str]:
        """The ``position`` block for ``turn`` (without its closing ``go``)."""
        game, state, coords = turn.game, turn.state, self.identity.coords
        picture = game.render(state).splitlines()
        history = list(turn.moves)  # notation: the same in every convention, as the wire's 'notation'
        lines = ["position", f"game {game.id}", f"coords {coords}", f"picture {len(picture)}", *picture,
                 "state " + json.dumps(game.encode_state(state, coords), separators=(",", ":")),
                 f"moves {len(history)}", *history]
        if self.identity.legal:
            legal = [self.move_text(game, move) for move in game.legal_moves(state)]
            lines += [f"legal {len(legal)}", *legal]
        lines.append(f"time {_milliseconds(turn.time_left)} {_milliseconds(turn.per_move)} "
                     f"{_milliseconds(turn.increment)}")
        return lines

    def game_over(self, result: GameResult) -> None:
        """Tell the engine the result (``result win|loss|draw|aborted REASON``)."""
        if self._process is None or self._game != result.room:
            return
        if not result.played:
            word = "aborted"
        else:
            word = {1.0: "win", 0.5: "draw", 0.0: "loss"}[result.score]
        try:
            self._process.send(f"result {word} {' '.join(result.reason.split())}")
        except EngineCrashed as exc:
            self.say(f"engine crashed: {exc}; it is restarted for the next game")
            self._stop_engine()
        self._game = None
        self._crashes = 0
