"""Attacks on a real ``plyhall serve`` process, each as a hostile client would run it.

Nobody takes a name, a seat or an entry that is not theirs; nobody guesses a secret quickly or locks
its owner out; no address fills the hall (connections, rooms, seeks, house bots); honest crowds behind
one address get in; two servers never share a database; a stop always ends; every HTTP request gets a
status line. Distinct attackers and owners come from distinct loopback addresses (127.0.0.2, ...).
The rule table itself is checked cell by cell, without a network, in test_identity.py.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import socket
import sqlite3
import subprocess
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import InvalidHandshake, InvalidStatus

from client.sdk import Client, ServerError
from tests.cluster_nodes import NODES, NodeUrls, next_url
from tests.conftest import free_port
from tests.helpers import child_pids, http_json, plyhall, read_until, start_server, stop, wait_until

ORGANISER = "organiser-secret"


class Served:
    """A real ``plyhall serve`` process on a free port."""

    def __init__(self, db: Path, *flags: str) -> None:
        self.db = db
        self.flags = flags
        self.port = free_port()
        self.proc = start_server(db, self.port, *flags)

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def restart(self, kill: bool = True) -> None:
        """SIGKILL (or stop) the process and start it again on the same database and port."""
        if kill:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.communicate(timeout=30)
        else:
            stop(self.proc)
        self.proc = start_server(self.db, self.port, *self.flags)

    def metrics(self) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=10) as resp:
            return resp.read().decode()


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    """``serve(*flags)``: a real server; every one started is stopped at the end."""
    started: list[Served] = []

    def start(*flags: str, db: str = "plyhall.db") -> Served:
        server = Served(tmp_path / db, "--organiser-secret", ORGANISER, *flags)
        started.append(server)
        return server

    yield start
    for server in started:
        if server.proc.returncode is None:
            stop(server.proc)


@pytest.fixture(params=NODES)
def hall_url(request: pytest.FixtureRequest, serve: Callable[..., Served]) -> Iterator[str]:
    """The URL of a real hall: one ``plyhall serve``, or three nodes of a cluster (real processes sharing a
    throwaway Redis and PostgreSQL) whose URLs ``client`` takes in turn, so holder, thief and owner each come
    through another node."""
    if request.param == "one node":
        yield serve("--grace", "60").url
        return
    pg_url, redis_url = request.getfixturevalue("pg_url"), request.getfixturevalue("redis_url")
    ports = [free_port() for _ in range(3)]
    nodes = []
    try:
        for number, port in enumerate(ports, 1):
            nodes.append(start_server(pg_url, port, "--cluster", redis_url, "--node", f"n{number}", "--grace", "60",
                                      "--organiser-secret", ORGANISER))
        yield NodeUrls([f"ws://127.0.0.1:{port}/ws" for port in ports])
    finally:
        for proc in nodes:
            stop(proc)


async def client(url: str, address: str = "127.0.0.1") -> Client:
    """A connected client whose connection comes from ``address`` (to the next node, in a cluster)."""
    return await Client(next_url(url)).connect(local_addr=(address, 0))


async def login(url: str, name: str, address: str = "127.0.0.1", **fields: Any) -> tuple[Client, dict[str, Any]]:
    """A client from ``address`` and its answer to a login (``welcome`` or ``error``, never raised)."""
    c = await client(url, address)
    reply = await c.request({"type": "login", "name": name, **fields}, check=False)
    c.resume = reply.get("resume")
    return c, reply


# Names, seats and entries -----------------------------------------------------------------------


async def test_names_seats_and_entries_cannot_be_taken_by_adding_a_secret(hall_url):
    url = hall_url
    # a name whose session ended a moment ago on another node may still read as in use there for a few
    # milliseconds (docs/SCALING.md): refused either way; on one node, always resume_required
    away_refusals = {"resume_required"} | ({"name_in_use"} if isinstance(url, NodeUrls) else set())
    # a live session
    holder, welcome = await login(url, "plainA", "127.0.0.2")
    assert welcome["type"] == "welcome" and welcome["claimed"] is False
    thief, refused = await login(url, "plainA", "127.0.0.6", secret="anything")
    assert refused["code"] == "name_in_use", refused
    assert (await holder.request({"type": "ping"}))["type"] == "pong"  # the holder was not closed
    # a seat kept during the grace period
    ann, _ = await login(url, "plainB", "127.0.0.2")
    bob, _ = await login(url, "bob", "127.0.0.3")
    await ann.request({"type": "create_room", "game": "connect4", "name": "Kept"})
    await ann.request({"type": "join", "room": "Kept", "seat": 0})
    await bob.request({"type": "join", "room": "Kept", "seat": 1})
    await ann.close()
    assert (await bob.expect("player_away"))["name"] == "plainB"
    _, refused = await login(url, "plainB", "127.0.0.6", secret="anything")
    assert refused["code"] in away_refusals, refused
    back, welcome = await login(url, "plainB", "127.0.0.2", resume=ann.resume)
    assert welcome["type"] == "welcome" and welcome["rooms"] == ["Kept"]
    assert (await bob.expect("player_back"))["name"] == "plainB"
    # a tournament entry
    org, _ = await login(url, "org", "127.0.0.4", organiser=ORGANISER)
    await org.request({"type": "tournament_create", "game": "connect4", "format": "round-robin", "name": "Cup",
                       "players": ["plainC", "plainD"]})
    entrant, _ = await login(url, "plainC", "127.0.0.2")
    await entrant.close()
    _, refused = await login(url, "plainC", "127.0.0.6", secret="anything")
    assert refused["code"] in away_refusals, refused
    again, welcome = await login(url, "plainC", "127.0.0.2", resume=entrant.resume)
    assert welcome["type"] == "welcome"
    for c in (holder, thief, bob, back, org, again):
        await c.close()


async def test_the_organiser_secret_cannot_be_guessed(serve):
    server = serve()
    replies: Counter[str] = Counter()

    async def guesses(index: int) -> None:
        c = await client(server.url, "127.0.0.2")
        for attempt in range(10):
            reply = await c.request({"type": "login", "name": f"g{index}-{attempt}", "organiser": f"guess{attempt}"},
                                    check=False)
            replies[reply.get("code", reply["type"])] += 1
        await c.close()

    await asyncio.gather(*(guesses(i) for i in range(4)))
    assert replies["throttled"] >= 30 and replies["not_organiser"] <= 5, replies
    # the right secret from the guessing address is paced too (no oracle) ...
    _, reply = await login(server.url, "right-but-paced", "127.0.0.2", organiser=ORGANISER)
    assert reply["code"] == "throttled" and reply["retry_after"] > 0
    # ... while the organiser elsewhere gets in
    c, reply = await login(server.url, "organiser", "127.0.0.3", organiser=ORGANISER)
    assert reply["type"] == "welcome" and reply["organiser"] is True
    await c.close()
    _, log = stop(server.proc)
    assert re.search(r"organiser login refused: \d+ wrong organiser secrets from 127\.0\.0\.2", log), log[-2000:]


async def test_a_spray_of_wrong_secrets_never_keeps_the_owner_out(serve):
    server = serve()
    owner, welcome = await login(server.url, "victim", "127.0.0.3", secret="the-right-one")
    assert welcome["claimed"] is True
    await owner.close()
    stop_spraying = asyncio.Event()
    sprayed: Counter[str] = Counter()

    async def spray(index: int) -> None:
        c = await client(server.url, "127.0.0.2")
        attempt = 0
        while not stop_spraying.is_set():
            attempt += 1
            reply = await c.request({"type": "login", "name": "victim", "secret": f"guess-{index}-{attempt}"},
                                    check=False)
            sprayed[reply.get("code", reply["type"])] += 1
            if reply.get("code") == "throttled":
                await asyncio.sleep(0.05)
        await c.close()

    sprayers = [asyncio.create_task(spray(i)) for i in range(4)]
    await wait_until(lambda: sprayed["throttled"] >= 20, "the spray is throttled")
    answers = []
    for _ in range(10):  # the owner, from its own address, during the spray
        c, reply = await login(server.url, "victim", "127.0.0.3", secret="the-right-one")
        answers.append(reply["type"])
        await c.close()
    # and, holding the name, with its resume token even from the spraying address (a bot restarted behind the NAT)
    holder, reply = await login(server.url, "victim", "127.0.0.3", secret="the-right-one")
    c, reply = await login(server.url, "victim", "127.0.0.2", resume=holder.resume)
    answers.append(reply["type"])
    await asyncio.wait_for(holder.closed.wait(), 10)  # taken over
    await c.close()
    stop_spraying.set()
    await asyncio.gather(*sprayers)
    assert answers == ["welcome"] * 11, (answers, sprayed)
    assert sprayed["welcome"] == 0


async def test_honest_crowds_behind_one_address_all_get_in_after_a_restart(serve):
    server = serve()
    # 40 first logins with their new secrets, at once, from one address
    firsts = await asyncio.gather(*(login(server.url, f"first{i}", "127.0.0.4", secret=f"pw{i}") for i in range(40)))
    assert [reply["type"] for _, reply in firsts] == ["welcome"] * 40
    for c, _ in firsts:
        await c.close()
    # 200 players from one address seek and play: 100 games, one move each
    players = [(await login(server.url, f"p{i}", "127.0.0.5", secret=f"pw{i}"))[0] for i in range(200)]
    await asyncio.gather(*(p.request({"type": "seek", "game": "connect4"}) for p in players))
    starts = await asyncio.gather(*(p.expect("game_start", timeout=30) for p in players))
    movers = [p for p, start in zip(players, starts, strict=True) if start["to_move"] == start["seat"]]
    assert len(movers) == 100
    await asyncio.gather(*(p.request({"type": "move", "room": s["room"], "move": "4"})
                           for p, s in zip(players, starts, strict=True) if p in movers))
    tokens = [p.resume for p in players]
    server.restart(kill=True)
    began = time.monotonic()
    back = await asyncio.gather(*(login(server.url, f"p{i}", "127.0.0.5", secret=f"pw{i}", resume=tokens[i])
                                  for i in range(200)))
    took = time.monotonic() - began
    assert [reply["type"] for _, reply in back] == ["welcome"] * 200, Counter(r.get("code") for _, r in back)
    assert all(reply["rooms"] for _, reply in back)  # every seat is taken back
    print(f"200 players back in {took:.2f} s")
    for c in [*players, *(c for c, _ in back)]:
        await c.close()


# Quotas -----------------------------------------------------------------------------------------


async def test_one_address_cannot_fill_the_hall(serve):
    server = serve("--max-connections-per-address", "20", "--max-rooms-per-address", "4", "--max-rooms", "10")
    url = server.url
    hoard = [await client(url, "127.0.0.2") for _ in range(20)]
    with pytest.raises(InvalidStatus) as refused:
        await client(url, "127.0.0.2")
    assert refused.value.response.status_code == 429 and b"too many connections" in refused.value.response.body
    for i, c in enumerate(hoard[:6]):
        await c.request({"type": "login", "name": f"hoarder{i}"})
    made = []
    for c in hoard[:6]:
        reply = await c.request({"type": "create_room", "game": "connect4"}, check=False)
        made.append(reply.get("code", reply["type"]))
    assert made == ["room"] * 4 + ["too_many_rooms"] * 2
    # others still create rooms, until the server's own limit; seeks still pair past it
    others = []
    for i, address in enumerate(("127.0.0.3", "127.0.0.4")):
        for j in range(3):
            c, _ = await login(url, f"other{i}{j}", address)
            others.append(c)
            assert (await c.request({"type": "create_room", "game": "connect4"}))["type"] == "room"
    late, _ = await login(url, "late", "127.0.0.5")
    full = await late.request({"type": "create_room", "game": "connect4"}, check=False)
    assert full["code"] == "too_many_rooms" and "server" in full["message"]
    seeker, _ = await login(url, "seeker", "127.0.0.6")
    await seeker.request({"type": "seek", "game": "connect4"})
    await late.request({"type": "seek", "game": "connect4"})
    assert (await seeker.expect("game_start"))["players"] in (["seeker", "late"], ["late", "seeker"])
    metrics = server.metrics()
    for reason in ("connections_per_address", "rooms_per_address", "rooms_server"):
        assert re.search(rf'plyhall_refusals_total{{reason="{reason}"}} [1-9]', metrics), reason
    for c in [*hoard, *others, late, seeker]:
        await c.close()


def _opening(port: int, address: str, count: int) -> list[socket.socket]:
    """``count`` connections from ``address`` that send half a request and then nothing, as a slow attacker's."""
    socks = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(address, 0))
        sock.sendall(b"GET /ws HTTP/1.1\r\nHost: x\r\nX-Padding: " + b"a" * 4000)  # never ends its header
        socks.append(sock)
    return socks


