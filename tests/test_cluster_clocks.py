"""Outages are charged to nobody's clock (issue 40), on real nodes: a player of another node whose turn it is
while Redis is away, and a player told of the opponent's move only once a database that was away took it."""

from __future__ import annotations

import asyncio
import signal

import psycopg
import pytest

from client.sdk import Client, ServerError
from tests.helpers import login, wait_until
from tests.test_cluster_fencing import kill_lock_connection, two_nodes

pytestmark = pytest.mark.timeout(240)


async def open_game(url1: str, url2: str, room: str, clients: list[Client]) -> tuple[Client, Client]:
    """ann (on node 1, the room's) and bob (on node 2) seated in ``room`` with 60 s each for the game."""
    ann, bob = await login(url1, "ann"), await login(url2, "bob")
    clients += [ann, bob]
    await ann.request({"type": "create_room", "game": "connect4", "name": room, "time_control": {"initial": 60}})
    await ann.request({"type": "join", "room": room, "seat": 0})
    await bob.request({"type": "join", "room": room, "seat": 1})
    for client in (ann, bob):
        await client.expect("game_start", room=room)
    return ann, bob


async def move_while_down(postgres_cluster, mover: Client, room: str, seconds: float) -> None:
    """PostgreSQL stops, ``mover`` plays column 4 in ``room``, and PostgreSQL starts again ``seconds`` later."""
    postgres_cluster.stop()
    try:
        await mover.send({"type": "move", "room": room, "move": "4"})
        await asyncio.sleep(seconds)
    finally:
        postgres_cluster.start()


async def test_a_redis_outage_is_not_charged_to_a_player_of_another_node(pg_url, redis_server, redis_url):
    """bob (on n2) is to move in n1's room when Redis goes away for 5 s: when it is back his clock has lost only
    the moments around the outage, not the outage."""
    try:
        async with two_nodes(pg_url, redis_url) as ([(_, _, url1), (_, _, url2)], clients):
            ann, bob = await open_game(url1, url2, "Outage", clients)
            await ann.request({"type": "move", "room": "Outage", "move": "4"})
            await bob.expect("moved", room="Outage")
            redis_server.pause()
            await asyncio.sleep(5)
            redis_server.resume()
            back = await bob.expect("game_start", room="Outage", timeout=30)  # the state again, once Redis is back
            assert back["to_move"] == 1
            assert back["clocks"]["left"][1] > 57.5, back["clocks"]
    finally:
        redis_server.revive()


async def test_a_move_held_by_a_database_restart_starts_the_clock_when_announced(pg_url, postgres_cluster,
                                                                                redis_url):
    """ann moves while PostgreSQL is down (3 s): the move is announced once it is stored, and bob's clock starts
    then, not when ann's move was accepted."""
    async with two_nodes(pg_url, redis_url) as ([(_, _, url1), (_, _, url2)], clients):
        ann, bob = await open_game(url1, url2, "Restart", clients)
        await move_while_down(postgres_cluster, ann, "Restart", 3)
        await bob.expect("moved", room="Restart", seq=1, timeout=30)
        await asyncio.sleep(0.5)
        await bob.request({"type": "move", "room": "Restart", "move": "4"}, timeout=30)
        mine = await bob.expect("moved", room="Restart", seq=2, timeout=30)
        assert mine["clocks"]["left"][1] > 57.5, mine["clocks"]  # the 3 s outage and 0.5 s thought: 56.5 at most


async def test_a_database_outage_longer_than_a_move_s_clock_flags_nobody(pg_url, postgres_cluster):
    """One server on PostgreSQL, 2 s a move: ann moves and PostgreSQL stops for 4 s. bob is told of the move only
    once it is stored, so his 2 s begin then; before, the server flagged him during the outage ("bob ran out of
    time") for a move he had never been told of."""
    from server.io.server import PlyhallServer
    from server.storage import open_storage

    server = PlyhallServer(open_storage(pg_url, "solo"), host="127.0.0.1", port=0)
    await server.start()
    url = f"ws://127.0.0.1:{server.port}/ws"
    ann, bob = await login(url, "ann"), await login(url, "bob")
    try:
        await ann.request({"type": "create_room", "game": "connect4", "name": "Outage", "time_control":
                           {"per_move": 2}})
        await ann.request({"type": "join", "room": "Outage", "seat": 0})
        await bob.request({"type": "join", "room": "Outage", "seat": 1})
        await bob.expect("game_start", room="Outage")
        await move_while_down(postgres_cluster, ann, "Outage", 4)
        told = await bob.expect("moved", room="Outage", seq=1, timeout=60)
        assert told["clocks"]["running"] == 1
        mine = await bob.request({"type": "move", "room": "Outage", "move": "4"}, timeout=60)
        assert mine["type"] == "moved" and mine["seq"] == 2, mine  # his move is taken: the game goes on
    finally:
        for client in (ann, bob):
            await client.close()
        await server.stop()


