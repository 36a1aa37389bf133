"""A cluster of real ``plyhall serve`` nodes (Redis and PostgreSQL started by the tests): a node SIGKILLed in the
middle of a game loses nothing, and a Redis that stops for a while stops only what needs another node."""

from __future__ import annotations

import asyncio
import random
import signal
import subprocess
import threading
import time

import pytest

from client.sdk import Client, ServerError
from protocol.games import get_game
from server.storage import StorageError, open_storage
from server.storage.postgres import NODE_LOCK
from tests.conftest import free_port
from tests.helpers import http_json, login, start_server, stop, wait_until

pytestmark = pytest.mark.timeout(240)


def node(pg_url: str, redis_url: str, name: str, port: int | None = None, *extra: str):
    """A real node of the cluster on ``port`` (a free one by default): (process, port, url)."""
    port = port or free_port()
    proc = start_server(pg_url, port, "--cluster", redis_url, "--node", name, "--grace", "30", *extra)
    return proc, port, f"ws://127.0.0.1:{port}/ws"


RNG = random.Random(7)


async def next_move(client: Client, room: str, game, state) -> tuple[object, str]:
    """A random legal move for ``client`` in ``state`` and its notation in the client's coordinates."""
    move = RNG.choice(game.legal_moves(state))
    return move, game.format_move(move, client.coords)


async def test_a_node_killed_mid_game_loses_nothing(pg_url, redis_url):
    """ann plays on node n1, where her room is; bob plays and sue watches through n2. n1 is SIGKILLed: n2 adopts
    the room from PostgreSQL, ann comes back through n2 with her resume token, and the game ends with every move
    that was announced stored, and the clocks not charged for the outage."""
    n1, _, url1 = node(pg_url, redis_url, "n1")
    n2, port2, url2 = node(pg_url, redis_url, "n2")
    clients: list[Client] = []
    try:
        ann = await login(url1, "ann")
        bob = await login(url2, "bob")
        sue = await login(url2, "sue")
        clients += [ann, bob, sue]
        await ann.request({"type": "create_room", "game": "connect4", "name": "Survivor",
                           "time_control": {"per_move": 20}})
        await ann.request({"type": "join", "room": "Survivor", "seat": 0})
        await bob.request({"type": "join", "room": "Survivor", "seat": 1})
        await sue.request({"type": "join", "room": "Survivor", "role": "spectator"})
        for client in (ann, bob, sue):
            await client.expect("game_start", room="Survivor")
        game = get_game("connect4")
        state = game.initial_state()
        announced: list[str] = []
        for mover in (ann, bob, ann, bob):
            move, text = await next_move(mover, "Survivor", game, state)
            await mover.request({"type": "move", "room": "Survivor", "move": text})
            seen = await sue.expect("moved", room="Survivor")
            announced.append(seen["notation"])
            state = game.apply(state, move)
        killed_at = time.monotonic()
        n1.send_signal(signal.SIGKILL)
        n1.communicate(timeout=30)
        # bob, on n2, gets the game back as soon as n2 has adopted the room: the full state, his seat kept
        start = await bob.expect("game_start", room="Survivor", timeout=30)
        adopted_in = time.monotonic() - killed_at
        assert start["moves"] == announced and start["seat"] == 1
        # ann's connection died with n1: she comes back through n2 with her resume token
        await asyncio.wait_for(ann.closed.wait(), 10)
        ann2 = await login(url2, "ann", resume=ann.welcome["resume"])
        clients.append(ann2)
        assert ann2.welcome["rooms"] == ["Survivor"]
        back = await ann2.expect("game_start", room="Survivor")
        assert back["moves"] == announced and back["to_move"] == 0
        assert back["clocks"]["left"][0] > 19.0, "the outage is charged to nobody"
        players = {0: ann2, 1: bob}
        to_move = 0
        while True:
            mover = players[to_move]
            move, text = await next_move(mover, "Survivor", game, state)
            await mover.request({"type": "move", "room": "Survivor", "move": text})
            seen = await bob.expect("moved", room="Survivor")
            announced.append(seen["notation"])
            state = game.apply(state, move)
            if seen["to_move"] is None:
                over = await bob.expect("game_over", room="Survivor")
                break
            to_move = seen["to_move"]
        await asyncio.sleep(0.2)
        status, record = await asyncio.to_thread(http_json, port2, f"/api/games/{over['record']}")
        assert status == 200 and [m["move"] for m in record["moves"]] == announced
        assert record["players"] == ["ann", "bob"] and record["winner"] == over["winner"]
        print(f"adopted and resumed {adopted_in:.2f} s after the kill")
    finally:
        for client in clients:
            await client.close()
        stop(n2)
        stop(n1)