def _answer(sock: socket.socket, finish: bool = False) -> bytes:
    """What the server sends on ``sock`` until it closes it; with ``finish``, after the request is ended."""
    if finish:
        sock.sendall(b"\r\n\r\n")
    received = b""
    while chunk := sock.recv(4096):
        received += chunk
    return received


@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
async def test_one_address_cannot_hold_connections_that_never_finish_their_request(serve, loop):
    """Connections that never finish their opening request each hold a socket for the handshake's 10 s, before any
    quota sees their address: past ``--max-opening-per-address`` an address's next ones are answered 429 at once,
    while other addresses, and the address itself once its stalled ones end, are served as before."""
    server = serve("--max-opening-per-address", "8", "--trusted-proxies", "127.0.0.4", "--event-loop", loop)
    stalled = await asyncio.to_thread(_opening, server.port, "127.0.0.2", 8)
    refused = await asyncio.to_thread(_opening, server.port, "127.0.0.2", 4)
    answers = [await asyncio.to_thread(_answer, sock) for sock in refused]
    assert all(a.startswith(b"HTTP/1.1 429 ") and b"Retry-After: 1" in a for a in answers), answers[0][:300]
    assert b"too many connections from your address are opening at once (the limit is 8)" in answers[0]
    # the SDK from that address is told why
    with pytest.raises(InvalidStatus) as told:
        await client(server.url, "127.0.0.2")
    assert told.value.response.status_code == 429
    # a flood of them, never read: past as many as it may open, the refused are closed without an answer
    flood = await asyncio.to_thread(_opening, server.port, "127.0.0.2", 40)
    # another address plays on; a trusted proxy's connections are everybody's and never count
    proxied = await asyncio.to_thread(_opening, server.port, "127.0.0.4", 12)
    player, reply = await login(server.url, "honest", "127.0.0.3")
    assert reply["type"] == "welcome"
    assert urllib.request.urlopen(f"http://127.0.0.1:{server.port}/healthz", timeout=5).status == 200
    # the stalled connections, and the proxy's, were let in: ended, their requests are answered (426: no upgrade)
    for sock in (stalled[0], proxied[-1]):
        assert (await asyncio.to_thread(_answer, sock, True)).startswith(b"HTTP/1.1 426 ")
    for sock in [*stalled, *refused, *proxied, *flood]:
        sock.close()
    for _ in range(100):  # the server sees the closed ones go as soon as it reads them
        try:
            again, reply = await login(server.url, "again", "127.0.0.2")
            break
        except InvalidHandshake:  # 429, or closed without an answer while the flood's refused ones linger
            await asyncio.sleep(0.1)
    assert reply["type"] == "welcome"
    assert re.search(r'plyhall_refusals_total{reason="opening_per_address"} (4[4-9]|[5-9]\d)', server.metrics())
    await player.close()
    await again.close()
    assert "Traceback" not in stop(server.proc)[1]


