"""The hall's cost of a move, without sockets: the frame read, decode, validate, ``Hall.handle``, the writer's
hand-off and the encoding of every frame, measured in process CPU time.

Each of ``--rooms`` Connect Four rooms holds two players on their own connections (msgpack); a measured move is
the exact frame a bot sends (masked, as a client's are), taken through what the server's websockets protocol,
``PlyhallServer._receive`` and ``_deliver`` do to it, less the socket: websockets' parser as the server's
connections run it (``HttpAwareProtocol``, after a real opening handshake) -> ``codec.decode`` ->
``validate_request`` -> ``Hall.handle`` -> the writes handed to a queue as the writer takes them -> one frame per
message (encoded once per batch and codec, as ``Connection.push`` does). Games that
end start again (``games`` in the room settings). The figure is the minimum over ``--repeats`` of CPU time per
move: deterministic enough to compare two trees on a busy machine (run it against both, alternately).

    .venv/bin/python benchmarks/hall_cost.py --moves 20000 --repeats 5
    .venv/bin/python benchmarks/hall_cost.py --profile   # cProfile's table of one run, by own time

On a busy machine CPU time swings with the neighbours; instructions do not. Under valgrind's callgrind, started
with instrumentation off, ``--instructions`` switches it on for the measured moves only (``callgrind_control``)
and prints the instructions a move (the set-up and warm-up run uninstrumented, so it takes a minute or two)::

    valgrind --tool=callgrind --instr-atstart=no .venv/bin/python benchmarks/hall_cost.py --instructions --moves 2000
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from websockets.client import ClientProtocol  # noqa: E402
from websockets.frames import Frame, Opcode  # noqa: E402
from websockets.server import ServerProtocol  # noqa: E402
from websockets.uri import parse_uri  # noqa: E402

from protocol.codec import CODECS, MSGPACK  # noqa: E402
from protocol.games import GAMES  # noqa: E402
from protocol.messages import ProtocolError, validate_request  # noqa: E402
from server.core.env import Env  # noqa: E402
from server.core.hall import Hall, Limits  # noqa: E402
from server.io.frames import frame_header  # noqa: E402
from server.io.transport import HttpAwareProtocol  # noqa: E402

CODEC = CODECS[MSGPACK]


class Table:
    """Rooms of two players each, set up through the hall, and the bytes of each player's next move."""

    def __init__(self, rooms: int, seed: int) -> None:
        self.hall = Hall(Env.fixed(), Limits(max_rooms=max(rooms, Limits().max_rooms), max_connections_per_address=0,
                                             max_rooms_per_address=0))
        self.rng = random.Random(seed)
        self.now = 0.0
        self.game = GAMES["connect4"]
        self.rooms: list[tuple[str, int, int]] = []
        for i in range(rooms):
            first, second = 2 * i + 1, 2 * i + 2
            self.request(first, {"type": "login", "name": f"a{i}"})
            self.request(second, {"type": "login", "name": f"b{i}"})
            name = f"room {i}"
            self.request(first, {"type": "create_room", "game": "connect4", "name": name,
                                 "games": 1000, "time_control": {"per_move": 86400}})
            self.request(first, {"type": "join", "room": name, "seat": 0})
            self.request(second, {"type": "join", "room": name, "seat": 1})
            self.rooms.append((name, first, second))
        self.queue: list[Any] = []  # the writer's queue: the hand-off is an extend, as ThreadWriter.submit's
        self.protocols = {conn: server_protocol() for _, first, second in self.rooms for conn in (first, second)}

    def request(self, conn: int, msg: dict[str, Any]) -> None:
        """Hand ``msg`` to the hall as the I/O edge does, with its consequences once committed."""
        self.now += 0.001
        checked = validate_request(msg)
        if isinstance(checked, ProtocolError):
            raise SystemExit(f"the benchmark sent an invalid request: {checked.message}")
        out = self.hall.handle(conn, checked, self.now)
        self.hall.committed(out, self.now)

    def next_request(self, index: int) -> tuple[int, dict[str, Any]] | None:
        """The connection to move in room ``index`` and a random legal move's request (None between games)."""
        name, first, second = self.rooms[index]
        room = self.hall.rooms[name]
        state = room.state
        if state is None or self.game.outcome(state) is not None:
            return None
        seat = self.game.to_move(state)
        conn = first if room.seats[seat] == f"a{index}" else second
        move = self.rng.choice(self.game.legal_moves(state))
        return conn, {"type": "move", "room": name, "move": self.game.format_move(move)}

    def next_move(self, index: int) -> tuple[int, bytes] | None:
        """The connection to move in room ``index`` and the bytes of a random legal move (None between games)."""
        nxt = self.next_request(index)
        if nxt is None:
            return None
        conn, request = nxt
        return conn, Frame(Opcode.BINARY, CODEC.encode(request)).serialize(mask=True)  # a client's frame: masked


def server_protocol() -> ServerProtocol:
    """The websockets protocol of one server connection, as ``DirectConnection`` makes it, after the opening
    handshake of a msgpack client: what parses the frames that arrive on it."""
    protocol = ServerProtocol(subprotocols=[MSGPACK], max_size=64 * 1024)
    protocol.__class__ = HttpAwareProtocol
    protocol.parser = protocol.parse()
    next(protocol.parser)
    client = ClientProtocol(parse_uri("ws://127.0.0.1/ws"), subprotocols=[MSGPACK])
    protocol.receive_data(client.connect().serialize())
    request = protocol.events_received()[0]
    protocol.send_response(protocol.accept(request))
    protocol.data_to_send()
    return protocol