async def test_redis_down_stops_only_what_needs_another_node(pg_url, redis_server, redis_url):
    """With Redis stopped for 10 s: a game whose players are both on its node goes on; a player of another
    node's room gets cluster_unavailable, not a hang; /healthz says degraded; all recovers when Redis is back, and
    a player whose game ended meanwhile (its game_over dropped with Redis away) gets the result then."""
    n1, port1, url1 = node(pg_url, redis_url, "n1")
    n2, port2, url2 = node(pg_url, redis_url, "n2")
    clients: list[Client] = []
    try:
        ann, bob = await login(url1, "ann"), await login(url1, "bob")
        cy, dee = await login(url1, "cy"), await login(url2, "dee")
        eve, fay = await login(url1, "eve"), await login(url2, "fay")
        clients += [ann, bob, cy, dee, eve, fay]
        for room, first, second in (("Local", ann, bob), ("Split", cy, dee), ("Gone", eve, fay)):
            await first.request({"type": "create_room", "game": "connect4", "name": room,
                                 "time_control": {"per_move": 60}})
            await first.request({"type": "join", "room": room, "seat": 0})
            await second.request({"type": "join", "room": room, "seat": 1})
            for client in (first, second):
                await client.expect("game_start", room=room)
        await cy.request({"type": "move", "room": "Split", "move": "4"})
        assert (await dee.expect("moved", room="Split"))["notation"] == "4"
        redis_server.pause()
        paused_at = time.monotonic()
        await wait_until(lambda: http_json(port2, "/healthz")[1].get("degraded"), "n2 says it is degraded", 15)
        status, health = await asyncio.to_thread(http_json, port1, "/healthz")
        assert status == 200 and health["degraded"] and health["cluster"]["redis"] == "down"
        # the node-local game goes on
        await ann.request({"type": "move", "room": "Local", "move": "1"})
        await bob.request({"type": "move", "room": "Local", "move": "2"})
        assert [(await ann.expect("moved", room="Local"))["notation"] for _ in range(2)] == ["1", "2"]
        # dee's move must cross to n1: a clear error, at once
        with pytest.raises(ServerError) as info:
            await dee.request({"type": "move", "room": "Split", "move": "4"}, timeout=5)
        assert info.value.code == "cluster_unavailable"
        await ann.request({"type": "move", "room": "Local", "move": "1"})  # and the local game still goes on
        await eve.send({"type": "resign", "room": "Gone"})  # its game_over cannot reach fay on n2
        assert (await eve.expect("game_over", room="Gone"))["winner"] == 1
        await asyncio.sleep(max(0.0, 10.0 - (time.monotonic() - paused_at)))  # Redis stays away 10 s in all
        await bob.request({"type": "move", "room": "Local", "move": "2"})
        redis_server.resume()
        await wait_until(lambda: not http_json(port2, "/healthz")[1].get("degraded"), "n2 is whole again", 20)
        # dee's node attached her again: n1 sent her the game's state, and her move goes through
        start = await dee.expect("game_start", room="Split", timeout=15)
        assert start["moves"] == ["4"] and start["to_move"] == 1
        # and fay's: the game that ended meanwhile comes with its result
        ended = await fay.expect("room_state", room="Gone", timeout=15)
        assert ended["status"] == "finished" and ended["last_result"]["winner"] == 1
        assert "resign" in ended["last_result"]["reason"]
        await dee.request({"type": "move", "room": "Split", "move": "4"})
        assert (await cy.expect("moved", room="Split"))["notation"] == "4"
        # and new cross-node work is possible again: a seek pairs players of both nodes
        await bob.send({"type": "seek", "game": "quarto"})
        await dee.send({"type": "seek", "game": "quarto"})
        # (a re-attached seat may be sent its full state once more meanwhile: a repeat of what she has)
        paired = await dee.expect("game_start", game="quarto", timeout=15)
        assert paired["room"] != "Split"
    finally:
        for client in clients:
            await client.close()
        redis_server.revive()
        stop(n2)
        stop(n1)


