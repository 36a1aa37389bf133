"""Nobody hogs the server's reads: the analysis queue serves requesters in turn, each address has its share of it
(past which, and past the whole queue's bound, a request is answered 429 with Retry-After), games too short to
teach anything are not analysed by ``--analyse-finished``; plain HTTP is limited per address (429 with
Retry-After; the web page's files are free; behind a trusted proxy, by the forwarded address) and the heavy
listings' ``limit`` is capped.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from websockets.asyncio.client import connect

from server.io.analysis import FINISHED, MAX_QUEUED, MIN_AUTO_PLIES, AnalysisQueue, QueueFull
from server.io.api import PLAYER_GAMES_MAX
from server.io.http import HttpQuota
from tests.helpers import running_server


def idle_queue(per_requester: int = 3) -> tuple[AnalysisQueue, concurrent.futures.Executor]:
    """A queue whose workers never start: what it would serve, in order, stays to be read."""
    reads = concurrent.futures.ThreadPoolExecutor(1)
    return AnalysisQueue(lambda game_id: None, reads, lambda game_id, data: None, per_requester=per_requester), reads


def test_the_queue_serves_requesters_in_turn_and_a_newcomer_is_next():
    queue, reads = idle_queue(per_requester=50)
    with reads:
        for n in range(40):
            queue.request(f"flood{n}", "10.0.0.2")
        queue.request("mine", "10.0.0.3")
        assert queue.status("mine")["ahead"] == 1, "one of the flood's games, then mine"
        queue.request("other", "10.0.0.4")
        order = [queue._next().game_id for _ in range(6)]
    assert order == ["flood0", "mine", "other", "flood1", "flood2", "flood3"]


def test_each_address_has_its_share_and_the_queue_its_bound():
    queue, reads = idle_queue(per_requester=3)
    with reads:
        for n in range(3):
            queue.request(f"g{n}", "10.0.0.2")
        queue.request("g0", "10.0.0.2")  # asked again: the same job, nothing more charged
        with pytest.raises(QueueFull, match="your share of the queue") as refused:
            queue.request("g3", "10.0.0.2")
        assert refused.value.retry_after >= 1
        queue.request("g3", "10.0.0.3")  # another address is not charged
        for n in range(MAX_QUEUED - 4):
            queue.request(f"h{n}", f"10.1.{n // 200}.{n % 200}")
        with pytest.raises(QueueFull, match="the queue's limit") as full:
            queue.request("late", "10.9.9.9")
        assert full.value.retry_after >= 1 and queue.waiting() == MAX_QUEUED


def test_analyse_finished_skips_games_too_short_to_teach_anything():
    queue, reads = idle_queue()
    with reads:
        records = [SimpleNamespace(id=f"g{plies}", status="finished", moves=[object()] * plies)
                   for plies in (1, MIN_AUTO_PLIES - 1, MIN_AUTO_PLIES, 30)]
        queue.request_played(records)
    assert list(queue.jobs) == [f"g{MIN_AUTO_PLIES}", "g30"]
    assert all(job.requester == FINISHED for job in queue.jobs.values())


def test_the_http_quota_charges_by_size_and_says_when_to_come_back():
    clock = [0.0]
    quota = HttpQuota(rate=10.0, clock=lambda: clock[0])
    assert quota.wait("a") == 0
    quota.charge("a", 40 * 32 * 1024)  # a heavy answer: 41 tokens from a bucket of 30
    assert quota.wait("a") == pytest.approx((1 + 11) / 10)
    assert quota.wait("b") == 0, "another address has its own bucket"
    clock[0] += 1.2
    assert quota.wait("a") == 0


# A real server ---------------------------------------------------------------------------------------------


def fetch(port: int, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def fetch_from(address: str, port: int, path: str, forwarded: str | None = None) -> tuple[int, dict[str, str], dict]:
    """A GET from the local address ``address`` (127.0.0.x), saying it was ``forwarded`` for that client."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(address, 0))
    try:
        conn.request("GET", path, headers={"X-Forwarded-For": forwarded} if forwarded else {})
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), json.loads(resp.read() or b"null")
    finally:
        conn.close()


def at_once(count: int, ask: Callable[[], Any]) -> list[Any]:
    """``count`` requests at once (threads), each by ``ask``: their answers."""
    with concurrent.futures.ThreadPoolExecutor(count) as pool:
        return list(pool.map(lambda _: ask(), range(count)))


