"""What the benchmark scripts share: free ports, a real `plyhall serve` process, /proc figures, percentiles,
progress lines."""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLK_TCK = os.sysconf("SC_CLK_TCK")


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
    proc = subprocess.Popen([sys.executable, "-m", "client.cli", "serve", "--port", str(port), "--db", str(db),
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