async def test_house_bots_cannot_be_parked_or_hoarded(serve):
    server = serve("--house-bots", "3", "--house-idle", "10")
    url = server.url
    a1, _ = await login(url, "a1", "127.0.0.2")
    untimed = await a1.request({"type": "create_room", "game": "connect4", "opponent": "random",
                                "time_control": {"untimed": True}}, check=False)
    assert untimed["code"] == "bad_option" and "timed" in untimed["message"]
    too_long = await a1.request({"type": "create_room", "game": "connect4", "opponent": "random", "games": 1000,
                                 "time_control": {"per_move": 86400}}, check=False)
    assert too_long["code"] == "bad_option" and "at most 10 games" in too_long["message"]
    parked = await a1.request({"type": "create_room", "game": "connect4", "opponent": "random", "games": 10,
                               "time_control": {"per_move": 86400}})
    second = await a1.request({"type": "create_room", "game": "connect4", "opponent": "random"}, check=False)
    assert second["code"] == "busy" and "per name" in second["message"]
    a2, _ = await login(url, "a2", "127.0.0.2")
    await a2.request({"type": "create_room", "game": "connect4", "opponent": "random"})
    a3, _ = await login(url, "a3", "127.0.0.2")
    third = await a3.request({"type": "create_room", "game": "connect4", "opponent": "random"}, check=False)
    assert third["code"] == "busy" and "your address" in third["message"]
    visitor, _ = await login(url, "visitor", "127.0.0.3")
    assert (await visitor.request({"type": "create_room", "game": "connect4", "opponent": "random"}))["type"] == "room"
    # a1 never moves: after --house-idle seconds it loses, and the 10-game room plays no more
    room = parked["room"]["name"]
    start = await a1.expect("game_start", room=room, timeout=60)
    if start["to_move"] != start["seat"]:
        await a1.expect("moved", room=room, timeout=60)
    over = await a1.expect("game_over", room=room, timeout=60)
    assert over["winner"] == 1 and "did not move for 10 s" in over["reason"] and over["next_game"] is False
    # the bot goes, its slot is free again
    await a1.request({"type": "leave", "room": room})
    again, _ = await login(url, "again", "127.0.0.4")

    async def another_bot() -> bool:
        reply = await again.request({"type": "create_room", "game": "connect4", "opponent": "random"}, check=False)
        return reply["type"] == "room"

    deadline = time.monotonic() + 30
    while not await another_bot():
        assert time.monotonic() < deadline, "the parked bot's slot was never freed"
        await asyncio.sleep(0.5)
    for c in (a1, a2, a3, visitor, again):
        await c.close()