def test_http_is_limited_per_address_with_retry_after_and_the_page_files_are_free(tmp_path: Path):
    with running_server(tmp_path, "--http-rate", "2", "--trusted-proxies", "127.0.0.9") as port:
        answers = at_once(50, lambda: fetch(port, "/api/rooms"))
        statuses = [status for status, _, _ in answers]
        assert statuses.count(200) < 20 and statuses.count(429) > 30, statuses  # a burst of 6, and 2 a second
        _, headers, body = next(answer for answer in answers if answer[0] == 429)
        assert int(headers["Retry-After"]) >= 1 and "too many HTTP requests" in json.loads(body)["error"]
        assert all(fetch(port, "/")[0] == 200 for _ in range(10)), "the web page is not counted"
        assert fetch(port, "/healthz")[0] == 200
        assert fetch_from("127.0.0.2", port, "/api/rooms")[0] == 200, "another address has its own share"
        # behind a trusted proxy, each forwarded client has its own share; an untrusted peer's header is ignored
        assert 429 in at_once(50, lambda: fetch_from("127.0.0.9", port, "/api/rooms", "198.51.100.1")[0])
        assert fetch_from("127.0.0.9", port, "/api/rooms", "198.51.100.2")[0] == 200
        faked = iter(range(50))
        assert 429 in at_once(50, lambda: fetch_from("127.0.0.3", port, "/api/rooms", f"198.51.100.{next(faked)}")[0])


def test_the_largest_pages_are_capped_with_a_clear_answer(tmp_path: Path):
    with running_server(tmp_path) as port:
        status, _, body = fetch(port, f"/api/players/ann?limit={PLAYER_GAMES_MAX + 1}")
        assert status == 400 and f"from 1 to {PLAYER_GAMES_MAX}" in json.loads(body)["error"]
        status, _, body = fetch(port, "/api/ratings/connect4?limit=5000")
        assert status == 400 and "from 1 to 1000" in json.loads(body)["error"]


async def _short_games(port: int, count: int) -> list[str]:
    """``count`` Connect Four games of one move each, resigned: their record ids."""
    url = f"ws://127.0.0.1:{port}/ws"
    records = []
    async with connect(url, subprotocols=["plyhall.v1.json"]) as a, connect(url, subprotocols=["plyhall.v1.json"]) as b:
        for ws, name in ((a, "fa"), (b, "fb")):
            await ws.send(json.dumps({"type": "login", "name": name}))
            await ws.recv()
        await a.send(json.dumps({"type": "create_room", "game": "connect4", "name": "short", "games": count}))
        await a.send(json.dumps({"type": "join", "room": "short", "seat": 0}))
        while json.loads(await a.recv())["type"] != "joined":  # the room exists: the other may join it
            pass
        await b.send(json.dumps({"type": "join", "room": "short", "seat": 1}))
        for _ in range(count):
            while (msg := json.loads(await a.recv()))["type"] != "game_start":
                pass
            mover = a if msg["players"][msg["to_move"]] == "fa" else b
            await mover.send(json.dumps({"type": "move", "room": "short", "move": "4"}))
            await mover.send(json.dumps({"type": "resign", "room": "short"}))
            while (msg := json.loads(await a.recv()))["type"] != "game_over":
                pass
            records.append(msg["record"])
    return records


async def test_a_full_share_of_the_analysis_queue_gets_429_and_a_bystander_is_served_next(tmp_path: Path):
    with running_server(tmp_path, "--analysis-per-address", "2", "--analysis-nodes", "1000") as port:
        games = await _short_games(port, 6)
        answers = []
        for game_id in games[:5]:  # one may be running already; two wait; then the address's share is full
            status, headers, body = await asyncio.to_thread(fetch_from, "127.0.0.2", port,
                                                            f"/api/games/{game_id}/analysis?request=1")
            answers.append((status, headers, body))
            if status == 429:
                break
        status, headers, body = answers[-1]
        assert status == 429, [a[0] for a in answers]
        assert int(headers["Retry-After"]) >= 1 and "your share" in body["error"] and body["retry_after"] >= 1
        status, _, body = await asyncio.to_thread(fetch_from, "127.0.0.3", port,
                                                  f"/api/games/{games[5]}/analysis?request=1")
        assert status in (200, 202), body
        if body["status"] == "queued":
            assert body["ahead"] <= 1, body  # next but one at worst, however many the other address asked for


async def test_heavy_listings_are_kept_a_moment_but_never_when_live_or_renewed():
    """Many readers of one heavy page cost one answer a second; a page of live figures (running games) is made
    afresh for each reader, and so is any page once a game has ended (``version`` moves)."""
    from websockets.datastructures import Headers
    from websockets.http11 import Request

    from server.io.http import HttpApi, json_response

    made: list[str] = []

    async def listing(path: str, query: dict[str, str]):
        made.append(query.get("status", "ended"))
        return json_response(200, {"made": len(made)})

    api, ended = HttpApi(), [0]
    api.version = lambda: ended[0]
    api.route("/api/games", listing, cache=1.0, live=lambda query: query.get("status") == "running")
    ask = lambda path: api.respond(Request(path, Headers()))  # noqa: E731
    for _ in range(5):
        await ask("/api/games?limit=500")
    assert made == ["ended"], "five readers, one answer made"
    for _ in range(3):
        await ask("/api/games?status=running")
    assert made.count("running") == 3, "running games are never kept"
    ended[0] += 1  # a game ended: the kept listing is stale
    await ask("/api/games?limit=500")
    assert made.count("ended") == 2
