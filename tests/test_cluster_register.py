"""The cluster's register of rooms (issue 40): every room, generated or named, is in the Redis register from
its creation to its end, on real ``plyhall serve`` nodes; a named room closed on one node opens again on another.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from client.connection import Client
from client.sdk import ServerError
from tests.helpers import http_json, login, wait_until
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
                assert refused.value.code == "bad_message" and "is not a valid room name" in str(refused.value)
        finally:
            redis_server.thaw()
