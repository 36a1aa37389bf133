"""The storage's cost of a move: the writer's hand-off and the SQLite commit of each loop turn's batch, into a real
database file, measured in instructions under callgrind (or CPU time without it).

The writes are the hall's own: ``--rooms`` Connect Four rooms (as ``hall_cost.py`` sets them up) play random games
through ``Hall.handle``, and each move's outbox keeps its writes (``MovePlayed``; at a game's end ``GameEnded``,
the room's ``RoomSaved`` and the next game's ``GameStarted``). The set-up plays them all first; what is measured is
what the server does with them: ``LoopWriter.submit`` of each outbox's writes with the outbox held until its
commit (as ``PlyhallServer.dispatch`` holds it), and once every ``--per-turn`` outboxes the end of the loop's turn:
``LoopWriter``'s commit (``SQLiteStorage.apply``: one transaction) and the held
outboxes released (``on_commit``). The database is a SQLite file in WAL mode in a temporary folder, and the garbage
collector set as ``ServingGC`` sets it. The server checkpoints on a thread of its own, once a second; here a round
of it (``catch_up``) runs after each 5,000 moves, outside the measured time, so that the log starts over as on the
server (without it, it grew through a long run: 10 µs a move over 40,000 moves, 32 µs over 400,000).

    .venv/bin/python benchmarks/writer_cost.py --moves 20000
    .venv/bin/python benchmarks/writer_cost.py --profile
    PYTHONHASHSEED=0 valgrind --tool=callgrind --instr-atstart=no .venv/bin/python benchmarks/writer_cost.py \\
        --instructions --moves 2000

``--pages`` prints instead where the measured commits' pages go: the write-ahead log's frames, read after the run
(the set-up's checkpointed away first), each page named by the B-tree that holds it (SQLite's ``dbstat``)::

    .venv/bin/python benchmarks/writer_cost.py --pages --moves 4000 --per-turn 48
"""

from __future__ import annotations

import collections
import cProfile
import gc
import pstats
import sqlite3
import struct
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.hall_cost import Table, callgrind, instructions_so_far, move_arguments  # noqa: E402
from protocol.messages import ProtocolError, validate_request  # noqa: E402
from server.core.outbox import HallOutbox  # noqa: E402
from server.io.gc_policy import GC_THRESHOLD, NEVER  # noqa: E402
from server.storage.sqlite import SQLiteStorage, catch_up  # noqa: E402
from server.storage.writer import LoopWriter  # noqa: E402

CHECKPOINT_MOVES = 5_000
"""Moves between two rounds of checkpoints: a second's worth at 5,000 games (the server runs one a second)."""


class Tally:
    """What ``read`` counts (CPU seconds, instructions) over the measured stretches only: :meth:`start` and
    :meth:`stop` around each, ``on`` before a stretch's first reading and ``off`` after its last."""

    def __init__(self, read: Callable[[], float], on: Callable[[], object] = lambda: None,
                 off: Callable[[], object] = lambda: None) -> None:
        self.read, self.on, self.off = read, on, off
        self.spent = 0.0

    def start(self) -> None:
        """A measured stretch begins."""
        self.on()
        self.spent -= self.read()

    def stop(self) -> None:
        """It ends."""
        self.spent += self.read()
        self.off()


class TurnLoop:
    """What ``LoopWriter`` asks of the event loop (``call_soon``), run by hand: :meth:`end_turn` runs what was
    scheduled, as the loop does at the end of a turn."""

    def __init__(self) -> None:
        self.ready: list[Callable[[], Any]] = []
        self.clock = 0.0

    def time(self) -> float:
        """The loop's clock: a second a turn, so that the writer's spacing of commits never holds one back (the
        moves of a commit are ``--per-turn``'s)."""
        return self.clock

    def call_soon(self, callback: Callable[[], Any]) -> None:
        """Run ``callback`` at the end of this turn."""
        self.ready.append(callback)

    def call_later(self, delay: float, callback: Callable[[], Any]) -> None:
        """A failed commit's retry: the benchmark stops there."""
        raise SystemExit(f"a commit failed: the benchmark's database is not writable ({delay} s retry)")

    def end_turn(self) -> None:
        """Run what was scheduled this turn."""
        ready, self.ready = self.ready, []
        for callback in ready:
            callback()
        self.clock += 1.0


