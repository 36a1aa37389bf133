"""A scriptable engine for the tests of ``plyhall bot --engine``: it speaks the stdio engine protocol, plays the
first legal move it is given (or a random one), and misbehaves on purpose as its flags say.

    python fake_engine.py [--log FILE] [--coords C] [--crash-at-move N] [--crash-once MARKER]
                          [--hang-at-move N] [--illegal N] [--exit-at-start CODE] [--never-ready] [--deaf]
                          [--games 'G ...']

Every line it reads is appended to the log file, so a test can check what the driver sent.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log")
    parser.add_argument("--coords", default="algebraic")
    parser.add_argument("--crash-at-move", type=int, help="exit with code 3 when asked to move after N moves")
    parser.add_argument("--crash-once", help="with --crash-at-move: crash only if this marker file does not exist")
    parser.add_argument("--hang-at-move", type=int, help="never answer when asked to move after N moves")
    parser.add_argument("--illegal", type=int, default=0, help="answer each turn with N illegal moves first")
    parser.add_argument("--illegal-move", default="z99", help="the illegal move it sends (default z99, no square)")
    parser.add_argument("--exit-at-start", type=int, help="exit with this code before the handshake")
    parser.add_argument("--never-ready", action="store_true")
    parser.add_argument("--deaf", action="store_true", help="after 'ready', never read its input again")
    parser.add_argument("--seed", type=int)
    parser.add_argument("--games", help="say in the handshake that it plays only these games")
    args = parser.parse_args()
    log = Path(args.log).open("a", encoding="utf-8") if args.log else None
    rng = random.Random(args.seed)
    if args.exit_at_start is not None:
        print("fake: failing at start on purpose", file=sys.stderr, flush=True)
        return args.exit_at_start
    legal: list[str] = []
    moves = 0
    refused = 0

    def read() -> str | None:
        line = sys.stdin.readline()
        if not line:
            return None
        if log:
            log.write(line)
            log.flush()
        return line.rstrip("\n")

    while (line := read()) is not None:
        word, _, rest = line.partition(" ")
        if word == "plyhall":
            print("id name fake-engine\nid author tests\n" f"coords {args.coords}\noption legal", flush=True)
            if args.games:
                print(f"id games {args.games}", flush=True)
            if args.never_ready:
                print("info not getting ready", flush=True)
                continue
            print("ready", flush=True)
            if args.deaf:
                time.sleep(3600)
        elif word in ("picture", "moves", "legal"):
            block = [read() or "" for _ in range(int(rest))]
            if word == "legal":
                legal = block
            if word == "moves":
                moves = len(block)
        elif word == "go":
            if args.crash_at_move is not None and moves >= args.crash_at_move:
                if args.crash_once is None or not Path(args.crash_once).exists():
                    if args.crash_once:
                        Path(args.crash_once).touch()
                    print("fake: crashing on purpose", file=sys.stderr, flush=True)
                    return 3
            if args.hang_at_move is not None and moves >= args.hang_at_move:
                time.sleep(3600)
            if refused < args.illegal:
                refused += 1
                print(f"move {args.illegal_move}", flush=True)
                continue
            refused = 0
            print("info depth 1 score 0", flush=True)
            print(f"move {rng.choice(legal)}", flush=True)
        elif word == "illegal":
            print(f"fake: refused: {rest}", file=sys.stderr, flush=True)
        elif word == "quit":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
