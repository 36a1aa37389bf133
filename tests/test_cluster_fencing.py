"""Fenced ownership of rooms (issue 40), against real ``plyhall serve`` nodes, PostgreSQL and Redis.

A node's PostgreSQL advisory lock keeps other nodes from adopting its rooms while it lives; when that
lock's connection drops (a database restart, a terminated backend) and the node then stalls past its
lease, another node adopts its rooms. The node that wakes must not go on serving them: every write
carries its epoch (a fencing token) and the database refuses the deposed node's, which stops serving and
exits; its clients resync on the new owner. And a node whose lock connection merely dropped takes the
lock again before anyone can adopt its rooms.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
import pytest

from client.sdk import Client, ServerError
from protocol.games import get_game
from tests.helpers import http_json, login, stop, wait_until
from tests.test_cluster import node

pytestmark = pytest.mark.timeout(240)

GAME = get_game("connect4")


def kill_lock_connection(pg_url: str, name: str) -> int:
    """Terminate the backend holding node ``name``'s lock (its application_name names the node): how many."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        return len(conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name "
                                "LIKE %s", (f"plyhall serve node={name} %",)).fetchall())


def stored(pg_url: str, room: str) -> tuple[list[str], list[str]]:
    """The moves stored for the running game of ``room`` (in order), and the nodes ``room`` is stored under."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        moves = [move for (move,) in conn.execute(
            "SELECT move FROM moves WHERE game_id = (SELECT id FROM games WHERE room = %s AND status = 'running') "
            "ORDER BY seq", (room,)).fetchall()]
        nodes = [name for (name,) in conn.execute("SELECT node FROM rooms WHERE name = %s", (room,)).fetchall()]
    return moves, nodes


async def start_game(url1: str, url2: str, room: str) -> tuple[Client, Client, Any, list[str]]:
    """ann (on node 1, where ``room`` opens) and bob (on node 2) play two moves: (ann, bob, state, moves told)."""
    ann, bob = await login(url1, "ann"), await login(url2, "bob")
    await ann.request({"type": "create_room", "game": "connect4", "name": room, "time_control": {"per_move": 60}})
    await ann.request({"type": "join", "room": room, "seat": 0})
    await bob.request({"type": "join", "room": room, "seat": 1})
    for client in (ann, bob):
        await client.expect("game_start", room=room)
    state, told = GAME.initial_state(), []
    for mover, column in ((ann, 4), (bob, 4)):
        await mover.request({"type": "move", "room": room, "move": str(column)})
        told.append((await bob.expect("moved", room=room))["notation"])
        state = GAME.apply(state, GAME.parse_move(str(column), state))
    return ann, bob, state, told


@asynccontextmanager
async def two_nodes(pg_url: str, redis_url: str) -> AsyncIterator[tuple[list[Any], list[Client]]]:
    """Nodes n1 and n2, each (process, port, url), and a list for the test's clients: all closed after."""
    nodes = [node(pg_url, redis_url, "n1")]
    clients: list[Client] = []
    try:
        nodes.append(node(pg_url, redis_url, "n2"))
        yield nodes, clients
    finally:
        for client in clients:
            await client.close()
        for proc, _, _ in reversed(nodes):
            if proc.returncode is None:  # (a deposed node exited, and its output was read)
                proc.send_signal(signal.SIGCONT)  # a test that failed while a node was stopped
                stop(proc)


def moves_told(client: Client, room: str) -> list[tuple[int, str]]:
    """Every ``moved`` of ``room`` still in ``client``'s inbox: (seq, notation)."""
    return [(msg["seq"], msg["notation"]) for msg in client._inbox if msg.get("type") == "moved"
            and msg.get("room") == room]


async def test_a_deposed_node_stores_and_announces_nothing(pg_url, redis_url):
    """n1's lock connection is terminated and n1 stalls (SIGSTOP) past its lease: n2 adopts the room. When n1
    wakes, ann's move sent to it is neither stored nor announced (the database refuses n1's epoch); n1 closes
    its clients, says why and exits 3; ann resumes on n2 and finds the stored game, stored under n2 only."""
    async with two_nodes(pg_url, redis_url) as ([(n1, _, url1), (_, port2, url2)], clients):
        ann, bob, state, told = await start_game(url1, url2, "Fenced")
        clients += [ann, bob]
        n1.send_signal(signal.SIGSTOP)  # first: stopped, n1 cannot notice the drop and take its lock again
        try:
            assert kill_lock_connection(pg_url, "n1") == 1
            adopted = await bob.expect("game_start", room="Fenced", timeout=30)  # n2 adopted the room
            assert adopted["moves"] == told
        finally:
            n1.send_signal(signal.SIGCONT)
        reply: dict[str, Any] | None = None
        try:
            reply = await ann.request({"type": "move", "room": "Fenced", "move": "3"}, timeout=10)
        except (ConnectionError, ServerError, TimeoutError):
            pass
        assert reply is None, f"the deposed node answered a move: {reply}"
        await wait_until(ann.closed, "n1 closed ann's connection", timeout=20)
        assert ann.ws is not None and ann.ws.close_code == 1012, (ann.ws.close_code, ann.ws.close_reason)
        assert [seq for seq, _ in moves_told(ann, "Fenced")] == [1, 2], "n1 announced a move after it was deposed"
        assert await asyncio.to_thread(n1.wait, 30) == 3
        _, err = n1.communicate(timeout=10)
        assert "deposed" in err
        moves, nodes = stored(pg_url, "Fenced")
        assert moves == told and nodes == ["n2"]
        # ann resumes on the room's new owner, with the stored game, and plays on
        ann2 = await login(url2, "ann", resume=ann.welcome["resume"])
        clients.append(ann2)
        back = await ann2.expect("game_start", room="Fenced")
        assert back["moves"] == told and back["to_move"] == 0
        await ann2.request({"type": "move", "room": "Fenced", "move": "3"})
        told.append((await bob.expect("moved", room="Fenced"))["notation"])
        await asyncio.sleep(0.2)
        assert stored(pg_url, "Fenced") == (told, ["n2"])
        status, health = await asyncio.to_thread(http_json, port2, "/healthz")
        assert status == 200 and health["cluster"]["lock"] == "held"


