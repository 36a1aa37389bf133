"""Storage, the same tests on SQLite and on PostgreSQL: what is written comes back, after a restart too;
schema versions; servers sharing one database; copies between databases; a database server that restarts."""

from __future__ import annotations

import contextlib
import re
import sqlite3
import subprocess
import sys

import pytest

from server.storage import StorageError, open_storage
from server.storage.records import (
    ClaimSaved,
    GameEnded,
    GameStarted,
    IdentitySaved,
    MovePlayed,
    RoomRemoved,
    RoomSaved,
    TournamentSaved,
)
from server.storage.sql import MIGRATIONS, SCHEMA_VERSION
from tests.helpers import game_record as record


def test_writes_come_back_after_a_restart(storage_url):
    storage = open_storage(storage_url)
    running = record("g-run", "running", moves=0)
    storage.apply([
        ClaimSaved("ann", "salt", "digest"), IdentitySaved("bob", "token-digest"),
        RoomSaved({"name": "Lake", "settings": {}, "record": "g-run", "seats": ["ann", "bob"]}),
        RoomSaved({"name": "Gone", "settings": {}, "record": None}), RoomRemoved("Gone"),
        GameStarted(running), *(MovePlayed("g-run", m) for m in record("x", moves=4).moves),
        GameEnded(record("g-done")), TournamentSaved({"id": "cup", "name": "Cup", "status": "running"}),
    ])
    storage.close()
    storage = open_storage(storage_url)  # a new process would open it like this
    restored = storage.load()
    assert restored.claims == {"ann": ("salt", "digest")} and restored.identities == {"bob": "token-digest"}
    assert [room["name"] for room in restored.rooms] == ["Lake"]
    game = restored.running["g-run"]
    assert [m.notation for m in game.moves] == ["1", "2", "3", "4"] and game.moves[0].clocks_after == [29.5, 30.0]
    assert [t["id"] for t in restored.tournaments] == ["cup"]
    assert storage.get_claim("ann") == ("salt", "digest") and storage.get_claim("nobody") is None
    storage.close()


def test_listing_filters_and_records(storage_url):
    storage = open_storage(storage_url)
    for i in range(5):
        storage.save_game(record(f"g{i}", started=100.0 + i))  # a header and its moves
    storage.apply([GameStarted(record("live", "running", moves=0, started=200.0)),
                   *(MovePlayed("live", m) for m in record("x", moves=2).moves)])
    storage.save_game(record("t1", tournament="cup", started=50.0))
    assert [g["id"] for g in storage.list_games(3)] == ["g4", "g3", "g2"]  # newest first, ended ones
    assert [g["id"] for g in storage.list_games(50, status="running")] == ["live"]
    assert storage.list_games(50, status="running")[0]["move_count"] == 2
    assert [g["id"] for g in storage.list_games(50, tournament="cup")] == ["t1"]
    assert storage.list_games(50, player="nobody") == [] and len(storage.list_games(50, player="bob")) == 6
    assert storage.get_game("live")["status"] == "running" and len(storage.get_game("live")["moves"]) == 2
    assert [m["move"] for m in storage.get_game("g1")["moves"]] == ["1", "2", "3"]
    assert storage.get_game("nope") is None
    assert [g["id"] for g in storage.iter_games()] == ["t1", "g0", "g1", "g2", "g3", "g4"]
    assert storage.count_games() == 6
    assert storage.list_tournaments() == []
    storage.close()


def test_servers_sharing_a_database_keep_their_own_rooms_and_share_the_rest(storage_url):
    north, south = open_storage(storage_url, "north"), open_storage(storage_url, "south")
    north.apply([RoomSaved({"name": "Lake", "record": None}), GameEnded(record("n1")),
                 ClaimSaved("ann", "s", "d")])
    south.apply([RoomSaved({"name": "Lake", "record": None}), RoomSaved({"name": "Pond", "record": None}),
                 GameEnded(record("s1"))])
    assert [r["name"] for r in north.load().rooms] == ["Lake"]
    assert sorted(r["name"] for r in south.load().rooms) == ["Lake", "Pond"]
    assert {g["id"] for g in north.list_games()} == {g["id"] for g in south.list_games()} == {"n1", "s1"}
    assert south.get_claim("ann") == ("s", "d")
    north.close()
    south.close()


def test_a_database_from_before_versions_is_migrated_and_a_newer_one_refused(storage_url, tmp_path):
    if storage_url.startswith("sqlite"):
        path = storage_url.removeprefix("sqlite:///")
        conn = sqlite3.connect(path)
        for statement in MIGRATIONS[0]:
            conn.execute(statement)
        conn.execute("INSERT INTO games VALUES ('old', 'R', 'connect4', '{}', '{}', 'a', 'b', 1, 'x', 'finished', 1,"
                     " 1.0, 2.0)")
        conn.commit()
        conn.close()
    else:
        import psycopg

        with psycopg.connect(storage_url, autocommit=True) as conn:
            for statement in MIGRATIONS[0]:
                conn.execute(statement)
            conn.execute("INSERT INTO games VALUES ('old', 'R', 'connect4', '{}', '{}', 'a', 'b', 1, 'x', 'finished',"
                         " 1, 1.0, 2.0)")
    storage = open_storage(storage_url)
    old = storage.get_game("old")
    assert old["winner_name"] == "b" and old["tournament"] is None
    storage.apply([TournamentSaved({"id": "t", "name": "T", "status": "created"})])  # the new tables exist
    storage.apply([RoomSaved({"name": "X", "record": None})])
    with storage._write_lock, storage._transaction() as cur:
        cur.execute(storage._sql("UPDATE schema_version SET version = ?"), (SCHEMA_VERSION + 1,))
    storage.close()
    with pytest.raises(StorageError, match="newer than this Plyhall"):
        open_storage(storage_url)


