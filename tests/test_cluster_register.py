"""The cluster's register of rooms (issue 40): every room, generated or named, is in the Redis register from
its creation to its end, on real ``plyhall serve`` nodes; a named room closed on one node opens again on another.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
from collections.abc import Callable
from pathlib import Path

import msgpack
import pytest
from redis.asyncio import Redis

from client.connection import Client
from client.sdk import ServerError
from server.io.cluster.base import CLAIM_SESSIONS, PREFIX, REGISTER_SESSIONS, channel
from tests.helpers import http_json, login, stop, wait_until
from tests.test_cluster import node
from tests.test_cluster_fencing import two_nodes

pytestmark = pytest.mark.timeout(240)


async def test_every_generated_room_is_joinable_at_once_from_another_node(pg_url, redis_url):
    """ann creates rooms on n1 one after another; bob, on n2, joins each the moment it exists (before any listing
    could reach n2): n2 finds every one in the register, not only the first."""
    async with two_nodes(pg_url, redis_url) as ([(_, _, url1), (_, _, url2)], clients):
        ann, bob = await login(url1, "ann"), await login(url2, "bob")
        clients += [ann, bob]
        failures = []
        for _ in range(5):
            room = (await ann.request({"type": "create_room", "game": "connect4"}))["room"]["name"]
            try:
                await bob.request({"type": "join", "room": room, "role": "spectator"})
            except ServerError as exc:
                failures.append((room, exc.code))
        assert failures == []


async def listed(client: Client, room: str) -> bool:
    """True when ``room`` is in the room listing ``client``'s node gives."""
    reply = await client.request({"type": "list_rooms"})
    return any(entry["name"] == room for entry in reply["rooms"])


async def test_a_closed_named_room_opens_again_on_another_node(pg_url, redis_url):
    """A named room created on n1 and closed there (its last member left) can be created again on n2 at once,
    while n2 still lists n1's room (n1 publishes its listing's changes a moment later), and the name is then
    taken on n1 (room_exists)."""
    async with two_nodes(pg_url, redis_url) as ([(_, _, url1), (_, _, url2)], clients):
        ann, bob = await login(url1, "ann"), await login(url2, "bob")
        clients += [ann, bob]
        await ann.request({"type": "create_room", "game": "connect4", "name": "Again"})
        await ann.request({"type": "join", "room": "Again", "seat": 0})
        for _ in range(100):  # n2 has heard of the room from n1's listing
            if await listed(bob, "Again"):
                break
            await asyncio.sleep(0.05)
        await ann.request({"type": "leave", "room": "Again"})
        created = await bob.request({"type": "create_room", "game": "connect4", "name": "Again"})
        assert created["room"]["name"] == "Again"
        with pytest.raises(ServerError) as taken:
            await ann.request({"type": "create_room", "game": "connect4", "name": "again"})
        assert taken.value.code == "room_exists"


async def test_what_a_node_gave_up_while_redis_was_away_is_released_when_it_is_back(pg_url, redis_server, redis_url):
    """ann takes a seat in room Stale on n1; Redis stops answering (SIGSTOP) until n1 knows it is away; ann
    leaves (the room closes) and goes. Once Redis answers again, the register no longer says n1 holds the room's
    name nor ann's seat: bob creates Stale on n2, and someone else logs in as ann on n2, without her token."""
    async with two_nodes(pg_url, redis_url) as ([(_, port1, url1), (_, port2, url2)], clients):
        ann, bob = await login(url1, "ann"), await login(url2, "bob")
        clients += [ann, bob]
        await ann.request({"type": "create_room", "game": "connect4", "name": "Stale"})
        await ann.request({"type": "join", "room": "Stale", "seat": 0})

        def redis_is(state: str) -> Callable[[], bool]:
            return lambda: all(http_json(port, "/healthz")[1]["cluster"]["redis"] == state for port in (port1, port2))

        redis_server.freeze()
        try:
            await wait_until(redis_is("down"), "both nodes know Redis is away", timeout=30)
            await ann.request({"type": "leave", "room": "Stale"})
            await ann.close()
        finally:
            redis_server.thaw()
        await wait_until(redis_is("up"), "both nodes are back on Redis", timeout=30)
        created = await bob.request({"type": "create_room", "game": "connect4", "name": "Stale"})
        assert created["room"]["name"] == "Stale"
        again = await login(url2, "ann")  # her seat is given up: the name is anybody's again
        clients.append(again)