async def test_a_dropped_lock_is_taken_again_before_anyone_adopts(pg_url, redis_url):
    """n1's lock connection is terminated: n1 takes its lock again within a beat or two (its /healthz and
    /metrics say so), so a stall past its lease afterwards adopts nothing: n1 still owns and serves its room."""
    async with two_nodes(pg_url, redis_url) as ([(n1, port1, url1), (_, _, url2)], clients):
        ann, bob, state, told = await start_game(url1, url2, "Kept")
        clients += [ann, bob]
        epoch = (await asyncio.to_thread(http_json, port1, "/healthz"))[1]["cluster"].get("epoch")
        assert kill_lock_connection(pg_url, "n1") == 1

        def retaken() -> bool:
            return http_json(port1, "/healthz")[1]["cluster"].get("lock_retaken") == 1

        await wait_until(retaken, "n1 took its lock again", timeout=15)
        health = (await asyncio.to_thread(http_json, port1, "/healthz"))[1]
        assert health["cluster"]["lock"] == "held" and health["cluster"]["epoch"] > epoch and not health["degraded"]
        metrics = (await asyncio.to_thread(_text, port1, "/metrics"))
        assert "plyhall_cluster_lock_retaken_total 1.0" in metrics and "plyhall_cluster_lock_held 1.0" in metrics
        n1.send_signal(signal.SIGSTOP)
        stalled = time.monotonic()
        try:
            await asyncio.sleep(1)
            for path in ("/healthz", "/ws"):  # clients that give up on the stalled node before it answers
                await asyncio.to_thread(_give_up, port1, path)
            await asyncio.sleep(4)  # past the 2 s lease: n2 tries to adopt n1, whose lock is held
        finally:
            n1.send_signal(signal.SIGCONT)
        assert time.monotonic() - stalled >= 5
        await ann.request({"type": "move", "room": "Kept", "move": "3"}, timeout=15)
        told.append((await bob.expect("moved", room="Kept", timeout=15))["notation"])
        assert n1.poll() is None and not ann.closed.is_set()
        await asyncio.sleep(0.2)
        assert stored(pg_url, "Kept") == (told, ["n1"])
        _, err = stop(n1)
        assert "Traceback" not in err, f"n1 logged a traceback after its stall:\n{err}"


def _give_up(port: int, path: str) -> None:
    """A request (a WebSocket handshake for /ws) sent to ``port``, whose client closes before any answer."""
    upgrade = "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n" \
              "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" if path == "/ws" else ""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{upgrade}\r\n".encode())


def _text(port: int, path: str) -> str:
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as resp:
        return resp.read().decode()


async def test_a_request_answered_unavailable_is_never_executed(pg_url, redis_url):
    """n1, the room's owner, stalls past its lease (its lock held: nobody adopts). bob's move, forwarded by n2,
    is answered cluster_unavailable, and a spectator's join of n1's room too (not no_such_room); when n1 wakes
    it drops the forwarded move (past its deadline): it is never stored nor announced; bob plays it again."""
    async with two_nodes(pg_url, redis_url) as ([(n1, _, url1), (_, _, url2)], clients):
        ann, bob, state, told = await start_game(url1, url2, "Late")
        sue = await login(url2, "sue")
        clients += [ann, bob, sue]
        await ann.request({"type": "move", "room": "Late", "move": "3"})
        told.append((await bob.expect("moved", room="Late"))["notation"])
        n1.send_signal(signal.SIGSTOP)
        try:
            with pytest.raises(ServerError) as failed:
                await bob.request({"type": "move", "room": "Late", "move": "5"}, timeout=20)
            assert failed.value.code == "cluster_unavailable"
            with pytest.raises(ServerError) as join:
                await sue.request({"type": "join", "room": "Late", "role": "spectator"}, timeout=20)
            assert join.value.code == "cluster_unavailable"
        finally:
            n1.send_signal(signal.SIGCONT)

        for _ in range(60):  # n1 answers again once it renews its lease: it has handled what waited for it
            try:
                await sue.request({"type": "join", "room": "Late", "role": "spectator"}, timeout=20)
                break
            except ServerError as exc:
                assert exc.code == "cluster_unavailable"
                await asyncio.sleep(0.5)
        await asyncio.sleep(0.2)
        assert stored(pg_url, "Late") == (told, ["n1"]), "a move answered cluster_unavailable was stored"
        assert not moves_told(bob, "Late") and [seq for seq, _ in moves_told(ann, "Late")] == [1, 2, 3], \
            "a move answered cluster_unavailable was announced"
        await bob.request({"type": "move", "room": "Late", "move": "5"}, timeout=15)
        told.append((await ann.expect("moved", room="Late", seq=4))["notation"])
        await asyncio.sleep(0.2)
        assert stored(pg_url, "Late") == (told, ["n1"])
