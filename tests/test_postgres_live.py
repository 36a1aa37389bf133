"""Servers on PostgreSQL: two of them sharing one database, and a database server restarted under a series."""

from __future__ import annotations

import asyncio
import random

import pytest

from client.sdk import RunOptions, ServerError, run_player
from server.io.server import PlyhallServer, RateLimit
from server.storage import open_storage
from tests.helpers import http_json, login, play_out
from tests.test_sdk import RandomPlayer


async def start(url: str, node: str, **kw) -> PlyhallServer:
    srv = PlyhallServer(open_storage(url, node), port=0, rate_limit=RateLimit(rate=1000, burst=2000), **kw)
    await srv.start()
    return srv


async def test_two_servers_share_records_names_and_tournaments(pg_url):
    north = await start(pg_url, "north", organiser_secret="organiser-pw")
    south = await start(pg_url, "south")
    try:
        n_url, s_url = (f"ws://127.0.0.1:{srv.port}/ws" for srv in (north, south))
        # ann claims her name through the north server; the south one honours the claim
        await (await login(n_url, "ann", secret="ann-pw")).close()
        with pytest.raises(ServerError) as refused:
            await login(s_url, "ann", secret="not-hers")
        assert refused.value.code == "wrong_secret"
        assert (await login(s_url, "ann", secret="ann-pw")).welcome["claimed"] is True
        # each server plays a game in its own room (both may be called "Lake")
        for srv, url in ((north, n_url), (south, s_url)):
            a, b = await login(url, f"a{srv.storage.node}"), await login(url, f"b{srv.storage.node}")
            await a.request({"type": "create_room", "game": "quarto", "name": "Lake"})
            await a.request({"type": "join", "room": "Lake"})
            await b.request({"type": "join", "room": "Lake"})
            await play_out([a, b], "Lake", random.Random(srv.port))
            await srv.flush()
        org = await login(n_url, "org", organiser="organiser-pw")
        await org.request({"type": "tournament_create", "name": "North Cup", "game": "connect4",
                           "format": "round-robin", "players": ["x", "y"]})
        for srv in (north, south):
            status, games = await asyncio.to_thread(http_json, srv, "/api/games")
            assert len(games["games"]) == 2
            status, events = await asyncio.to_thread(http_json, srv, "/api/tournaments")
            assert [e["id"] for e in events["tournaments"]] == ["north-cup"]
        status, event = await asyncio.to_thread(http_json, south, "/api/tournaments/north-cup")
        assert status == 200 and event["status"] == "created" and event["progress"]["total"] == 2
    finally:
        await north.stop()
        await south.stop()


async def test_a_series_survives_the_database_server_restarting(postgres_cluster, pg_url):
    srv = await start(pg_url, "main")
    url = f"ws://127.0.0.1:{srv.port}/ws"
    try:
        opts = dict(url=url, game="connect4", room="Series", games=4, think="thread",
                    room_options={"games": 4, "time_control": {"per_move": 60}})
        bots = [asyncio.create_task(run_player(RandomPlayer(seed, think=0.05), RunOptions(name=name, **opts)))
                for seed, name in ((1, "ann"), (2, "bob"))]
        for _ in range(500):  # into the series, then the database goes away for a while
            if srv.games_recorded >= 1 or all(b.done() for b in bots):
                break
            await asyncio.sleep(0.02)
        await asyncio.to_thread(postgres_cluster.stop)
        try:
            for _ in range(200):
                status, health = await asyncio.to_thread(http_json, srv, "/healthz")
                if status == 503:
                    break
                await asyncio.sleep(0.05)
            assert status == 503 and health["database"]["ok"] is False and health["database"]["error"]
        finally:
            await asyncio.to_thread(postgres_cluster.start)
        results = await asyncio.wait_for(asyncio.gather(*bots), 120)
        await srv.flush()
        status, health = await asyncio.to_thread(http_json, srv, "/healthz")
        assert status == 200 and health["database"]["ok"] is True
        records = srv.storage.list_games(50)
        assert len(results[0]) == 4 and len(records) == 4
        assert {r.record for r in results[0]} == {g["id"] for g in records}
        for game in records:  # every move told to the players is stored
            assert game["move_count"] == len(srv.storage.get_game(game["id"])["moves"]) > 0
    finally:
        await srv.stop()