def test_a_tournament_survives_its_node_being_killed(pg_url, redis_url):
    """The director's node n1 is SIGKILLed in the middle of a round robin whose entrants play through n1 and n2.
    n2 adopts the event (or n1, started again at once as a supervisor would, takes it back): it ends with exactly
    its scheduled games, none played twice, none lost."""
    from tests.test_tournament_live import PLYHALL, SECRET, entrant, wait_for

    port1 = free_port()
    n1, _, url1 = node(pg_url, redis_url, "n1", port1, "--organiser-secret", SECRET)
    n2, port2, url2 = node(pg_url, redis_url, "n2", None, "--organiser-secret", SECRET)
    bots = [entrant(name, "random", url) for name, url in (("e1", url1), ("e2", url2), ("e3", url1), ("e4", url2))]
    try:
        made = subprocess.run([*PLYHALL, "tournament", "create", "--url", url1, "--secret", SECRET, "--name", "Cup",
                               "--game", "connect4", "--format", "round-robin", "--players", "e1,e2,e3,e4",
                               "--games-per-pairing", "1", "--time-control", "30", "--concurrency", "1",
                               "--start"], capture_output=True, text=True, timeout=60)
        assert made.returncode == 0, made.stdout + made.stderr
        wait_for(lambda: http_json(port2, "/api/tournaments/cup")[1]["progress"]["done"] >= 2, 120)
        n1.send_signal(signal.SIGKILL)
        n1.communicate(timeout=30)
        wait_for(lambda: http_json(port2, "/healthz")[1]["cluster"]["nodes"] == ["n2"], 30)
        n1, _, _ = node(pg_url, redis_url, "n1", port1, "--organiser-secret", SECRET)  # its supervisor restarts it
        wait_for(lambda: http_json(port2, "/api/tournaments/cup")[1]["status"] == "finished", 180)
        outputs = [bot.communicate(timeout=60) for bot in bots]
    finally:
        for bot in bots:
            stop(bot)
        stop(n1)
        stop(n2)
    for bot, (out, err) in zip(bots, outputs, strict=True):
        assert bot.returncode == 0 and "tournament Cup is finished" in out, out + err
    storage = open_storage(pg_url, "reader")
    records = storage.list_games(500, tournament="cup", status="all")
    storage.close()
    numbers = sorted(r["tournament_game"] for r in records if r["status"] in ("finished", "forfeit"))
    assert numbers == [1, 2, 3, 4, 5, 6], records  # every scheduled game once, none twice


async def test_a_seek_waiting_at_a_matchmaker_that_dies_is_made_again_at_the_next(pg_url, redis_url):
    """Seeks are paired by one node (the matchmaker lease). ann seeks through n2 while n1 pairs; n1 is SIGKILLed;
    n2 takes the lease over and ann's seek with it: bob's seek meets hers."""
    n1, port1, _ = node(pg_url, redis_url, "n1")
    n2, port2, url2 = node(pg_url, redis_url, "n2")
    clients: list[Client] = []
    try:
        await wait_until(lambda: http_json(port2, "/healthz")[1]["cluster"]["matchmaker"] == "n1",
                         "n2 knows n1 pairs the seeks", 10)
        ann = await login(url2, "ann")
        clients.append(ann)
        waiting = await ann.request({"type": "seek", "game": "connect4"})
        assert waiting["type"] == "seeking"
        n1.send_signal(signal.SIGKILL)
        n1.communicate(timeout=30)
        await wait_until(lambda: http_json(port2, "/healthz")[1]["cluster"]["matchmaker"] == "n2",
                         "n2 pairs the seeks", 15)
        bob = await login(url2, "bob")
        clients.append(bob)
        await bob.send({"type": "seek", "game": "connect4"})
        starts = [await client.expect("game_start", timeout=15) for client in (ann, bob)]
        assert starts[0]["room"] == starts[1]["room"] and sorted(starts[0]["players"]) == ["ann", "bob"]
    finally:
        for client in clients:
            await client.close()
        stop(n2)
        stop(n1)


async def test_a_house_bot_is_served_by_a_node_with_one_free(pg_url, redis_url):
    """n1 runs no house bots; n2 runs one: a player of n1 who asks for a game against a house bot gets it, in a
    room on n2 (the cluster's house bots serve every node, within their total)."""
    from server.io.server import PlyhallServer
    from server.storage import open_storage
    from tests.cluster_nodes import ws_url

    nodes = []
    try:
        for name, bots in (("n1", 0), ("n2", 1)):
            server = PlyhallServer(open_storage(pg_url, name), port=0, cluster=redis_url, house_bots=bots)
            await server.start()
            nodes.append(server)
        await wait_until(lambda: nodes[0].cluster.view.house_free.get("n2") == 1, "n1 hears n2's free house bot", 10)
        ann = await login(ws_url(nodes[0]), "ann")
        room = (await ann.request({"type": "create_room", "game": "connect4", "opponent": "random",
                                   "time_control": {"per_move": 30}}))["room"]
        assert room["name"] in nodes[1].hall.rooms and room["name"] not in nodes[0].hall.rooms
        start = await ann.expect("game_start", room=room["name"], timeout=60)
        assert start["players"][0] == "ann" and start["players"][1].startswith("house-")
        await ann.close()
    finally:
        for server in reversed(nodes):
            await server.stop()