async def _house_seat(player: Client, room: str) -> str:
    """The name of the house bot whose seat is kept in ``room``."""
    while True:
        seats = (await player.expect("seated", room=room))["seats"]
        if seats[1] is not None:
            return seats[1]


async def test_a_house_bot_that_ends_frees_its_seat_its_name_is_never_reused_and_its_secret_is_not_on_its_command_line(
        serve):
    server = serve("--house-bots", "2", "--grace", "1")
    url = server.url
    leaver, _ = await login(url, "leaver", "127.0.0.2")
    first = (await leaver.request({"type": "create_room", "game": "connect4", "opponent": "random"}))["room"]
    bot_name = await _house_seat(leaver, first["name"])
    await wait_until(lambda: child_pids(server.proc.pid), "the house bot process starts")
    bots = child_pids(server.proc.pid)
    for pid in bots:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            argv = cmdline.read().split(b"\0")
        with open(f"/proc/{pid}/environ", "rb") as environ:
            secret = [v for v in environ.read().split(b"\0") if v.startswith(b"PLYHALL_SECRET=")]
        assert secret and secret[0].split(b"=", 1)[1] not in b" ".join(argv) and b"--secret" not in argv
    await leaver.close()  # the player goes before the game starts (or at once after)
    await wait_until(lambda: not child_pids(server.proc.pid), "the house bot stops once nobody plays it", 60)
    newcomer, _ = await login(url, "newcomer", "127.0.0.3")
    second = (await newcomer.request({"type": "create_room", "game": "connect4", "opponent": "random"}))["room"]
    new_bot = await _house_seat(newcomer, second["name"])
    assert new_bot != bot_name and new_bot.startswith("house-random-")
    start = await newcomer.expect("game_start", timeout=60)
    assert start["players"] == ["newcomer", new_bot]
    await newcomer.close()


