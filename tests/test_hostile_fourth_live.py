"""What a fourth hostile hunt found, against a server on a socket: requests whose answer goes to many (a chat line to a
full room, a seek on settings that change each time) or is huge (an event of 100 entrants) were charged as one
message, so one address held every room inside its rate limit; and an HTTP query with a bad number answered 500 with
a traceback, uncounted by the quota.

The hall's side of the same hunt is in ``test_hostile_fourth.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import msgpack
import pytest

from client.sdk import Client
from server.io.http import HttpQuota
from server.io.server import PlyhallServer, RateLimit
from tests.helpers import http_json, login

ORGANISER = "organiser-secret"


async def logged_in(srv: PlyhallServer, opened: list[Client], name: str, **kw: Any) -> Client:
    client = await login(f"ws://127.0.0.1:{srv.port}/ws", name, **kw)
    opened.append(client)
    return client


def _slow_refill(monkeypatch: pytest.MonkeyPatch) -> None:
    """The address's budget as the server has it, refilled slowly: the count does not hang on the test's pace."""
    import server.io.delivery

    monkeypatch.setattr(server.io.delivery, "ADDRESS_LARGE", RateLimit(rate=1.0, burst=1000.0))


async def test_chat_to_a_full_room_costs_its_reach(make_server, opened, monkeypatch):
    """100 members chatting in one room at a fifth of their limit each held every room for a quarter of a second
    (each line went to all 100). A line costs one more token for every 25 members it reaches, from its connection's
    limit and its address's budget: past it, refused with ``retry_after``, and the room's game goes on."""
    _slow_refill(monkeypatch)
    srv = await make_server(rate_limit=RateLimit(rate=2000, burst=4000))
    ann, bob = await logged_in(srv, opened, "ann"), await logged_in(srv, opened, "bob")
    await ann.request({"type": "create_room", "game": "connect4", "name": "Hall", "time_control": {"untimed": True}})
    await ann.request({"type": "join", "room": "Hall", "seat": 0})
    await bob.request({"type": "join", "room": "Hall", "seat": 1})
    members = []
    for n in range(48):  # 50 members: a line reaches 49 others, 1.96 more tokens
        member = await logged_in(srv, opened, f"fan-{n}")
        await member.request({"type": "join", "room": "Hall", "role": "spectator"})
        members.append(member)
    answers = [await members[0].request({"type": "chat", "room": "Hall", "text": f"line {n}"}, check=False)
               for n in range(540)]
    said = [a for a in answers if a["type"] == "chat"]
    refused = [a for a in answers if a["type"] == "error"]
    assert 505 <= len(said) <= 520, len(said)  # the address's budget of 1,000 at 1.96 a line
    assert refused and all(a["code"] == "rate_limited" and a["retry_after"] > 0 for a in refused), refused[:1]
    assert "too many messages to others (chat) for your address" in refused[0]["message"]
    assert (await ann.request({"type": "move", "room": "Hall", "move": 3}))["type"] == "moved"
    # a line to a room of two costs what a message does
    quiet = await logged_in(srv, opened, "quiet", source="127.0.0.2")
    await quiet.request({"type": "create_room", "game": "connect4", "name": "Nook"})
    await quiet.request({"type": "join", "room": "Nook", "seat": 0})
    for n in range(300):
        assert (await quiet.request({"type": "chat", "room": "Nook", "text": f"hi {n}"}))["type"] == "chat"


async def test_a_huge_events_view_costs_its_length(make_server, opened, monkeypatch):
    """An event of 100 entrants answers ``watch_tournament`` with 9,900 games (1.8 MB, 27 ms of the server's time),
    and one connection asked for it 50 times a second. Its view is kept a moment once made, and it costs one more
    token for every 250 games."""
    _slow_refill(monkeypatch)
    srv = await make_server(rate_limit=RateLimit(rate=2000, burst=4000), organiser_secret=ORGANISER)
    org = await logged_in(srv, opened, "org", organiser=ORGANISER)
    players = [f"p{n:03}" for n in range(100)]
    await org.request({"type": "tournament_create", "name": "Big", "game": "connect4", "format": "round-robin",
                       "players": players, "time_control": {"per_move": 5}})
    asker = await logged_in(srv, opened, "asker")
    answers = [await asker.request({"type": "watch_tournament", "tournament": "Big"}, check=False)
               for _ in range(30)]
    shown = [a for a in answers if a["type"] == "tournament"]
    assert len(shown[0]["tournament"]["schedule"]) == 9900
    assert len(shown) in (26, 27), len(shown)  # 1,000 at 39.6 more each
    refused = answers[len(shown)]
    assert refused["code"] == "rate_limited" and "long answers (watch_tournament)" in refused["message"], refused


async def test_a_bad_number_in_a_query_is_a_clear_400_counted_by_the_quota(make_server, caplog):
    """``?limit=--5`` passed the check (``"--5".lstrip("-")`` is digits), then ``int()`` raised: 500 "Failed to open a
    WebSocket connection", a traceback in the log each time, and no charge against the address's quota."""
    srv = await make_server()
    srv.api.http.quota = HttpQuota(2.0)  # a burst of 6
    for path in ("/api/games?limit=--5", "/api/games?offset=--1", "/api/ratings/connect4?limit=--2",
                 "/api/players/ann?limit=--2", "/api/games?limit=%C2%B2", "/api/games?limit=1e3"):
        status, body = await asyncio.to_thread(http_json, srv, path)
        if status == 429:
            break
        assert status == 400 and "must be an integer from" in body["error"], (path, status, body)
    answers = await asyncio.gather(*(asyncio.to_thread(http_json, srv, "/api/games?limit=--5") for _ in range(20)))
    statuses = sorted(status for status, _ in answers)
    assert set(statuses) == {400, 429} and statuses.count(429) >= 10, statuses  # counted like any other request
    assert not [r for r in caplog.records if r.levelname == "ERROR"], caplog.records[:1]


async def test_a_players_name_with_a_newline_and_a_games_quoted_id(make_server):
    srv = await make_server()
    status, body = await asyncio.to_thread(http_json, srv, "/api/players/ann%0a")
    assert status == 404 and "names are 1 to 32 letters" in body["error"], body
    status, body = await asyncio.to_thread(http_json, srv, "/api/games/no%20such")
    assert status == 404 and body["error"] == "no game with id 'no such'", body



async def test_a_move_past_the_rate_limit_is_played_and_a_dropped_request_hears_why(make_server, opened):
    """A bot that asked for the Amazons opening's legal moves ten times ran its bucket dry (27 more tokens each); its
    move after them was dropped without a word and its clock ran, and the one error said "more than 50 messages a
    second", without the id of any request. A move is never dropped now (played, it costs nothing; refused, a
    message), and the error names the dropped request."""
    srv = await make_server(rate_limit=RateLimit(rate=50, burst=200))
    ann, bob = await logged_in(srv, opened, "ann"), await logged_in(srv, opened, "bob")
    await ann.request({"type": "create_room", "game": "amazons", "name": "Wide", "time_control": {"per_move": 60}})
    await ann.request({"type": "join", "room": "Wide", "seat": 0})
    await bob.request({"type": "join", "room": "Wide", "seat": 1})
    for n in range(10):
        await ann.send({"type": "legal_moves", "room": "Wide", "id": f"L{n}"})
    await ann.send({"type": "move", "room": "Wide", "move": "d10-d7/g7", "id": "M"})
    replies = []
    while not any(r.get("id") == "M" for r in replies):
        replies.append(await ann.recv(timeout=10))
    answered = [r["id"] for r in replies if r["type"] == "legal_moves"]
    limited = [r for r in replies if r["type"] == "error"]
    assert 5 <= len(answered) < 10, answered
    assert [r["id"] for r in limited] == [f"L{len(answered)}"], limited  # said once, for the first one dropped
    assert "over the rate limit" in limited[0]["message"] and "moves are never dropped" in limited[0]["message"]
    assert next(r for r in replies if r.get("id") == "M")["type"] == "moved"
    assert (await bob.expect("moved", room="Wide"))["seq"] == 1
    # a move refused while the bucket is dry is answered too (and counted as a message)
    refused = await ann.request({"type": "move", "room": "Wide", "move": "a7-a6/a5", "id": "N"}, check=False)
    assert refused["type"] == "error" and refused["code"] == "not_your_turn", refused


async def test_a_flood_of_refused_moves_is_closed_as_any_flood(make_server, opened):
    """Moves are handled past the rate limit; each is a strike until it is played, so moves refused (to a room that
    does not exist, or not even a move) are closed after the 50 strikes that close any flood."""
    from websockets.exceptions import ConnectionClosed

    srv = await make_server(rate_limit=RateLimit(rate=50, burst=200))
    flooder = await logged_in(srv, opened, "flooder")
    bystander = await logged_in(srv, opened, "calm", source="127.0.0.2")
    assert flooder.ws is not None
    with contextlib.suppress(ConnectionClosed):
        for n in range(2000):
            await flooder.ws.send(msgpack.packb({"type": "move", "room": "Nowhere", "move": 3, "id": n} if n % 2
                                                else {"type": "move", "id": n}))
        await asyncio.wait_for(flooder.ws.wait_closed(), 10)
    assert flooder.ws.close_code == 1008 and flooder.ws.close_reason == "rate limit exceeded"
    assert (await bystander.request({"type": "ping"}))["type"] == "pong"


async def test_a_seek_pays_for_the_seekers_it_reaches_not_for_the_lobby(make_server, opened, monkeypatch):
    """A seek's charge counted every message it set off, the lobby's listing to every page watching it among them:
    with 300 lobby watchers, a new seek cost 30 tokens. It pays for the other seekers told of it."""
    _slow_refill(monkeypatch)
    srv = await make_server()
    for n in range(60):
        watcher = await logged_in(srv, opened, f"page-{n}", source="127.0.0.3")
        await watcher.request({"type": "watch_lobby"})
    seeker = await logged_in(srv, opened, "seeker")
    budget = srv.large_answers
    for per_move in range(5, 15):  # settings that change each time: each a new seek, the lobby told of each (its
        assert (await seeker.request({"type": "seek", "game": "quarto", "time_control": {"per_move": per_move}}))[
            "type"] == "seeking"  # pushes spaced: some seeks set one off, 60 messages)
        await asyncio.sleep(0.3)
    assert budget["127.0.0.1"].level(time.monotonic()) >= 999, budget  # nobody else seeks: nothing to pay