async def test_a_room_name_the_hall_refuses_is_refused_for_what_it_is_even_while_redis_is_away(pg_url, redis_server,
                                                                                              redis_url):
    """A name no room may have (too long, or a character the rule refuses) is never looked up in the register: it is
    refused as a bad name at once, even while Redis does not answer (it was "the cluster's register cannot be
    reached", after a look-up that waited for Redis's timeout, for a name that could never be a room's)."""
    async with two_nodes(pg_url, redis_url) as ([(_, port1, url1), _], clients):
        ann = await login(url1, "ann")
        clients.append(ann)
        redis_server.freeze()
        try:
            await wait_until(lambda: http_json(port1, "/healthz")[1]["cluster"]["redis"] == "down",
                             "n1 knows Redis is away", timeout=30)
            for name in ("x" * 5000, "<script>", "Again!"):
                with pytest.raises(ServerError) as refused:
                    await ann.request({"type": "create_room", "game": "connect4", "name": name})
                assert refused.value.code == "bad_message" and re.search("is (not a valid|too long for a) room name",
                                                                         str(refused.value))
        finally:
            redis_server.thaw()


def redis_ports_of(pid: int) -> set[int]:
    """The local ports of process ``pid``'s TCP connections (its sockets' inodes, found in /proc/net/tcp)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    ports = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[9] in inodes:
            ports.add(int(fields[1].split(":")[1], 16))
    return ports


async def test_a_login_taken_elsewhere_while_a_node_was_cut_off_closes_its_old_connection(pg_url, redis_url):
    """ann is logged in on n1. n1 stalls (SIGSTOP, well within its lease) and Redis drops its connections; ann logs
    in on n2, whose takeover message to n1 is lost with them. When n1 wakes it reconnects and puts its sessions back
    in the register, but not over ann's login on n2: it closes its old connection of ann as the takeover would have,
    and the register keeps ann on n2 (before, n1 wrote ann back as its own and both connections stayed open)."""
    async with two_nodes(pg_url, redis_url) as ([(n1, _, url1), (_, port2, url2)], clients):
        old = await login(url1, "ann", secret="pw")
        clients.append(old)
        redis = Redis.from_url(redis_url)
        try:
            ports = redis_ports_of(n1.pid)
            n1.send_signal(signal.SIGSTOP)
            try:
                killed = 0
                for entry in await redis.client_list():
                    host, port = entry["addr"].rsplit(":", 1)
                    if int(port) in ports:
                        killed += await redis.client_kill_filter(_id=entry["id"])
                assert killed >= 2  # its commands' and its listener's connections at least
                new = await login(url2, "ann", secret="pw")  # her own name: a takeover
                clients.append(new)
            finally:
                n1.send_signal(signal.SIGCONT)
            await asyncio.wait_for(old.closed.wait(), 20)
            assert old.ws is not None and old.ws.close_reason == "logged in from another connection"
            assert await redis.hget("plyhall:sessions", "ann") == b"n2"
            assert (await new.request({"type": "ping"}))["type"] == "pong"
        finally:
            await redis.aclose()


@pytest.mark.parametrize("script", ["register", "claim"])
async def test_sessions_go_back_in_the_register_by_who_logged_in_last(redis_url, script: str):
    """n1 puts ann, bob, cid and dan back in the register; the register says ann is on n2 (alive), bob on n1, dan on
    n3 (whose lease lapsed). A session that was registered before Redis went away yields to n2's newer login of ann
    (whose takeover is published to n1 again); one that logged in on n1 while Redis was away is the newest, and n2 is
    told. Either way bob, cid and dan are n1's."""
    redis = Redis.from_url(redis_url)
    pubsub = redis.pubsub()
    try:
        await redis.hset(f"{PREFIX}sessions", mapping={"ann": "n2", "bob": "n1", "dan": "n3"})
        await redis.set(f"{PREFIX}node:n2", "1")
        await pubsub.subscribe(channel("n1"), channel("n2"))
        names = ["ann", "bob", "cid", "dan"]
        if script == "register":
            await redis.eval(REGISTER_SESSIONS, 1, f"{PREFIX}sessions", "n1", channel("n1"), *names)
        else:
            await redis.eval(CLAIM_SESSIONS, 1, f"{PREFIX}sessions", "n1", *names)
        await redis.publish(channel("n1"), msgpack.packb(["end", []]))  # after the script's, in order
        told = []
        while True:
            message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=10)
            if message is None:
                continue
            sent = msgpack.unpackb(message["data"], raw=False)
            if sent[0] == "end":
                break
            told.append((message["channel"].decode(), sent))
        held = {name.decode(): node.decode() for name, node in (await redis.hgetall(f"{PREFIX}sessions")).items()}
        if script == "register":
            assert held == {"ann": "n2", "bob": "n1", "cid": "n1", "dan": "n1"}
            assert told == [(channel("n1"), ["n2", [["takeover", "ann"]]])]
        else:
            assert held == {"ann": "n1", "bob": "n1", "cid": "n1", "dan": "n1"}
            assert told == [(channel("n2"), ["n1", [["takeover", "ann"]]])]  # n3: nobody listens
    finally:
        await pubsub.aclose()
        await redis.aclose()