# One database, one owner ------------------------------------------------------------------------


def test_a_second_server_on_the_same_sqlite_file_refuses_to_start(serve):
    first = serve()
    second = plyhall("serve", "--port", str(free_port()), "--db", str(first.db))
    out, err = second.communicate(timeout=60)
    assert second.returncode == 1
    assert f"{first.db} is in use by another Plyhall server (process {first.proc.pid}:" in err, err
    assert ORGANISER not in err  # the other server's command line, its secrets hidden
    assert urllib.request.urlopen(f"http://127.0.0.1:{first.port}/healthz", timeout=5).status == 200


def test_a_second_server_with_the_same_postgresql_node_refuses_to_start(pg_url):
    port = free_port()
    first = plyhall("serve", "--port", str(port), "--db", pg_url, "--node", "alpha")
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2)
                break
            except OSError:
                assert time.monotonic() < deadline and first.poll() is None, first.stderr.read()
                time.sleep(0.1)
        second = plyhall("serve", "--port", str(free_port()), "--db", pg_url, "--node", "alpha")
        _, err = second.communicate(timeout=60)
        assert second.returncode == 1 and "node alpha" in err and "run by another Plyhall server" in err
        assert f"pid={first.pid}" in err, err
        other = plyhall("serve", "--port", str(free_port()), "--db", pg_url, "--node", "beta")
        try:
            time.sleep(0.5)
            assert other.poll() is None  # another node shares the database
        finally:
            stop(other)
    finally:
        stop(first)