def play(table: Table, moves: int, order: str = "round-robin") -> list[HallOutbox]:
    """``moves`` random moves over the table's rooms, through the hall, the rooms taking turns (``round-robin``)
    or each move by a room picked at random (``random``, as a server's games come); each move's outbox."""
    outboxes = []
    index = 0
    rooms = len(table.rooms)
    while len(outboxes) < moves:
        if order == "random":
            index = table.rng.randrange(rooms)
        nxt = table.next_request(index)
        index = (index + 1) % rooms
        if nxt is None:
            continue
        conn, request = nxt
        msg = validate_request(request)
        if isinstance(msg, ProtocolError):
            raise SystemExit(f"the benchmark made an invalid move: {msg.message}")
        table.now += 0.0001
        out = table.hall.handle(conn, msg, table.now)
        if out.ended:
            table.hall.committed(out, table.now)
        outboxes.append(out)
    return outboxes


class Store:
    """A SQLite file with the server's writer on it, and the outboxes held until their writes are committed."""

    def __init__(self, folder: str) -> None:
        self.storage = SQLiteStorage(Path(folder) / "plyhall.db")
        self.storage.checkpoint_in_background(3600.0)  # its rounds are run by hand, between the measured commits
        self.checkpoints = self.storage._connect()
        self.loop = TurnLoop()
        self.held: deque[tuple[int, HallOutbox, float]] = deque()
        self.released = 0
        self.writer = LoopWriter(self.storage, self.loop, self.committed)  # type: ignore[arg-type]
        self.submitted = 0
        # the moves log goes into the moves table once a second on a server: here once a second's worth of moves
        self.storage.use_clock(lambda: float(self.submitted // CHECKPOINT_MOVES))

    def committed(self, seq: int) -> None:
        """``PlyhallServer._committed`` without the delivery: release the outboxes committed up to ``seq``."""
        held = self.held
        while held and held[0][0] <= seq:
            held.popleft()
            self.released += 1

    def serve(self) -> None:
        """The collector as ``ServingGC`` sets it on a server: what exists now frozen, the youngest generation
        collected every ``GC_THRESHOLD`` net new objects, the others never (its timed passes left out)."""
        gc.collect()
        gc.freeze()
        gc.set_threshold(GC_THRESHOLD, NEVER, NEVER)

    def run(self, outboxes: list[HallOutbox], per_turn: int) -> None:
        """Hand every outbox's writes to the writer, ``per_turn`` outboxes a turn of the loop."""
        writer, held, monotonic = self.writer, self.held, time.monotonic
        for start in range(0, len(outboxes), per_turn):
            for out in outboxes[start:start + per_turn]:
                held.append((writer.submit(out.writes), out, monotonic()))  # PlyhallServer.dispatch's hand-off
            self.submitted += per_turn
            self.loop.end_turn()

    def measure(self, outboxes: list[HallOutbox], per_turn: int, pause: Callable[[], object],
                resume: Callable[[], object]) -> None:
        """:meth:`run` of ``outboxes``, a round of the checkpoint thread (``catch_up``) after each second's worth
        of moves at 5,000 games (``CHECKPOINT_MOVES``), between ``pause()`` and ``resume()``: the server runs it
        on a thread of its own, and without it the log would grow through the run, each commit slower than the
        last, as it is on no server."""
        for start in range(0, len(outboxes), CHECKPOINT_MOVES):
            self.run(outboxes[start:start + CHECKPOINT_MOVES], per_turn)
            pause()
            catch_up(self.checkpoints)
            resume()

    def close(self) -> None:
        """Stop the checkpoint thread and close the database."""
        self.checkpoints.close()
        self.storage.close()


def pages_by_tree(folder: str) -> tuple[int, collections.Counter[str]]:
    """The commits in the write-ahead log of the database in ``folder``, and how many pages of each B-tree (table or
    index) they wrote, each page counted once a commit (SQLite writes a page once a commit, as a frame)."""
    database = Path(folder) / "plyhall.db"
    log = (Path(folder) / "plyhall.db-wal").read_bytes()
    conn = sqlite3.connect(database)
    try:
        trees = {page: name for name, page in conn.execute("SELECT name, pageno FROM dbstat")}
    finally:
        conn.close()
    page_size = struct.unpack(">I", log[8:12])[0]
    offset, commits, pages, counts = 32, 0, set(), collections.Counter()  # 32: the log's header, 24: a frame's
    while offset + 24 + page_size <= len(log):
        page, size_after = struct.unpack(">II", log[offset:offset + 8])
        pages.add(page)
        offset += 24 + page_size
        if size_after:  # a commit's last frame
            commits += 1
            counts.update(trees.get(number, "(freed since)") for number in pages)
            pages = set()
    return commits, counts


def checkpoint(folder: str) -> None:
    """Move everything the write-ahead log holds into the database and empty the log."""
    conn = sqlite3.connect(Path(folder) / "plyhall.db")
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    finally:
        conn.close()


def main() -> None:
    parser = move_arguments(__doc__.splitlines()[0], "the run")
    parser.add_argument("--per-turn", type=int, default=10,
                        help="moves committed together, as in one turn of the event loop (default 10)")
    parser.add_argument("--order", choices=("round-robin", "random"), default="round-robin",
                        help="the rooms' moves in turn (the figures of earlier rounds), or each move by a room picked "
                             "at random, as a server's games come (their moves spread over the moves' index)")
    parser.add_argument("--pages", action="store_true",
                        help="print the pages a commit writes, by table and index, instead of the CPU time")
    args = parser.parse_args()
    if args.rooms < 1 or args.moves < 1 or args.per_turn < 1:
        parser.error("--rooms, --moves and --per-turn must be at least 1")
    table = Table(args.rooms, args.seed)
    warm = play(table, min(args.moves, 2000), args.order)
    outboxes = play(table, args.moves, args.order)
    writes = sum(len(out.writes) for out in outboxes)
    with tempfile.TemporaryDirectory(prefix="writer_cost") as folder:
        store = Store(folder)
        try:
            store.run(warm, args.per_turn)
            catch_up(store.checkpoints)  # the measured commits start on a log with nothing left to copy
            store.serve()
            what = (f"storage cost of a move (hand-off, SQLite commit a turn of {args.per_turn} moves), {args.rooms} "
                    f"rooms, {args.order}, {args.moves} moves ({writes} writes)")
            if args.instructions:
                # callgrind tells its count only while it counts
                tally = Tally(instructions_so_far, lambda: callgrind("-i", "on"), lambda: callgrind("-i", "off"))
                tally.start()
                store.measure(outboxes, args.per_turn, tally.stop, tally.start)
                tally.stop()
                print(f"{what}: {tally.spent / args.moves:,.0f} instructions")
            elif args.pages:
                checkpoint(folder)  # the log holds the measured commits only
                store.run(outboxes, args.per_turn)
                commits, counts = pages_by_tree(folder)
                print(f"{what}: {sum(counts.values()) / max(1, commits):.1f} pages a commit ({commits} commits)")
                for name, count in counts.most_common():
                    print(f"  {count / commits:6.2f}  {name}")
            elif args.profile:
                profile = cProfile.Profile()
                profile.enable()
                store.measure(outboxes, args.per_turn, profile.disable, profile.enable)
                profile.disable()
                pstats.Stats(profile).sort_stats("tottime").print_stats(25)
            else:
                tally = Tally(time.process_time)
                tally.start()
                store.measure(outboxes, args.per_turn, tally.stop, tally.start)
                tally.stop()
                print(f"{what}: {tally.spent / args.moves * 1e6:.1f} us CPU")
            if store.released != len(warm) + len(outboxes) or store.writer.queued:
                raise SystemExit(f"only {store.released} of {len(warm) + len(outboxes)} outboxes were committed")
        finally:
            store.close()


if __name__ == "__main__":
    main()
