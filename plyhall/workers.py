"""``plyhall serve --workers N``: N node processes of one cluster on this machine, sharing one port.

Each worker is a ``plyhall serve`` process of its own with the parent's options, ``--node NODE-i``
(i = 1..N) and ``--reuse-port``: the kernel spreads new connections over the workers
(SO_REUSEPORT), and the cluster (``--cluster``, docs/SCALING.md) makes them one lobby.

The parent only supervises. Its children run in a process group of their own, so a Ctrl-C in the
terminal reaches the parent alone, which passes SIGINT or SIGTERM on to every worker once (a
second signal is passed on too: the workers then stop at once) and waits for them, killing those
still running after a bounded wait. A worker that exits while the others run is started again
after a short delay; one that exits before it served (before it said it was ready) three times in a
row, however long each try took, is taken as a configuration that cannot work: everything is stopped
and the parent exits 1 with that worker's last lines of standard error, said once. The workers'
standard output is the parent's; their standard error passes through the parent, which keeps the
last lines of each (a worker's lines before it is ready are held back until it is, so that a worker
that cannot start does not repeat its reason at every try). (A parent killed with SIGKILL leaves its
workers running: stop their process group.)
"""

from __future__ import annotations

import argparse
import collections
import os
import signal
import subprocess
import sys
import threading
import time
from typing import IO, Any

FAILED_STARTS_ALLOWED = 3
"""Exits in a row before serving that end the whole ``serve``: a bad configuration fails fast instead of looping."""
READY = "plyhall-worker-ready"
"""The line a worker writes to its standard error once it serves (when ``PLYHALL_WORKER_READY`` is set)."""
RESTART_DELAY = 1.0
"""Seconds before a worker that exited is started again."""
STOP_WAIT = 25.0
"""Seconds the workers have to stop after the signal (a server stops within ``SHUTDOWN_SECONDS``, 10) before
they are killed."""
TAIL_LINES = 20
"""Lines of a worker's standard error kept for the message when it keeps failing."""