# Stopping ---------------------------------------------------------------------------------------


def _raw_websocket(port: int) -> socket.socket:
    """A WebSocket client that finishes the handshake and then never reads or answers anything."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    assert sock.recv(4096).startswith(b"HTTP/1.1 101")
    return sock


def _stopped_within(proc: subprocess.Popen, hang: float = 30.0) -> float:
    """SIGTERM ``proc`` and wait for it to end; the seconds it took (a hang past ``hang`` seconds fails)."""
    began = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(hang)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail(f"the server did not stop within {hang:g} s of SIGTERM")
    return time.monotonic() - began


def test_sigterm_ends_at_once_with_clients_that_never_answer(serve):
    server = serve()
    idle = [_raw_websocket(server.port) for _ in range(5)]
    took = _stopped_within(server.proc)
    print(f"stopped in {took:.1f} s with 5 silent clients")
    assert server.proc.returncode == 0
    for sock in idle:
        sock.close()


async def test_sigterm_with_a_failing_database_ends_and_the_next_start_stores_what_was_kept(serve):
    server = serve()
    url = server.url
    ann, _ = await login(url, "ann", secret="ann-pw")
    bob, _ = await login(url, "bob", secret="bob-pw")
    await ann.request({"type": "create_room", "game": "connect4", "name": "Spill"})
    await ann.request({"type": "join", "room": "Spill", "seat": 0})
    await bob.request({"type": "join", "room": "Spill", "seat": 1})
    start = await ann.expect("game_start")
    mover = ann if start["to_move"] == 0 else bob
    await mover.request({"type": "move", "room": "Spill", "move": "4"})
    lock = sqlite3.connect(server.db, isolation_level=None, timeout=10)
    lock.execute("BEGIN IMMEDIATE")  # another program holds the database: every commit fails from now on
    try:
        other = bob if mover is ann else ann
        await other.send({"type": "move", "room": "Spill", "move": "3"})  # accepted, but never stored
        await wait_until(lambda: http_json(server.port, "/healthz")[1]["database"]["queued"] >= 1,
                         "the move's write waits for the database")
        took = await asyncio.to_thread(_stopped_within, server.proc)
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    out, err = server.proc.communicate()
    print(f"stopped in {took:.1f} s with the database locked")
    assert server.proc.returncode == 1
    assert "the database refused" in out and "1 move" in out and "plyhall.db.spill" in out, out + err
    assert Path(f"{server.db}.spill").exists()
    server.proc = start_server(server.db, server.port, *server.flags)
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/api/games?status=running", timeout=10) as resp:
        game = json.loads(resp.read())["games"][0]
    assert game["move_count"] == 2 and not Path(f"{server.db}.spill").exists()
    for c in (ann, bob):
        await c.close()


async def test_a_second_sigterm_stops_at_once(serve):
    server = serve()
    ann, _ = await login(server.url, "ann")
    lock = sqlite3.connect(server.db, isolation_level=None, timeout=10)
    lock.execute("BEGIN IMMEDIATE")
    try:
        await ann.send({"type": "create_room", "game": "connect4"})  # its write waits for the database
        await wait_until(lambda: http_json(server.port, "/healthz")[1]["database"]["queued"] >= 1,
                         "the room's write waits for the database")
        server.proc.send_signal(signal.SIGTERM)
        await asyncio.to_thread(read_until, server.proc, "shutting down within")  # the stop has begun
        took = await asyncio.to_thread(_stopped_within, server.proc, 5.0)
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    assert server.proc.returncode == 1 and "second signal" in server.proc.stdout.read()
    print(f"second SIGTERM: stopped {took:.2f} s after it")
    await ann.close()


# HTTP -------------------------------------------------------------------------------------------


def _http(port: int, data: bytes) -> bytes:
    """Send raw bytes, read until the server closes; what came back."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    return received