async def test_room_names_are_unique_across_nodes_and_a_refused_room_keeps_none(pg_url, redis_url):
    """Rooms opened at once on two nodes without a name get different names; a room refused for a bad option
    leaves its name free for anybody on any node."""
    from tests.cluster_nodes import cluster, ws_url

    async with cluster(pg_url, redis_url, 2) as nodes:
        ann, bob = await login(ws_url(nodes[0]), "ann"), await login(ws_url(nodes[1]), "bob")
        rooms = await asyncio.gather(*(client.request({"type": "create_room", "game": "connect4"})
                                       for client in (ann, bob, ann, bob)))
        names = [reply["room"]["name"] for reply in rooms]
        assert len(set(names)) == 4, names
        with pytest.raises(ServerError) as info:
            await ann.request({"type": "create_room", "game": "connect4", "name": "Arena",
                               "options": {"no such option": 1}})
        assert info.value.code == "bad_option"
        made = await bob.request({"type": "create_room", "game": "connect4", "name": "Arena"})
        assert made["room"]["name"] == "Arena"
        for client in (ann, bob):
            await client.close()


async def test_seeks_follow_the_matchmaker_lease_when_it_moves_to_a_living_node(pg_url, redis_url):
    """After a Redis restart the matchmaker lease may go to another node while the old one lives: the seeks that
    waited at the old one (of its own clients, and of other nodes') are made again at the new one, and meet."""
    import redis

    from tests.cluster_nodes import cluster, ws_url

    async with cluster(pg_url, redis_url, 2) as nodes:
        await wait_until(lambda: all(node.cluster.matchmaker == "n1" for node in nodes), "n1 pairs the seeks", 10)
        ann, bob = await login(ws_url(nodes[1]), "ann"), await login(ws_url(nodes[0]), "bob")
        assert (await ann.request({"type": "seek", "game": "connect4"}))["type"] == "seeking"  # waits at n1
        assert (await bob.request({"type": "seek", "game": "quarto"}))["type"] == "seeking"  # n1's own client
        await asyncio.to_thread(redis.Redis.from_url(redis_url).set, "plyhall:matchmaker", "n2", px=2000)
        await wait_until(lambda: all(node.cluster.matchmaker == "n2" for node in nodes), "n2 pairs the seeks", 10)
        await wait_until(lambda: nodes[0].hall.seeks.waiting() == 0 and nodes[1].hall.seeks.waiting() == 2,
                         "the seeks moved to n2", 10)
        cy, dee = await login(ws_url(nodes[0]), "cy"), await login(ws_url(nodes[1]), "dee")
        await cy.send({"type": "seek", "game": "connect4"})
        await dee.send({"type": "seek", "game": "quarto"})
        for first, second in ((ann, cy), (bob, dee)):
            starts = [await client.expect("game_start", timeout=15) for client in (first, second)]
            assert starts[0]["room"] == starts[1]["room"]
        for client in (ann, bob, cy, dee):
            await client.close()


def test_a_node_restarted_while_another_adopts_its_rooms_waits_for_the_adoption(pg_url):
    """A supervisor restarts a dead node at once, while another node holds the dead node's lock for the moment
    it takes to adopt its rooms: the node starts once the adoption is done, instead of stopping as if a second
    server ran it. A node that another server does run still stops at once, naming that server."""
    running = open_storage(pg_url, "n8")
    running.own()
    second = open_storage(pg_url, "n8")
    with pytest.raises(StorageError, match=r"node n8 of .* is run by another Plyhall server \(plyhall serve node=n8"):
        second.own()
    running.close()
    second.close()

    adopter = open_storage(pg_url, "n2")
    restarted = open_storage(pg_url, "n9")
    with adopter._connect() as conn:  # n2 adopts n9's rooms: it holds n9's lock, as adopt() does
        assert conn.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", (NODE_LOCK, "n9")).fetchone()[0]
        outcome: list[BaseException | None] = []

        def start() -> None:
            try:
                restarted.own()
                outcome.append(None)
            except BaseException as exc:  # noqa: BLE001 - told to the test
                outcome.append(exc)

        thread = threading.Thread(target=start)
        thread.start()
        deadline = time.monotonic() + 30
        while not outcome and time.monotonic() < deadline and not conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'plyhall serve node=n9 %'"
        ).fetchone()[0]:
            time.sleep(0.05)
        conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (NODE_LOCK, "n9"))  # the adoption is done
    thread.join(30)
    restarted.close()
    adopter.close()
    assert outcome == [None]
