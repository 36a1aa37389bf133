"""The server's cost of a move with its glue: a move's frame handed to the connection as the event loop hands it
(``data_received``), through the server's websockets parser, ``Delivery._receive`` (rate limit, decode,
validate, ``Hall.handle``, metrics, ``dispatch``), then the commit's ``_committed`` -> ``_deliver`` ->
``Connection.push`` -> ``transport.write`` of each frame; only the socket and the database are left out.

``hall_cost.py`` measures the hall's share of this (the frame read, decode, validate, ``Hall.handle``, encoding);
this adds what the I/O side does around it: the connection's callbacks, the rate limit, dispatch and delivery,
the metrics and the writes. Each of ``--rooms`` Connect Four rooms holds two players on their own connections
(msgpack, after a real opening handshake with websockets' client), each connection a real ``DirectConnection``
served by the server's own ``_connection`` coroutine over a transport that keeps nothing; the writer stands in
for the database (a commit a move, as a busy ``LoopWriter`` makes one a loop turn). ``--spectators N`` adds N
watchers to each room on connections of their own, as the scale run of ``server_load.py`` has one: a move is then one
more write for each.

Under valgrind's callgrind, started with instrumentation off, ``--instructions`` prints the instructions a move of
the measured moves only (the figure includes picking each one's move, as ``hall_cost.py``'s does)::

    valgrind --tool=callgrind --instr-atstart=no .venv/bin/python benchmarks/glue_cost.py --instructions --moves 2000

``--bytecodes`` counts the bytecodes the server runs a move, by function (a trace function's opcode events around
the server's part only): where its Python work goes, exactly, on any machine, however busy::

    .venv/bin/python benchmarks/glue_cost.py --bytecodes --moves 2000

Without these, cProfile's table of the measured moves (``--profile``) or their CPU time a move.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import cProfile
import pstats
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(1, str(Path(__file__).resolve().parent))

from plyhall import compiled  # noqa: E402

CORE = compiled.use()  # before the server's modules: compiled where `plyhall compile` built them ($PLYHALL_CORE)

from hall_cost import Table, callgrind, instructions_so_far  # noqa: E402
from websockets.client import ClientProtocol  # noqa: E402
from websockets.frames import Frame, Opcode  # noqa: E402
from websockets.protocol import OPEN  # noqa: E402
from websockets.server import ServerProtocol  # noqa: E402
from websockets.uri import parse_uri  # noqa: E402

from protocol.codec import CODECS, MAX_MESSAGE_BYTES, MSGPACK  # noqa: E402
from protocol.games import GAMES  # noqa: E402
from server.core.hall import Limits  # noqa: E402
from server.io.server import PlyhallServer  # noqa: E402
from server.io.transport import DirectConnection  # noqa: E402
from server.storage.sqlite import SQLiteStorage  # noqa: E402

CODEC = CODECS[MSGPACK]


class NullTransport(asyncio.Transport):
    """A transport whose socket takes everything at once: it counts what is written and keeps nothing."""

    def __init__(self, port: int) -> None:
        super().__init__()
        self.port = port
        self.written = 0
        self.writes = 0
        self.closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:  # noqa: D102
        self.written += len(data)
        self.writes += 1

    def is_closing(self) -> bool:  # noqa: D102
        return self.closing

    def get_write_buffer_size(self) -> int:  # noqa: D102
        return 0

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:  # noqa: D102
        pass

    def pause_reading(self) -> None:  # noqa: D102
        pass

    def resume_reading(self) -> None:  # noqa: D102
        pass

    def get_extra_info(self, name: str, default: Any = None) -> Any:  # noqa: D102
        return ("127.0.0.1", self.port) if name in ("peername", "sockname") else default

    def can_write_eof(self) -> bool:  # noqa: D102
        return True

    def write_eof(self) -> None:  # noqa: D102
        pass

    def close(self) -> None:  # noqa: D102
        self.closing = True

    def abort(self) -> None:  # noqa: D102
        self.closing = True


class CommitEachMove:
    """The writer's stand-in: what is submitted counts as committed when the benchmark says so."""

    def __init__(self) -> None:
        self.submitted = 0
        self.committed = 0
        self.healthy = True

    def submit(self, writes: Sequence[Any]) -> int:
        """Take a batch of writes; its sequence number."""
        self.submitted += len(writes)
        return self.submitted


