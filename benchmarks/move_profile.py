"""Where a move's CPU goes: the server process's samples of a py-spy recording of the saturation phase, by part.

    .venv/bin/py-spy record --subprocesses -r 200 -f raw -o /tmp/saturation.txt -- \\
        .venv/bin/python benchmarks/server_load.py --only saturation --seconds 8
    .venv/bin/python benchmarks/move_profile.py /tmp/saturation.txt

The server process is the one whose stacks hold ``plyhall_server_main``; its set-up (imports, handshakes, logins,
rooms made and joined) is left out. Each sample goes to the part of its innermost frame that one of the parts
names (a sample in native code counts for the Python frame that called it: the socket writes are the
``transport.write`` line of ``Connection.push``, the event loop's own work and socket reads the loop's ``run``).
The shares are what counts: a busy machine inflates every part alike.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

FRAME = re.compile(r"^(?P<function>.*) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")

SET_UP = ("_find_and_load", "_login", "_admit", "create_room", "_join", "handshake", "process_request",
          "secret_checked", "_open_session", "set_up")
"""Frames that mark a sample of the set-up (imports, handshakes, logins, rooms made and joined): left out."""

WRITES = "writes: transport.write of the frames (the send system calls)"
ENCODING = "encoding (msgpack, once a message and codec) and the frame header"
DECODING = "decoding (msgpack, the NaN/bin/ext check)"
READING = "websockets: reading frames (data_received, the parser, parse_frames, process_event)"
STORAGE = "storage: the SQLite commit of each loop turn's batch, the writer"

PARTS: list[tuple[str, str, str]] = [
    # (part, file pattern, function pattern): the first that matches a frame, from the innermost out, takes it
    (WRITES, r"server/io/connections\.py$", r"^(Connection\.)?push$#write"),
    (ENCODING, r"protocol/codec\.py$", r"encode"),
    (ENCODING, r"msgpack/", r"packb|Packer"),
    (ENCODING, r"server/io/frames\.py$", r"frame_header"),
    (DECODING, r"protocol/codec\.py$", r"decode|_has_bad_value"),
    (DECODING, r"msgpack/", r"unpackb|Unpacker"),
    ("validation (validate_request: the precompiled check)", r"protocol/messages\.py$|<check of",
     r"validate|_walk|json_compatible|_kind_ok|check"),
    ("the moved messages built", r"protocol/messages\.py$", r"."),
    (READING, r"websockets/|server/io/transport\.py$", r"."),
    ("the rules: parsing, applying and formatting the move (protocol/games)", r"protocol/games/", r"."),
    ("the clocks (switch, snapshot, deadline)", r"server/core/clock\.py$", r"."),
    ("the room: move, tick, _play, a game's end and the next one's start", r"server/core/room[a-z_]*\.py$", r"."),
    ("the hall: dispatch, routing to connections, timers, outbox", r"server/core/", r"."),
    (STORAGE, r"server/storage/", r"."),
    (STORAGE, r"sqlite3/", r"."),
    ("garbage collector and the benchmark's lateness probe", r"server/io/gc_policy\.py$|server_load\.py$", r"."),
    ("server glue: rate limit, dispatch, delivery, metrics", r"server/io/", r"."),
    ("event loop and socket reads (uvloop, native code)", r"asyncio/|uvloop/|event_loop\.py$", r"."),
]


def write_line(root: Path) -> int:
    """The line of ``Connection.push`` that writes the frame to the transport (its samples are the socket writes)."""
    for number, text in enumerate((root / "server/io/connections.py").read_text().splitlines(), 1):
        if "transport.write(" in text:
            return number
    return -1


def part_of(frames: list[str], writes_at: int) -> str | None:
    """The part a server stack (outermost frame first) counts for; None for a sample of the set-up."""
    parsed = [FRAME.match(frame) for frame in frames]
    names = [m.group("function") if m else frame for m, frame in zip(parsed, frames, strict=True)]
    if any(name.split(".")[-1] in SET_UP for name in names):
        return None
    for match in reversed(parsed):
        if match is None:
            continue
        function, file, line = match.group("function"), match.group("file"), match.group("line")
        for part, file_pattern, function_pattern in PARTS:
            pattern, _, only = function_pattern.partition("#")
            if re.search(file_pattern, file) and re.search(pattern, function.split(".")[-1]):
                if only == "write":
                    if line is not None and int(line) == writes_at:
                        return part
                    continue
                return part
    return "other"


def main(argv: list[str] | None = None) -> int:
    """Print the table of one py-spy raw recording."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("recording", type=Path, help="py-spy record -f raw output of a saturation run")
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the checkout the recording ran (for the line of the socket write; default this one)")
    args = parser.parse_args(argv)
    if not args.recording.is_file():
        parser.error(f"{args.recording}: no such file; record one with py-spy record -f raw (see --help)")
    writes_at = write_line(args.tree)
    counts: Counter[str] = Counter()
    for line in args.recording.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if not count.isdigit() or not any(f.startswith("plyhall_server_main ") for f in frames):
            continue
        part = part_of(frames, writes_at)
        if part is not None:
            counts[part] += int(count)
    total = sum(counts.values())
    if not total:
        print("no samples of the server process once its set-up is left out", file=sys.stderr)
        return 1
    print(f"{'where':<90}{'share':>8}")
    for part, count in counts.most_common():
        print(f"{part:<90}{count / total:>8.1%}")
    print(f"({total} samples of the server process, set-up left out)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