class Worker:
    """One worker process: its node name, the process while it runs, and how it has been exiting."""

    def __init__(self, index: int, node: str, command: list[str]) -> None:
        self.index = index
        self.node = node
        self.command = command
        self.proc: subprocess.Popen | None = None
        self.started = 0.0
        self.ready = False  # it said it serves
        self.failed_starts = 0  # exits in a row before it was ready
        self.restart_at: float | None = None
        self.signalled = False
        self.tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self._relay: threading.Thread | None = None

    def start(self) -> None:
        """Start the process (its standard error relayed to ours, the last lines kept)."""
        self.tail.clear()
        self.signalled = False
        self.ready = False
        self.restart_at = None
        self.proc = subprocess.Popen(self.command, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     process_group=0, text=True, errors="replace", bufsize=1,
                                     env={**os.environ, "PLYHALL_WORKER_READY": "1"})
        self.started = time.monotonic()
        self._relay = threading.Thread(target=self._relay_stderr, args=(self.proc.stderr,),
                                       name=f"stderr of {self.node}", daemon=True)
        self._relay.start()

    def _relay_stderr(self, stream: IO[str]) -> None:
        for line in stream:
            if line.rstrip("\n") == READY:  # what it said while starting goes out now
                self.ready = True
                sys.stderr.write("".join(f"{held}\n" for held in self.tail))
                sys.stderr.flush()
                continue
            self.tail.append(line.rstrip("\n"))
            if self.ready:
                sys.stderr.write(line)
                sys.stderr.flush()
        stream.close()

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the process if it runs."""
        if self.proc is not None and self.proc.poll() is None:
            self.signalled = True
            try:
                self.proc.send_signal(sig)
            except ProcessLookupError:
                pass

    def finish(self) -> None:
        """After the process has exited: let the relay pass on its last lines."""
        if self._relay is not None:
            self._relay.join(5)


def _exit_text(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class Workers:
    """The supervisor of :func:`run_workers`."""

    def __init__(self, args: argparse.Namespace, argv: list[str]) -> None:
        base = [sys.executable, "-P", "-m", "plyhall", "serve", *argv]  # -P: not a folder of the working directory
        self.args = args
        self.workers = [Worker(i, f"{args.node}-{i}", [*base, "--node", f"{args.node}-{i}", "--reuse-port"])
                        for i in range(1, args.workers + 1)]
        self.stopping: int | None = None  # the signal that stops us
        self.failed: Worker | None = None

    def on_signal(self, sig: int, _frame: Any = None) -> None:
        """SIGINT/SIGTERM/SIGHUP: stop; each worker is passed the signal (SIGTERM for SIGHUP), a second one too."""
        forwarded = signal.SIGTERM if sig == signal.SIGHUP else sig
        self.stopping = forwarded  # nothing printed here: the main thread may be halfway through a print
        for worker in self.workers:
            worker.signal(forwarded)

    def main(self) -> int:
        """:meth:`run` with our signal handlers in place (the main thread only); no worker outlives it."""
        signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        previous = {sig: signal.signal(sig, self.on_signal) for sig in signals}
        try:
            return self.run()
        finally:
            for worker in self.workers:  # an exception on the way: no worker is left behind
                if worker.proc is not None and worker.proc.poll() is None:
                    worker.proc.kill()
                    worker.proc.wait()
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def run(self) -> int:
        """Start the workers, supervise them until a signal (or a worker that cannot start), stop them; the exit
        code."""
        for worker in self.workers:
            worker.start()
        self._say_started()
        while self.stopping is None and self.failed is None:
            time.sleep(0.1)
            self._check()
        return self._stop()

    def _say_started(self) -> None:
        args = self.args
        for worker in self.workers:
            print(f"plyhall: worker {worker.index} pid {worker.proc.pid if worker.proc else '?'} node {worker.node}",
                  flush=True)
        print(f"plyhall: {len(self.workers)} workers sharing ws://{args.host}:{args.port}/ws (http://{args.host}:"
              f"{args.port}/); Ctrl-C stops them all", flush=True)

    def _check(self) -> None:
        """Start again the workers that exited; note one that keeps failing at its start."""
        now = time.monotonic()
        for worker in self.workers:
            if self.stopping is not None:
                return
            if worker.restart_at is not None:
                if now >= worker.restart_at:
                    worker.start()
                    print(f"plyhall: worker {worker.index} ({worker.node}) started again, pid {worker.proc.pid}",
                          file=sys.stderr, flush=True)
                continue
            code = worker.proc.poll() if worker.proc is not None else None
            if code is None:
                continue
            worker.finish()
            worker.proc = None
            worker.failed_starts = 0 if worker.ready else worker.failed_starts + 1
            if worker.failed_starts >= FAILED_STARTS_ALLOWED:
                self.failed = worker
                print(f"plyhall serve: worker {worker.index} ({worker.node}) could not start, {worker.failed_starts} "
                      f"times in a row ({_exit_text(code)}); stopping the workers. Its last lines:\n"
                      + "\n".join(f"  {line}" for line in worker.tail), file=sys.stderr, flush=True)
                return
            worker.restart_at = now + RESTART_DELAY
            what = "exited unexpectedly" if worker.ready else "could not start (why is shown if it keeps failing)"
            print(f"plyhall: worker {worker.index} ({worker.node}) {what} ({_exit_text(code)}); starting it again in "
                  f"{RESTART_DELAY:g} s", file=sys.stderr, flush=True)

    def _stop(self) -> int:
        """Signal the workers still running that have not been, wait for them (killing them after ``STOP_WAIT``);
        the exit code: 1 when a worker failed or did not stop cleanly, else 0."""
        sig = self.stopping if self.stopping is not None else signal.SIGTERM
        for worker in self.workers:
            if not worker.signalled:
                worker.signal(sig)
        deadline = time.monotonic() + STOP_WAIT
        clean = self.failed is None
        for worker in self.workers:
            if worker.proc is None:
                continue
            try:
                code = worker.proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                print(f"plyhall: worker {worker.index} ({worker.node}) did not stop within {STOP_WAIT:g} s; killing it",
                      file=sys.stderr, flush=True)
                worker.proc.kill()
                code = worker.proc.wait()
            worker.finish()
            if code != 0:
                clean = False
                if self.failed is None:
                    print(f"plyhall: worker {worker.index} ({worker.node}) stopped: {_exit_text(code)}",
                          file=sys.stderr, flush=True)
        if clean:
            print(f"plyhall: {len(self.workers)} workers stopped", flush=True)
        elif self.failed is None:
            print(f"plyhall: {len(self.workers)} workers stopped, not all cleanly", file=sys.stderr, flush=True)
        return 0 if clean else 1


def run_workers(args: argparse.Namespace, argv: list[str]) -> int:
    """Run ``args.workers`` node processes of the cluster ``args.cluster`` until SIGINT/SIGTERM/SIGHUP.

    ``argv``: the ``serve`` options every worker gets (:func:`plyhall.commands.serve.serve_argv`); each worker gets
    ``--node NODE-i`` and ``--reuse-port`` besides. The exit code: 0 after a clean stop, 1 when a worker kept
    failing at its start or did not stop cleanly."""
    return Workers(args, argv).main()