def test_reading_commands_refuse_an_older_schema_and_db_upgrade_upgrades_it(storage_url, tmp_path):
    """An analyst's newer Plyhall ran `plyhall export` on the season's database, upgraded it from schema 5 to 6, and
    the server that wrote it could not start again ("newer than this Plyhall"). Reading commands refuse an older
    schema now, saying how to upgrade it on purpose; `plyhall db upgrade` does, and says so."""
    from server.storage import schema_version_of

    previous = SCHEMA_VERSION - 1
    statements = [statement for step in MIGRATIONS[:previous] for statement in step]
    if storage_url.startswith("sqlite"):
        with contextlib.closing(sqlite3.connect(storage_url.removeprefix("sqlite:///"))) as conn:
            for statement in statements:
                conn.execute(statement)
            conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
            conn.execute(f"INSERT INTO schema_version VALUES ({previous})")
            conn.commit()
    else:
        import psycopg

        with psycopg.connect(storage_url, autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)
            conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
            conn.execute(f"INSERT INTO schema_version VALUES ({previous})")

    def plyhall_run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "plyhall", *args], capture_output=True, text=True, timeout=120,
                              cwd=tmp_path)

    for command in (["export", "--db", storage_url], ["ratings", "--db", storage_url, "--game", "connect4"]):
        refused = plyhall_run(*command)
        assert refused.returncode == 1, (command, refused.stdout, refused.stderr)
        assert f"is at schema version {previous}, older than this Plyhall's ({SCHEMA_VERSION})" in refused.stderr
        assert "plyhall db upgrade --db" in refused.stderr and "Traceback" not in refused.stderr
        assert schema_version_of(storage_url) == previous  # left as it was
    if storage_url.startswith("sqlite"):  # a server holding the file: not upgraded under its feet
        from server.storage.sqlite import take_lock

        held = take_lock(storage_url.removeprefix("sqlite:///"))
        busy = plyhall_run("db", "upgrade", "--db", storage_url)
        held.close()
        assert busy.returncode == 1 and "in use by another Plyhall server" in busy.stderr, busy.stderr
        assert schema_version_of(storage_url) == previous
    done = plyhall_run("db", "upgrade", "--db", storage_url)
    assert done.returncode == 0 and f"upgraded from schema version {previous} to {SCHEMA_VERSION}" in done.stdout
    assert schema_version_of(storage_url) == SCHEMA_VERSION
    assert plyhall_run("export", "--db", storage_url).returncode == 0
    again = plyhall_run("db", "upgrade", "--db", storage_url)
    assert again.returncode == 0 and "already: nothing to do" in again.stdout


def test_plyhall_db_copy_moves_a_deployment_and_back(pg_url, tmp_path):
    source = tmp_path / "source.db"
    storage = open_storage(str(source))
    storage.apply([ClaimSaved("ann", "s", "d"), *(GameEnded(record(f"g{i}")) for i in range(3)),
                   *(MovePlayed(f"g{i}", m) for i in range(3) for m in record("x").moves),
                   RoomSaved({"name": "Lake", "record": None}),
                   TournamentSaved({"id": "cup", "name": "Cup", "status": "finished"})])
    storage.close()

    def copy(source_url: str, target_url: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "plyhall", "db", "copy", "--from", source_url, "--to",
                               target_url], capture_output=True, text=True, timeout=120)

    there = copy(f"sqlite:///{source}", pg_url)
    assert there.returncode == 0 and "the counts agree" in there.stdout, there.stderr
    assert re.search(r"^moves +9 -> +9$", there.stdout, re.M)
    again = copy(f"sqlite:///{source}", pg_url)
    assert again.returncode == 1 and "not empty" in again.stderr
    back = copy(pg_url, f"sqlite:///{tmp_path / 'back.db'}")
    assert back.returncode == 0, back.stderr
    copied = open_storage(str(tmp_path / "back.db"))
    assert [m["move"] for m in copied.get_game("g2")["moves"]] == ["1", "2", "3"]
    assert copied.get_claim("ann") == ("s", "d") and copied.counts() == open_storage(str(source)).counts()
    copied.close()


def test_writes_wait_for_a_restarted_database_server(postgres_cluster, pg_url):
    storage = open_storage(pg_url)
    storage.apply([GameEnded(record("before"))])
    postgres_cluster.stop()
    try:
        with pytest.raises(storage.lost_connection):
            storage.apply([GameEnded(record("during"))])
        with pytest.raises(storage.lost_connection):
            storage.list_games()
    finally:
        postgres_cluster.start()
    storage.apply([GameEnded(record("during"))])  # the writer connects again
    assert {g["id"] for g in storage.list_games()} == {"before", "during"}
    storage.close()