class Bench:
    """A server without sockets or database, its rooms of two players, and the bytes of each player's next move."""

    next_request = Table.next_request  # the connection to move in a room and its move, picked as hall_cost picks it
    next_move = Table.next_move  # the same as a client's frame

    def __init__(self, rooms: int, seed: int, directory: str, spectators: int = 0) -> None:
        limits = Limits(max_rooms=max(rooms, Limits().max_rooms), max_connections_per_address=0,
                        max_opening_per_address=0, max_rooms_per_address=0)
        self.server = PlyhallServer(SQLiteStorage(Path(directory) / "glue.db"), port=0, limits=limits)
        self.writer = CommitEachMove()
        self.server.writer = self.writer  # type: ignore[assignment]
        self.rng = random.Random(seed)
        self.game = GAMES["connect4"]
        self.hall = self.server.hall
        self.rooms: list[tuple[str, DirectConnection, DirectConnection]] = []
        self.spectators = spectators  # a room's watchers, each on a connection of its own
        self.watchers: list[DirectConnection] = []
        self.handler_tasks: set[asyncio.Task] = set()  # what websockets' Server keeps of each connection's handler

    async def handler(self, ws: DirectConnection) -> None:
        """What websockets' ``Server.handler`` does with a new connection: the handshake, then the server's own
        coroutine."""
        await ws.handshake()
        await self.server._connection(ws)

    def is_serving(self) -> bool:
        """Asked by the handshake (a server that stopped answers 503)."""
        return True

    async def open(self, port: int) -> DirectConnection:
        """A connection after a msgpack client's opening handshake, served by the server's own coroutine."""
        protocol = ServerProtocol(subprotocols=[MSGPACK], max_size=MAX_MESSAGE_BYTES)
        ws = DirectConnection(protocol, self, ping_interval=None, ping_timeout=None)  # type: ignore[arg-type]
        ws.connection_made(NullTransport(port))
        await asyncio.sleep(0)
        client = ClientProtocol(parse_uri("ws://127.0.0.1/ws"), subprotocols=[MSGPACK])
        ws.data_received(client.connect().serialize())
        for _ in range(10):
            await asyncio.sleep(0)
        if ws.protocol.state is not OPEN or ws.subprotocol != MSGPACK or ws.on_message is None:
            raise SystemExit("the benchmark's opening handshake failed")
        return ws

    def send(self, ws: DirectConnection, msg: dict[str, Any]) -> None:
        """``msg`` arrives on ``ws`` as a client's masked frame; its writes are committed."""
        ws.data_received(Frame(Opcode.BINARY, CODEC.encode(msg)).serialize(mask=True))
        self.server._committed(self.writer.submitted)

    async def seat(self, rooms: int) -> None:
        """Two players in each room, logged in and seated; the server's timer task running, as ``start`` runs it."""
        self.server._timer_task = asyncio.create_task(self.server._timer())
        for i in range(rooms):
            first, second = await self.open(2 * i + 1), await self.open(2 * i + 2)
            self.send(first, {"type": "login", "name": f"a{i}"})
            self.send(second, {"type": "login", "name": f"b{i}"})
            name = f"room {i}"
            self.send(first, {"type": "create_room", "game": "connect4", "name": name, "games": 1000,
                              "time_control": {"per_move": 86400}})
            self.send(first, {"type": "join", "room": name, "seat": 0})
            self.send(second, {"type": "join", "room": name, "seat": 1})
            for k in range(self.spectators):
                watcher = await self.open(2 * rooms + i * self.spectators + k + 1)
                self.send(watcher, {"type": "login", "name": f"w{i}-{k}"})
                self.send(watcher, {"type": "join", "room": name, "role": "spectator"})
                self.watchers.append(watcher)
            self.rooms.append((name, first, second))
        for _ in range(3):
            await asyncio.sleep(0)  # the timer sleeps until the first deadline (a move's clock: a day)
        if self.server.metrics.errors:
            raise SystemExit(f"the benchmark's set-up was refused: {dict(self.server.metrics.errors)}")

    def run(self, moves: int, trace: Any = None) -> float:
        """Play ``moves`` moves round-robin over the rooms; the CPU seconds of the server's part alone (``trace``, a
        ``sys.settrace`` function, set around that part only)."""
        server, writer = self.server, self.writer
        spent = 0.0
        done = index = 0
        cpu = time.process_time
        before = server.metrics.moves
        while done < moves:
            nxt = self.next_move(index)
            index = (index + 1) % len(self.rooms)
            if nxt is None:
                continue
            ws, frame = nxt
            start = cpu()
            if trace is not None:
                sys.settrace(trace)
            ws.data_received(frame)
            server._committed(writer.submitted)
            if trace is not None:
                sys.settrace(None)
            spent += cpu() - start
            done += 1
        if server.metrics.moves - before != moves or server.metrics.errors:
            raise SystemExit(f"{server.metrics.moves - before} of {moves} moves played; errors "
                             f"{dict(server.metrics.errors)}")
        return spent

    async def close(self) -> None:
        """Lose every connection (the server's coroutines see them closed and end), stop the timer."""
        for _, first, second in self.rooms:
            for ws in (first, second):
                ws.connection_lost(None)
        for ws in self.watchers:
            ws.connection_lost(None)
        await asyncio.wait_for(asyncio.gather(*self.handler_tasks, return_exceptions=True), 30)
        self.server._timer_task.cancel()
        self.server.reads.shutdown(wait=False)
        self.server.storage.close()