class Cuttable:
    """A TCP proxy in front of Redis for one node: :meth:`cut` drops its connections and refuses new ones (that node
    alone is cut off from Redis), :meth:`restore` lets it through again."""

    def __init__(self, redis_url: str) -> None:
        self.target = redis_url.removeprefix("redis://").split("/")[0].rsplit(":", 1)
        self.open = True
        self.pipes: set[asyncio.StreamWriter] = set()
        self.server: asyncio.Server | None = None

    async def start(self) -> str:
        """Listen on a free port; the Redis URL that goes through it."""
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return f"redis://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/0"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self.open:
            writer.close()
            return
        upstream_reader, upstream_writer = await asyncio.open_connection(self.target[0], int(self.target[1]))
        self.pipes |= {writer, upstream_writer}

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError):
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            sink.close()

        await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))

    def cut(self) -> None:
        """Drop every connection through the proxy and refuse new ones."""
        self.open = False
        for writer in self.pipes:
            writer.transport.abort()
        self.pipes.clear()

    def restore(self) -> None:
        """Let connections through again."""
        self.open = True

    async def close(self) -> None:
        """Cut, and stop listening."""
        self.cut()
        if self.server is not None:
            self.server.close()


async def test_a_login_made_while_its_node_was_cut_off_is_the_newest_and_takes_the_name_over(pg_url, redis_url):
    """ann is on n1, which Redis no longer reaches (a proxy cut); she logs in on n2, then again on n1 (her own name
    there: decided without Redis). That last login is the newest: when n1 is back it claims the register and n2's
    connection of ann closes, as a takeover; the last one stays and the register says n1 (before, n1 yielded to n2
    and closed the newest)."""
    proxy = Cuttable(redis_url)
    through = await proxy.start()
    nodes, clients = [], []
    try:  # n1 starts in a thread: its start-up reaches Redis through the proxy, which runs on this event loop
        nodes.append(await asyncio.to_thread(node, pg_url, through, "n1"))
        nodes.append(await asyncio.to_thread(node, pg_url, redis_url, "n2"))
        (_, port1, url1), (_, _, url2) = nodes
        first = await login(url1, "ann", secret="pw")
        clients.append(first)
        proxy.cut()
        await wait_until(lambda: http_json(port1, "/healthz")[1]["cluster"]["redis"] == "down",
                         "n1 knows Redis is away", timeout=30)
        second = await login(url2, "ann", secret="pw")
        clients.append(second)
        last = await login(url1, "ann", secret="pw")
        clients.append(last)
        await asyncio.wait_for(first.closed.wait(), 10)  # taken over on its own node
        proxy.restore()
        await asyncio.wait_for(second.closed.wait(), 30)
        assert second.ws is not None and second.ws.close_reason == "logged in from another connection"
        redis = Redis.from_url(redis_url)
        try:
            assert await redis.hget(f"{PREFIX}sessions", "ann") == b"n1"
        finally:
            await redis.aclose()
        assert (await last.request({"type": "ping"}))["type"] == "pong" and not last.closed.is_set()
    finally:
        for client in clients:
            await client.close()
        for proc, _, _ in reversed(nodes):
            await asyncio.to_thread(stop, proc)
        await proxy.close()
