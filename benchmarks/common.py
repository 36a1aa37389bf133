"""What the benchmark scripts share: their command line and scratch folder, a real `plyhall serve` process,
/proc figures, percentiles, headings and progress lines.

A script starts ``from common import ...`` before importing the project: importing this module puts the
checkout this folder belongs to first on ``sys.path``, so a script runs on the code beside it, installed or not.
Its ``main`` then reads, for example::

    args = script_parser(__doc__, ...).parse_args(argv)
    with scratch("churn") as tmp, Server(tmp / "churn.db") as server:
        ...  # clients load server.url; cpu_seconds(server.pid), rss_mb(server.pid) measure it
    heading("Churn: ...")  # the figures' title, with the machine's CPU count
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

ROOT = Path(__file__).resolve().parent.parent
CLK_TCK = os.sysconf("SC_CLK_TCK")

if str(ROOT) not in sys.path[:1]:
    sys.path.insert(0, str(ROOT))


def script_parser(doc: str | None) -> argparse.ArgumentParser:
    """A script's argument parser, described (in ``--help``) by the first paragraph of its docstring ``doc``."""
    return argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])


@contextlib.contextmanager
def scratch(name: str) -> Iterator[Path]:
    """A temporary folder ``plyhall-NAME-...`` for a run's databases and files, removed with all in it afterwards."""
    with tempfile.TemporaryDirectory(prefix=f"plyhall-{name}-") as tmp:
        yield Path(tmp)


def heading(text: str, separator: str = "; ") -> None:
    """The title of a table of figures, after a blank line, ending with the machine's CPU count (the figures
    depend on it)."""
    print(f"\n{text}{separator}CPUs: {os.cpu_count()}")


def table_header(header: str) -> None:
    """A table's column titles, underlined."""
    print(header)
    print("-" * len(header))


def log(text: str) -> None:
    """A progress line on stderr (the figures go to stdout)."""
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve(db: Path | str, port: int, *extra: str) -> tuple[subprocess.Popen, float]:
    """A real ``plyhall serve`` process on ``port`` (``--quiet``), once /healthz answers; with the seconds
    that took."""
    began = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "plyhall", "serve", "--port", str(port), "--db", str(db),
                             "--quiet", *extra], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited: {proc.stderr.read().decode()[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as resp:
                if json.loads(resp.read())["ok"]:
                    return proc, time.monotonic() - began
        except OSError:
            time.sleep(0.05)
        if time.monotonic() - began > 60:
            proc.kill()
            raise SystemExit("the server did not start within 60 s")


class Server:
    """A real ``plyhall serve`` process on a free loopback port (or ``port``), for a benchmark to load.

    It is started when made, and answering (see :func:`serve`); a ``with`` block stops it at its end. ``extra``
    are more ``plyhall serve`` options.
    """

    def __init__(self, db: Path | str, *extra: str, port: int | None = None, stop_timeout: float = 30) -> None:
        self.db = db
        self.port = free_port() if port is None else port
        self.stop_timeout = stop_timeout
        self.process, self.start_seconds = serve(db, self.port, *extra)

    @property
    def url(self) -> str:
        """The server's WebSocket address."""
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def pid(self) -> int:
        """The server process's id, for the /proc figures."""
        return self.process.pid

    def kill(self) -> None:
        """``kill -9`` the server, as a crash would, and wait for it to be gone."""
        self.process.kill()
        self.process.wait()

    def restart(self, *extra: str) -> float:
        """Start the server again on the same database and port, with the options ``extra`` only; the seconds
        until it answered."""
        self.process, self.start_seconds = serve(self.db, self.port, *extra)
        return self.start_seconds

    def stop(self) -> None:
        """Stop the server as an operator would (SIGTERM) and wait for it to finish."""
        self.process.terminate()
        self.process.wait(self.stop_timeout)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (its threads included)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def rss_mb(pid: int) -> float:
    """Resident memory of a process in MB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def percentiles(values: list[float]) -> dict[str, float]:
    """Sample count, and the median, 99th percentile and maximum of ``values`` (seconds) in milliseconds."""
    if not values:
        return {"n": 0, "p50": float("nan"), "p99": float("nan"), "max": float("nan")}
    values = sorted(values)
    cuts = statistics.quantiles(values, n=100, method="inclusive") if len(values) > 1 else [values[0]] * 99
    return {"n": len(values), "p50": cuts[49] * 1000, "p99": cuts[98] * 1000, "max": values[-1] * 1000}
