"""The server's cost of keepalive pings: instructions a ping (its pong read included) and a connection-second.

A ``PlyhallServer`` in this process (uvloop, as ``plyhall serve`` runs it) serves ``--connections`` idle WebSocket
connections held by a second process (websockets' client, which answers every ping and sends nothing else). The
server pings every ``--interval`` seconds; after a warm-up of two intervals (every connection pinged at least once),
callgrind counts the server process's instructions over ``--window`` seconds. With ``--pings off`` the server sends
no pings: what is left is the idle loop's own cost, and the difference is what the keepalive costs (a connection
that talks is pinged as one that does not: only a pong tells the sweep that the peer reads)::

    valgrind --tool=callgrind --instr-atstart=no .venv/bin/python benchmarks/keepalive_cost.py --instructions
    valgrind --tool=callgrind --instr-atstart=no .venv/bin/python benchmarks/keepalive_cost.py --instructions \\
        --pings off

Pings are counted by the server's keepalive sweep (``server.keepalive.pings``) where it has one, else (a tree from
before it, websockets' keepalive) by a wrapper around websockets' ``Protocol.send_ping``, which that tree's pings go
through (a few hundred instructions a ping, counted with them). The window is wall-clock time,
so how many pings fall in it depends on how fast callgrind runs the server; the figure a ping does not. To measure
another revision, copy this script into a worktree of it and run it there (it imports the tree it sits in). Without
``--instructions``: the CPU time of the window (a rough figure; say the load average with it).
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(1, str(Path(__file__).resolve().parent))

from hall_cost import callgrind, instructions_so_far  # noqa: E402
from websockets.protocol import Protocol  # noqa: E402

from server.core.hall import Limits  # noqa: E402
from server.io import event_loop  # noqa: E402
from server.io.server import PlyhallServer  # noqa: E402
from server.storage.sqlite import SQLiteStorage  # noqa: E402

PINGS = [0]  # pings the server sent (the wrapper below counts them)
_send_ping = Protocol.send_ping


def _counted_send_ping(self: Protocol, data: bytes) -> None:
    PINGS[0] += 1
    _send_ping(self, data)


Protocol.send_ping = _counted_send_ping  # type: ignore[method-assign]


async def hold(port: int, connections: int) -> None:
    """The client process: open ``connections`` connections, say so on stdout, keep them until stdin ends."""
    from websockets.asyncio.client import connect

    held = []
    for _ in range(connections):
        held.append(await connect(f"ws://127.0.0.1:{port}/ws", ping_interval=None, open_timeout=120,
                                  close_timeout=1))
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    for ws in held:
        ws.transport.abort()


async def measure(args: argparse.Namespace) -> None:
    """Serve the idle connections and count the window's instructions (or CPU time)."""
    interval = args.interval if args.pings == "on" else None
    with tempfile.TemporaryDirectory() as folder:
        server = PlyhallServer(SQLiteStorage(Path(folder) / "keepalive.db"), port=0, ping_interval=interval,
                               ping_timeout=args.interval if interval is not None else None,
                               limits=Limits(max_connections_per_address=0, max_opening_per_address=0))
        await server.start()
        client = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--hold", str(server.port), "--connections", str(args.connections),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            assert client.stdout is not None and client.stdin is not None
            line = await asyncio.wait_for(client.stdout.readline(), 600)
            if line.strip() != b"ready":
                raise SystemExit("the client process failed")
            while len(server.connections) < args.connections:
                await asyncio.sleep(0.1)
            await asyncio.sleep(2 * args.interval)  # every connection pinged once: its keepalive in its stride
            looks = _looks(server)
            pings = _pings(server)
            if args.instructions:
                callgrind("-i", "on")
                start = instructions_so_far()
            cpu = time.process_time()
            await asyncio.sleep(args.window)
            cpu = time.process_time() - cpu
            if args.instructions:
                spent = instructions_so_far() - start
                callgrind("-i", "off")
            pings = _pings(server) - pings
            looks = _looks(server) - looks
            connection_seconds = args.connections * args.window
            kind = "idle"
            if args.instructions:
                per_ping = f", {spent / pings:,.0f} a ping" if pings else ""
                print(f"pings {args.pings}, {args.connections} {kind} connections, interval {args.interval:g} s, "
                      f"{args.window:g} s: {spent:,} instructions, {pings:,} pings{per_ping}, {looks:,} looks, "
                      f"{spent / connection_seconds:,.0f} a connection-second", flush=True)
            else:
                print(f"pings {args.pings}, {args.connections} {kind} connections, interval {args.interval:g} s, "
                      f"{args.window:g} s: {cpu:.3f} s CPU, {pings:,} pings, {looks:,} looks, "
                      f"{cpu / connection_seconds * 1e6:.1f} µs CPU a connection-second", flush=True)
            client.stdin.close()
            await asyncio.wait_for(client.wait(), 60)
        finally:
            if client.returncode is None:
                client.kill()
                await client.wait()
            await server.stop(5.0)


def _looks(server: PlyhallServer) -> int:
    """The connections the keepalive sweep has looked at so far (0 without one)."""
    sweep = getattr(server, "keepalive", None)
    return 0 if sweep is None else sweep.looks


def _pings(server: PlyhallServer) -> int:
    """The pings ``server`` has sent so far."""
    sweep = getattr(server, "keepalive", None)
    return PINGS[0] if sweep is None else sweep.pings


def main() -> None:
    """Parse the options; measure (or, in the client process, hold the connections)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=300, help="idle connections (default 300)")
    parser.add_argument("--interval", type=float, default=1.0, help="the server's ping interval and timeout, seconds")
    parser.add_argument("--window", type=float, default=10.0, help="seconds measured (default 10)")
    parser.add_argument("--pings", choices=("on", "off"), default="on", help="off: no keepalive at all")
    parser.add_argument("--instructions", action="store_true",
                        help="under valgrind --tool=callgrind --instr-atstart=no: count instructions")
    parser.add_argument("--hold", type=int, metavar="PORT", help=argparse.SUPPRESS)  # the client process
    args = parser.parse_args()
    if args.hold is not None:
        event_loop.run(hold(args.hold, args.connections))
        return
    event_loop.run(measure(args))


if __name__ == "__main__":
    main()
