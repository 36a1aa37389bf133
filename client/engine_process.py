"""An engine program's process, for the driver in :mod:`client.engine`: started in a process group of its own
(:func:`start_in_group`), killed whole when the driver is done with it (:func:`end_group`) and by the
:data:`WATCHDOG` process if the bot ends any other way, SIGKILL included; its standard output read into a short
queue of bounded lines, its standard error relayed, cut and rate-limited (:class:`Relay`), and lines to it
written by a thread of their own (:class:`EngineProcess`). The Kaggle agent runner (:mod:`client.kaggle`) starts
its agent's process the same way.
"""

from __future__ import annotations

import collections
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
from typing import Any

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


class EngineAbandoned(EngineError):
    """The game the engine was thinking about ended: the driver stopped waiting for its move."""


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
        if os.path.isdir(program):
            raise ValueError(f"the engine program {program!r} is a folder: give the program's own path")
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

    def read(self, deadline: float | None, given_up: threading.Event | None = None) -> str:
        """The engine's next line. ``EngineTimeout`` at ``deadline`` (a ``time.monotonic()`` value; None waits for
        ever) whatever the engine keeps writing; ``EngineCrashed`` at the end of its output or once its process
        has exited (even if a child of it keeps the pipe open); ``EngineLineTooLong`` for an over-long line;
        ``EngineAbandoned`` once ``given_up`` is set (its game ended)."""
        exited = False
        while True:
            if given_up is not None and given_up.is_set():
                raise EngineAbandoned("its game ended")
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

    def stop(self, wait: float = STOP_WAIT) -> None:
        """Say ``quit``, close its input, kill it if it has not exited after ``wait`` seconds (an engine that no
        longer reads is killed too: nothing here waits on its input), then kill whatever is left in its process
        group."""
        self._outgoing.put("quit\n")
        self._outgoing.put(None)  # then its input is closed
        if self.proc.poll() is None:
            try:
                self.proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                pass
        self._closed.set()
        end_group(self.proc)
        self.relay.flush()


def _pieces(chunk: bytes) -> list[tuple[bytes, bool]]:
    """``chunk`` cut at its newlines: (bytes, True when a newline ended them), the newlines left out."""
    parts = chunk.split(b"\n")
    return [(part, True) for part in parts[:-1]] + ([(parts[-1], False)] if parts[-1] else [])