def test_commands_never_print_the_database_password(pg_url):
    """`plyhall export --id nosuchid --db postgresql://plyhall:pw123@...` printed the URL whole, password and all
    (so did analyse, ratings --player, a tournament not found, db copy into a non-empty database)."""
    import subprocess
    import sys
    import urllib.parse

    from protocol.wording import without_password

    parts = urllib.parse.urlsplit(pg_url)
    pg_url = urllib.parse.urlunsplit(parts._replace(netloc=f"{parts.username}:hunter22@{parts.hostname}:{parts.port}"))
    parts = urllib.parse.urlsplit(pg_url)  # the test cluster trusts its local users: any password goes through
    assert without_password("postgresql://u:p@ss@h/db") == "postgresql://u:***@h/db"  # a password holding '@'
    assert without_password("postgresql://u@h/db?sslmode=disable&password=s3cret") == \
        "postgresql://u@h/db?sslmode=disable&password=***"
    for args in (["export", "--id", "nosuchid"], ["analyse", "--id", "nosuchid"], ["ratings", "--player", "nobody"],
                 ["export", "--tournament", "nosuch"]):
        done = subprocess.run([sys.executable, "-m", "plyhall", *args, "--db", pg_url], capture_output=True,
                              text=True, timeout=120)
        assert done.returncode != 0 and parts.password not in done.stdout + done.stderr, (args, done.stderr)
        assert ":***@" in done.stderr, (args, done.stderr)


async def test_the_http_api_says_503_while_the_database_is_away(postgres_cluster, pg_url):
    """With PostgreSQL down, /api/games/ID, /api/players/NAME and the rest answered 500 "Failed to open a WebSocket
    connection" with a traceback in the log for each request; now 503, a JSON reason and Retry-After, and the
    same requests answer again once the database is back."""
    server = await start(pg_url, "api")
    try:
        postgres_cluster.stop()
        try:
            for path in ("/api/games/nosuchgame", "/api/players/nobody", "/api/ratings/connect4"):
                status, body = await asyncio.to_thread(http_json, server, path)
                assert (status, body) == (503, {"error": "the database is not answering; try again in a moment"}), \
                    (path, status, body)
        finally:
            postgres_cluster.start()
        status, _ = await asyncio.to_thread(http_json, server, "/api/players/nobody")
        assert status == 404
    finally:
        await server.stop()


async def test_a_lone_server_takes_its_lock_again_after_its_connection_drops(pg_url):
    """A server on PostgreSQL that is no cluster node never proved its lock again: after the lock's connection was
    terminated (or the database restarted) a second server on the same database started, restored the first one's
    running game, and the first one then stopped. Now the first takes its lock again within seconds, and a second
    one is refused as while the first one runs."""
    import psycopg

    from server.storage import StorageError
    from tests.helpers import wait_until
    from tests.test_cluster_fencing import kill_lock_connection

    def holders() -> int:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            return len(conn.execute("SELECT pid FROM pg_stat_activity WHERE application_name LIKE %s",
                                    ("plyhall serve node=main %",)).fetchall())

    first = await start(pg_url, "main")
    try:
        assert kill_lock_connection(pg_url, "main") == 1
        await wait_until(lambda: holders() == 1, "the lock was taken again", timeout=30)
        second = PlyhallServer(open_storage(pg_url, "main"), port=0)
        try:
            with pytest.raises(StorageError, match="is run by another Plyhall server"):
                await second.start()
        finally:
            second.storage.close()
        assert not first.deposed
    finally:
        await first.stop()


def test_a_spill_file_belongs_to_its_database(postgres_cluster):
    """The spill file of a server on PostgreSQL was plyhall-NODE.spill in the working directory: a server started
    from the same folder on another database stored the first one's writes into its own (the move lost from its
    database, an orphan in the other). Its name now says which database it is for."""
    first, second = (open_storage(postgres_cluster.new_database(), "main") for _ in range(2))
    try:
        assert first.spill_path != second.spill_path
        assert first.spill_path.startswith("plyhall-t_") and first.spill_path.endswith(".spill")
        again = open_storage(first.url, "again")
        assert again.spill_path == first.spill_path.replace("-main-", "-again-")  # the same database, another node
        again.close()
    finally:
        first.close()
        second.close()