def count_bytecodes(table: Bench, moves: int) -> collections.Counter[str]:
    """The bytecodes the interpreter runs in each function (``file:name``) over ``moves`` measured moves, counted
    by a trace function's opcode events: where the server's Python work goes, exactly, where a profiler's clock and
    callgrind's instructions do not tell functions apart."""
    counts: collections.Counter[str] = collections.Counter()
    root = str(Path(__file__).resolve().parent.parent) + "/"

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        if event == "opcode":
            code = frame.f_code
            where = code.co_filename.replace(root, '')
            if where == "<string>" and "self" in frame.f_locals:  # code made at run time (a dataclass's __init__)
                where = f"<string of {type(frame.f_locals['self']).__qualname__}>"
            counts[f"{where}:{code.co_name}"] += 1
        return tracer

    table.run(moves, tracer)
    return counts


async def bench(args: argparse.Namespace) -> None:
    """Set up, warm up, measure as asked."""
    rooms = f"{args.rooms} rooms" + watching(args.spectators)
    with tempfile.TemporaryDirectory() as directory:
        table = Bench(args.rooms, args.seed, directory, args.spectators)
        try:
            await table.seat(args.rooms)
            table.run(min(args.moves, 2000))  # warm up
            if args.instructions:
                callgrind("-i", "on")
                start = instructions_so_far()
                table.run(args.moves)
                spent = instructions_so_far() - start
                callgrind("-i", "off")
                print(f"server cost of a move with its glue (data_received .. transport.write), {rooms}: "
                      f"{spent / args.moves:,.0f} instructions ({args.moves} moves, picking each one's move "
                      f"included), {CORE}")
            elif args.bytecodes:
                counts = count_bytecodes(table, args.moves)
                print(f"bytecodes the server runs a move, {rooms}: {sum(counts.values()) / args.moves:,.0f} "
                      f"({args.moves} moves, {CORE}); by function:")
                for name, count in counts.most_common(30):
                    print(f"{count / args.moves:8.1f}  {name}")
            elif args.profile:
                profile = cProfile.Profile()
                profile.enable()
                table.run(args.moves)
                profile.disable()
                pstats.Stats(profile).sort_stats("tottime").print_stats(35)
            else:
                spent = table.run(args.moves)
                print(f"server cost of a move with its glue, {rooms}: {spent / args.moves * 1e6:.1f} us CPU "
                      f"({args.moves} moves), {CORE}")
        finally:
            await table.close()


def watching(spectators: int) -> str:
    """What a figure's line says of the rooms' spectators (nothing when there are none)."""
    return f" with {spectators} spectator{'s' if spectators > 1 else ''} each" if spectators else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=100, help="rooms played round-robin (default 100)")
    parser.add_argument("--moves", type=int, default=20_000, help="moves measured (default 20000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--spectators", type=int, default=0,
                        help="spectators in each room, each on a connection of its own (default 0; the scale run of "
                             "server_load.py has 1): every move is one more write for each")
    parser.add_argument("--profile", action="store_true", help="print cProfile's table of the measured moves")
    parser.add_argument("--bytecodes", action="store_true",
                        help="count the bytecodes the server runs a move, by function (a trace function's opcode "
                             "events; slow: a few thousand moves are enough)")
    parser.add_argument("--instructions", action="store_true",
                        help="under valgrind --tool=callgrind --instr-atstart=no: the instructions a move")
    args = parser.parse_args()
    if args.rooms < 1 or args.moves < 1:
        parser.error("--rooms and --moves must be at least 1")
    if not 0 <= args.spectators <= 100:
        parser.error("--spectators must be from 0 to 100")
    asyncio.run(bench(args))


if __name__ == "__main__":
    main()