def _statuses(answer: bytes) -> list[int]:
    return [int(code) for code in re.findall(rb"HTTP/1\.1 (\d{3}) ", answer)]


@pytest.mark.parametrize(("request_bytes", "statuses"), [
    pytest.param(b"POST /api/games HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", [405], id="post-body"),
    pytest.param(b"PUT /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n{\"a\": true}", [405], id="put-body"),
    pytest.param(b"PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\nhello", [413], id="huge-body"),
    pytest.param(b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", [501],
                 id="chunked"),
    pytest.param(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /api/rooms HTTP/1.1\r\nHost: x\r\n\r\n"
                 b"GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n", [200, 200, 404], id="pipelined"),
    pytest.param(b"HELLO THERE\r\n\r\n", [400], id="garbage"),
    pytest.param(b"GET /healthz HTTP/1.1\nHost: x\n\n", [400], id="bare-newlines"),
    pytest.param(b"POST / HTTP/1.1\r\nContent-Length: \xc2\xb2\r\n\r\n", [400], id="unicode-digit-length"),
    pytest.param(b"POST / HTTP/1.1\r\nContent-Length: " + b"9" * 5000 + b"\r\n\r\n", [400], id="5000-digit-length"),
    pytest.param(b"GET /healthz HTTP/1.1\r\nUpgrade: foo, websocket\r\n\r\nGET /healthz HTTP/1.1\r\n\r\n", [404, 200],
                 id="upgrade-elsewhere-then-pipelined"),
    pytest.param(b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                 b"Sec-WebSocket-Protocol: nope\r\n\r\nGARBAGE",
                 [400], id="refused-handshake-then-bytes"),
    pytest.param(b"GET /ws HTTP/1.1\r\nHost: x\r\n\r\n", [426], id="plain-get-of-the-websocket-endpoint"),
])
def test_every_http_request_gets_a_status_line(serve, request_bytes, statuses):
    server = serve()
    answer = _http(server.port, request_bytes)
    assert _statuses(answer) == statuses, answer[:300]
    assert urllib.request.urlopen(f"http://127.0.0.1:{server.port}/healthz", timeout=5).status == 200


async def test_a_long_illegal_move_is_echoed_only_in_part(serve):
    server = serve("--illegal-move", "lose")
    ann, _ = await login(server.url, "ann")
    bob, _ = await login(server.url, "bob")
    await ann.request({"type": "create_room", "game": "connect4", "name": "Echo"})
    await ann.request({"type": "join", "room": "Echo", "seat": 0})
    await bob.request({"type": "join", "room": "Echo", "seat": 1})
    start = await ann.expect("game_start")
    mover = ann if start["to_move"] == 0 else bob
    with pytest.raises(ServerError) as refused:
        await mover.request({"type": "move", "room": "Echo", "move": "x" * 60_000})
    assert len(refused.value.message) < 400
    over = await mover.expect("game_over")
    assert len(over["reason"]) < 400
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/api/games", timeout=10) as resp:
        assert all(len(g["reason"]) < 400 for g in json.loads(resp.read())["games"])
    for c in (ann, bob):
        await c.close()