async def test_an_answer_lost_while_redis_was_away_comes_when_redis_is_back(pg_url, postgres_cluster, redis_server,
                                                                             redis_url):
    """bob (on n2) moves in n1's room while PostgreSQL is down: n1 takes the move and answers once it is stored, but
    Redis is away by then and the answer is lost. When Redis is back n2 attaches bob again, saying which answer never
    came, and n1 sends it again: bob's request is answered (before, it waited for ever), and the move is told once."""
    try:
        async with two_nodes(pg_url, redis_url) as ([(_, _, url1), (_, _, url2)], clients):
            ann, bob = await open_game(url1, url2, "Lost", clients)
            await ann.request({"type": "move", "room": "Lost", "move": "4"})
            await bob.expect("moved", room="Lost", seq=1)
            postgres_cluster.stop()
            try:
                answer = asyncio.create_task(bob.request({"type": "move", "room": "Lost", "move": "3"}, timeout=40))
                await asyncio.sleep(1.5)  # n1 took it (and acknowledged it): its answer waits for the database
                redis_server.pause()
            finally:
                postgres_cluster.start()
            await asyncio.sleep(3)  # stored and answered meanwhile: the answer found no Redis
            assert not answer.done()
            redis_server.resume()
            reply = await answer
            assert reply["type"] == "moved" and reply["seq"] == 2 and reply["notation"] == "3", reply
            again = await ann.expect("moved", room="Lost", seq=2, timeout=30)
            assert again["notation"] == "3"
    finally:
        redis_server.revive()


