"""A hostile engine for tests/test_engine_bounds.py: it says the handshake properly, then misbehaves as
``--mode`` says, each a way issue 41 found to hold ``plyhall bot --engine`` hostage.

* ``flood``: on ``go``, writes ``info`` lines for ever and never a move;
* ``huge-stdout``: on ``go``, writes ``--size`` bytes on one line of stdout (no newline), then waits;
* ``huge-stderr``: on ``go``, writes ``--size`` bytes on one line of stderr, then plays a legal move;
* ``fork-exit``: on ``go``, starts a child that keeps stdout open and sleeps, then exits;
* ``spawner``: starts a sleeping child at once, then plays legal moves;
* ``spawn-hang``: starts a sleeping child at once, and on ``go`` writes ``go`` into ``--went`` and never answers.

Every process it starts (and its own) goes into the ``--pids`` file, one pid a line.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

CHUNK = 1 << 16


def note(path: str | None, pid: int) -> None:
    if path:
        with open(path, "a", encoding="ascii") as file:
            file.write(f"{pid}\n")


def sleeper(path: str | None) -> None:
    """A child that inherits stdin, stdout and stderr (the engine's pipes) and sleeps."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)"])
    note(path, child.pid)


def write_many(stream: object, size: int, end: bytes) -> None:
    left = size
    while left > 0:
        stream.write(b"x" * min(CHUNK, left))
        left -= CHUNK
    stream.write(end)
    stream.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", required=True,
                        choices=["flood", "huge-stdout", "huge-stderr", "fork-exit", "spawner", "spawn-hang"])
    parser.add_argument("--pids")
    parser.add_argument("--went")
    parser.add_argument("--size", type=int, default=64 << 20)
    args = parser.parse_args()
    note(args.pids, os.getpid())
    out = sys.stdout.buffer
    legal: list[str] = []
    pending = 0
    for raw in sys.stdin:
        line = raw.strip()
        if pending:
            legal.append(line)
            pending -= 1
            continue
        if line.startswith("plyhall"):
            out.write(b"id name hostile\noption legal\nready\n")
            out.flush()
            if args.mode in ("spawner", "spawn-hang"):
                sleeper(args.pids)
        elif line.startswith("legal "):
            legal, pending = [], int(line.split()[1])
        elif line == "go":
            if args.mode == "flood":
                while True:
                    out.write(b"info depth 1 score 0 nodes 12345 pv 4\n")
            elif args.mode == "huge-stdout":
                write_many(out, args.size, b"")
                time.sleep(1000)
            elif args.mode == "huge-stderr":
                write_many(sys.stderr.buffer, args.size, b"\n")
            elif args.mode == "spawn-hang":
                with open(args.went, "a", encoding="ascii") as file:
                    file.write("go\n")
                time.sleep(1000)
            elif args.mode == "fork-exit":
                sleeper(args.pids)
                out.flush()
                os._exit(0)
            out.write(f"move {legal[0]}\n".encode())
            out.flush()
        elif line == "quit":
            return


if __name__ == "__main__":
    main()