def one_move(hall: Hall, protocol: ServerProtocol, conn: int, frame: bytes, now: float, queue: list[Any]) -> int:
    """Everything the server does with a move's frame but the socket; the bytes written."""
    protocol.receive_data(frame)  # as DirectConnection.data_received and DirectMessages.process_event do
    events = protocol.events_received()
    protocol.data_to_send()
    data = bytes(events[0].data)
    msg = validate_request(CODEC.decode(data))
    if isinstance(msg, ProtocolError):
        raise SystemExit(f"the benchmark sent an invalid move: {msg.message}")
    out = hall.handle(conn, msg, now)
    queue.extend(out.writes)
    frames: dict[int, bytes] = {}
    written = 0
    for _, message in out.messages:
        frame = frames.get(id(message))
        if frame is None:
            payload = CODEC.encode(message)
            frame = frames[id(message)] = frame_header(True, len(payload)) + payload
        written += len(frame)
    if out.ended:
        hall.committed(out, now)
    return written


def run(table: Table, moves: int) -> tuple[float, int]:
    """Play ``moves`` moves round-robin over the rooms; CPU seconds spent in :func:`one_move` alone and moves."""
    hall, queue, protocols = table.hall, table.queue, table.protocols
    spent = 0.0
    done = 0
    index = 0
    rooms = len(table.rooms)
    cpu = time.process_time
    while done < moves:
        nxt = table.next_move(index)
        index = (index + 1) % rooms
        if nxt is None:
            continue
        conn, data = nxt
        table.now += 0.0001
        start = cpu()
        one_move(hall, protocols[conn], conn, data, table.now, queue)
        spent += cpu() - start
        done += 1
        if len(queue) > 10_000:
            queue.clear()
    return spent, done


def callgrind(*command: str) -> str:
    """Ask the callgrind running this process (``callgrind_control``); its answer."""
    try:
        done = subprocess.run(["callgrind_control", *command, str(os.getpid())], capture_output=True, text=True,
                              check=False, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SystemExit(f"--instructions: callgrind_control did not answer ({exc}); run this under valgrind "
                         "--tool=callgrind --instr-atstart=no") from None
    return done.stdout


def instructions_so_far() -> int:
    """The instructions callgrind has counted in this process (its instrumentation must be on)."""
    for line in callgrind("-e", "Ir").splitlines():
        words = line.split()
        if len(words) == 3 and words[0] == "Th":
            return int(words[2].replace(",", ""))
    raise SystemExit("--instructions: callgrind gave no count; run this under valgrind --tool=callgrind "
                     "--instr-atstart=no")


def count_instructions(table: Table, moves: int) -> None:
    """Play ``moves`` moves with callgrind's instrumentation on, and print the instructions a move."""
    callgrind("-i", "on")
    start = instructions_so_far()
    run(table, moves)
    spent = instructions_so_far() - start
    callgrind("-i", "off")
    print(f"hall cost of a move (frame read, decode, validate, Hall.handle, hand-off, encode), {len(table.rooms)} "
          f"rooms: {spent / moves:,.0f} instructions ({moves} moves, picking each one's move included)")


def move_arguments(description: str, measured: str) -> argparse.ArgumentParser:
    """The options of a benchmark that plays the table's moves (``--rooms``, ``--moves``, ``--seed``, ``--profile``,
    ``--instructions``); ``measured`` says what one measurement is (``a repeat``)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--rooms", type=int, default=100, help="rooms played round-robin (default 100)")
    parser.add_argument("--moves", type=int, default=20_000, help=f"moves measured {measured} (default 20000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help=f"print cProfile's table of {measured} instead")
    parser.add_argument("--instructions", action="store_true",
                        help=f"under valgrind --tool=callgrind --instr-atstart=no: the instructions of {measured}")
    return parser


def main() -> None:
    parser = move_arguments(__doc__.splitlines()[0], "a repeat")
    parser.add_argument("--repeats", type=int, default=5, help="repeats; the minimum counts (default 5)")
    args = parser.parse_args()
    if args.rooms < 1 or args.moves < 1 or args.repeats < 1:
        parser.error("--rooms, --moves and --repeats must be at least 1")
    table = Table(args.rooms, args.seed)
    run(table, min(args.moves, 2000))  # warm up
    if args.instructions:
        count_instructions(table, args.moves)
        return
    if args.profile:
        profile = cProfile.Profile()
        profile.enable()
        run(table, args.moves)
        profile.disable()
        pstats.Stats(profile).sort_stats("tottime").print_stats(30)
        return
    figures = []
    for _ in range(args.repeats):
        spent, done = run(table, args.moves)
        figures.append(spent / done * 1e6)
    print(f"hall cost of a move (frame read, decode, validate, Hall.handle, hand-off, encode), {args.rooms} rooms: "
          f"min {min(figures):.1f} us, median {sorted(figures)[len(figures) // 2]:.1f} us CPU "
          f"({args.repeats} x {args.moves} moves)")


if __name__ == "__main__":
    main()