def epoch(pg_url: str, node: str) -> int | None:
    """``node``'s current epoch in the database."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        row = conn.execute("SELECT epoch FROM plyhall_owners WHERE node = %s", (node,)).fetchone()
    return None if row is None else row[0]


async def test_a_player_whose_node_was_deposed_is_not_charged_until_it_is_back(pg_url, redis_url):
    """bob (on n2) is to move in n1's room when n2 loses its lock and stalls past its lease: n1 adopts n2, and n2,
    woken, is deposed and closes bob. bob comes back through n1 3 s later (as a client finds another node): his
    clock lost nothing of it (before, n1 stopped holding it when n2 said it was deposed)."""
    async with two_nodes(pg_url, redis_url) as ([(_, _, url1), (n2, _, url2)], clients):
        ann, bob = await open_game(url1, url2, "Deposed", clients)
        await ann.request({"type": "move", "room": "Deposed", "move": "4"})
        await bob.expect("moved", room="Deposed", seq=1)
        before = await asyncio.to_thread(epoch, pg_url, "n2")
        n2.send_signal(signal.SIGSTOP)
        try:
            assert await asyncio.to_thread(kill_lock_connection, pg_url, "n2") == 1
            await wait_until(lambda: epoch(pg_url, "n2") != before, "n1 adopted n2", timeout=30)
        finally:
            n2.send_signal(signal.SIGCONT)
        await wait_until(bob.closed, "the deposed n2 closed bob's connection", timeout=30)
        await asyncio.sleep(3)
        bob2 = await login(url1, "bob", resume=bob.welcome["resume"])
        clients.append(bob2)
        back = await bob2.expect("game_start", room="Deposed", timeout=30)
        assert back["to_move"] == 1
        assert back["clocks"]["left"][1] > 58.0, back["clocks"]


async def test_a_stall_of_the_rooms_node_is_not_charged_to_a_player_of_another_node(pg_url, redis_url):
    """n1, the room's node, stalls (SIGSTOP) 5 s past its lease while bob (on n2) is to move: when n1 wakes, n2 still
    takes it for lapsed (it learns otherwise at its next beat) and answers bob's moves cluster_unavailable. n1 holds
    bob's clock from its waking until bob's next request reaches it (5 s at most): bob, moving 2 s after n1 woke,
    is charged none of it (before, the 2 s were charged)."""
    async with two_nodes(pg_url, redis_url) as ([(n1, _, url1), (_, _, url2)], clients):
        ann, bob = await open_game(url1, url2, "Stalled", clients)
        await ann.request({"type": "move", "room": "Stalled", "move": "4"})
        await bob.expect("moved", room="Stalled", seq=1)
        n1.send_signal(signal.SIGSTOP)
        try:
            await asyncio.sleep(5)
        finally:
            n1.send_signal(signal.SIGCONT)
        await asyncio.sleep(2)
        for _ in range(40):  # as a bot does: cluster_unavailable is tried again a moment later
            try:
                await bob.request({"type": "move", "room": "Stalled", "move": "4"}, timeout=10)
                break
            except ServerError as exc:
                assert exc.code == "cluster_unavailable", exc
                await asyncio.sleep(0.5)
        mine = await ann.expect("moved", room="Stalled", seq=2, timeout=10)
        assert mine["clocks"]["left"][1] > 58.5, mine["clocks"]  # the 2 s after n1 woke charged: 58 at most


async def test_a_player_cut_off_when_its_game_ended_is_told_the_result_when_redis_is_back(pg_url, redis_server,
                                                                                        redis_url):
    """ann (on n1, the room's node) resigns while Redis is away: bob (on n2) cannot hear the game_over then. When
    Redis is back, n2 attaches bob again and n1 sends him the room's state, whose last result is the stored one."""
    try:
        async with two_nodes(pg_url, redis_url) as ([(_, _, url1), (_, _, url2)], clients):
            ann, bob = await open_game(url1, url2, "Ended", clients)
            await ann.request({"type": "move", "room": "Ended", "move": "4"})
            await bob.expect("moved", room="Ended", seq=1)
            redis_server.pause()
            try:
                await ann.request({"type": "resign", "room": "Ended"})
                over = await ann.expect("game_over", room="Ended")
                await asyncio.sleep(1)
            finally:
                redis_server.resume()
            told = None
            while told is None:
                msg = await bob.recv(timeout=30)
                if msg.get("room") == "Ended" and msg["type"] == "game_over":
                    told = (msg["winner"], msg["status"])
                elif msg.get("room") == "Ended" and msg["type"] == "room_state" and msg.get("last_result"):
                    told = (msg["last_result"]["winner"], msg["last_result"]["status"])
            assert told == (over["winner"], over["status"]), (told, over)
    finally:
        redis_server.revive()


async def test_a_stall_of_the_rooms_node_is_not_charged_to_its_own_player(pg_url, redis_url):
    """ann, on n1 with the room, is to move when n1 stalls (SIGSTOP) 5 s: her move, sent during the stall, is taken
    when n1 wakes, and her clock lost nothing of the stall (n1 notes its stall before it handles what waited)."""
    async with two_nodes(pg_url, redis_url) as ([(n1, _, url1), (_, _, url2)], clients):
        ann, bob = await open_game(url1, url2, "Own", clients)
        n1.send_signal(signal.SIGSTOP)
        try:
            await ann.send({"type": "move", "room": "Own", "move": "4"})
            await asyncio.sleep(5)
        finally:
            n1.send_signal(signal.SIGCONT)
        mine = await ann.expect("moved", room="Own", seq=1, timeout=15)
        assert mine["clocks"]["left"][0] > 57.5, mine["clocks"]  # the 5 s stall charged: 55 at most


async def test_a_game_between_players_of_two_nodes_is_rated(pg_url, redis_url):
    """ann (claimed, on n1, the room's node) and bob (claimed, on n2) play a rated game to a resignation. n1 had
    never seen bob's claim: the game was stored unrated, "bob is not a claimed name", so that behind a
    round-robin proxy most games of a cluster were unrated. n1 now looks the claim up in the shared database."""
    from tests.helpers import open_game as play_opening

    async with two_nodes(pg_url, redis_url) as ([(_, _, url1), (_, _, url2)], clients):
        ann = await login(url1, "ann", secret="ann's secret", source="127.0.0.2")
        bob = await login(url2, "bob", secret="bob's secret", source="127.0.0.3")
        clients += [ann, bob]
        await ann.request({"type": "create_room", "game": "connect4", "name": "Rated", "rated": True,
                           "time_control": {"per_move": 30}})
        await ann.request({"type": "join", "room": "Rated", "seat": 0})
        await bob.request({"type": "join", "room": "Rated", "seat": 1})
        start = await bob.expect("game_start", room="Rated")
        await play_opening({0: ann, 1: bob}, "Rated", start["to_move"])
        await bob.send({"type": "resign", "room": "Rated"})
        over = await ann.expect("game_over", room="Rated", timeout=30)
        assert "unrated" not in over and [r["name"] for r in over["ratings"]] == ["ann", "bob"], over


async def test_a_database_outage_is_not_logged_as_redis_lost(pg_url, postgres_cluster, redis_url):
    """PostgreSQL stops for 8 s under a cluster, and a node dies meanwhile: the node left said "lost the cluster's
    Redis ... connection to server at 127.0.0.1, port P" (PostgreSQL's port) while Redis answered all along, and
    logged a traceback every half second, failing to adopt the dead node's rooms. Each is said once, as what it is."""
    import signal

    from tests.helpers import stop
    from tests.test_cluster import node

    nodes = [node(pg_url, redis_url, "q1"), node(pg_url, redis_url, "q2")]
    try:
        await asyncio.sleep(1)
        postgres_cluster.stop()
        try:
            nodes[1][0].send_signal(signal.SIGKILL)
            await asyncio.sleep(8)
        finally:
            postgres_cluster.start()
        await asyncio.sleep(3)
    finally:
        logs = [stop(proc)[1] for proc, _, _ in nodes]
    assert "lost the cluster's Redis" not in logs[0] and logs[0].count("Traceback") == 0, logs[0][-3000:]
    assert logs[0].count("wait for the database to adopt them") <= 1, logs[0][-3000:]
