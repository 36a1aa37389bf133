"""The client SDK against a live server: bots play, reconnect, survive long thinking."""

from __future__ import annotations

import asyncio
import os
import random
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from client.sdk import Client, Player, RunOptions, Turn, run_player
from server.io.server import PlyhallServer
from server.storage import SQLiteStorage
from tests.cluster_nodes import hall_server, hall_url, next_url  # noqa: F401  (this module's server and url: one node, and three)
from tests.conftest import free_port
from tests.helpers import login, wait_until


class RandomPlayer(Player):
    """Picks a random legal move; module level so a worker process can unpickle it."""

    def __init__(self, seed: int = 0, think: float = 0.0) -> None:
        self.rng = random.Random(seed)
        self.think = think

    def choose(self, turn: Turn):
        if self.think:
            time.sleep(self.think)  # blocks the worker process, never the connection
        return self.rng.choice(turn.legal_moves)


class HangsOnce(Player):
    """Hangs in its first turn ever (a search that never ends), then plays at random; ``marker`` is the file that
    says it hung already (its thinking process is started again)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker
        self.rng = random.Random(0)

    def choose(self, turn: Turn):
        if not os.path.exists(self.marker):
            open(self.marker, "w").close()
            time.sleep(3600)
        return self.rng.choice(turn.legal_moves)


def on_status_saying(words: str) -> tuple[asyncio.Event, Callable[[str], None]]:
    """An event set once a bot says (through ``RunOptions.on_status``) a sentence with ``words``, and the
    callback that sets it."""
    said = asyncio.Event()

    def on_status(text: str) -> None:
        if words in text:
            said.set()

    return said, on_status


async def test_two_sdk_bots_play_a_series_in_one_room(server, url):
    results: dict[str, list] = {}
    opts = dict(game="santorini", room="Series", games=3, think="thread",
                room_options={"games": 3, "time_control": {"per_move": 20}})
    a = run_player(RandomPlayer(1), RunOptions(name="ann", coords="cosc322", url=next_url(url), **opts))
    b = run_player(RandomPlayer(2), RunOptions(name="bob", coords="matrix", url=next_url(url), **opts))
    results["ann"], results["bob"] = await asyncio.wait_for(asyncio.gather(a, b), 60)
    assert len(results["ann"]) == 3 and len(results["bob"]) == 3
    for ra, rb in zip(results["ann"], results["bob"], strict=True):
        assert ra.record == rb.record and ra.winner == rb.winner
        assert ra.score + rb.score == 1.0
    await server.flush()
    assert server.storage.count_games() == 3


async def test_bots_without_a_room_seek_and_are_paired(server, url):
    seeking, on_status = on_status_saying("waiting for an opponent")
    a = asyncio.create_task(run_player(RandomPlayer(3), RunOptions(
        name="ann", url=next_url(url), game="quarto", games=1, think="thread", on_status=on_status)))
    await wait_until(seeking, "ann waits for an opponent")
    b = asyncio.create_task(run_player(RandomPlayer(4), RunOptions(
        name="bob", url=next_url(url), game="quarto", games=1, think="thread")))
    ra, rb = await asyncio.wait_for(asyncio.gather(a, b), 60)
    assert ra[0].record == rb[0].record and ra[0].room == "Kalamalka Lake"


async def test_sdk_reconnects_and_resumes_its_seat_after_a_drop(server, url):
    opts = dict(game="connect4", room="Drop", games=1, think="thread",
                room_options={"grace": 30, "time_control": {"per_move": 20}})
    events: list[str] = []
    moved = asyncio.Event()

    def on_event(msg: dict[str, Any]) -> None:
        events.append(msg["type"])
        if msg["type"] == "moved":
            moved.set()

    ann = RunOptions(name="ann", secret="pw", on_event=on_event, url=next_url(url), **opts)  # on the server's node
    task_a = asyncio.create_task(run_player(RandomPlayer(5, think=0.05), ann))
    task_b = asyncio.create_task(run_player(RandomPlayer(6, think=0.05), RunOptions(name="bob", url=next_url(url),
                                                                                    **opts)))
    await wait_until(moved, "ann saw a move")
    # the server drops ann's connection in the middle of the game
    conn = server.hall.by_name["ann"].conn
    server.connections[conn].ws.transport.abort()
    ra, rb = await asyncio.wait_for(asyncio.gather(task_a, task_b), 60)
    assert events.count("game_start") >= 2, "the resumed session got the full state again"
    assert ra[0].record == rb[0].record
    await server.flush()
    record = server.storage.get_game(ra[0].record)
    assert record["status"] == "finished" and "disconnected" not in record["reason"]


async def test_long_thinking_bot_stays_connected(db_path):
    # keepalive: the server pings every 0.2 s and drops a client silent for 1 s;
    # the bot thinks 1.5 s per move in its worker process, so it must stay connected
    srv = PlyhallServer(SQLiteStorage(db_path), port=0, ping_interval=0.2, ping_timeout=1.0)
    await srv.start()
    url = f"ws://127.0.0.1:{srv.port}/ws"
    try:
        opts = dict(url=url, game="connect4", room="Slow", games=1, max_retries=0,
                    room_options={"grace": 0, "time_control": {"per_move": 30}})
        slow = run_player(RandomPlayer(7, think=1.5), RunOptions(name="slow", think="process", **opts))
        quick = asyncio.create_task(run_player(RandomPlayer(8), RunOptions(name="quick", think="thread", **opts)))
        slow_results = await asyncio.wait_for(slow, 120)
        quick_results = await asyncio.wait_for(quick, 10)
        assert slow_results[0].record == quick_results[0].record
        assert "disconnected" not in slow_results[0].reason
        assert len(srv.storage.get_game(slow_results[0].record)["moves"]) >= 2
    finally:
        await srv.stop()


async def test_plyhall_bot_command_plays_against_an_sdk_bot(server, url):
    # a plain Popen waited on in a thread: asyncio's child watcher can miss the exit of a
    # process when an earlier test's event loop has closed, and then waits forever
    proc = subprocess.Popen(
        [sys.executable, "-m", "plyhall", "bot", "--game", "magnetic-cave", "--level", "novice",
         "--name", "nova", "--room", "Cave", "--url", url, "--games", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        sdk_bot = asyncio.create_task(run_player(RandomPlayer(9), RunOptions(
            name="rando", url=url, room="Cave", game="magnetic-cave", games=2, think="thread")))
        finished = asyncio.create_task(asyncio.to_thread(proc.communicate, timeout=180))
        done, _ = await asyncio.wait({sdk_bot, finished}, timeout=180, return_when=asyncio.FIRST_EXCEPTION)
        if finished in done and sdk_bot not in done and proc.returncode != 0:  # the command failed: say why
            out, err = finished.result()
            raise AssertionError(f"plyhall bot failed ({proc.returncode}): {out}{err}")
        results = await asyncio.wait_for(sdk_bot, 60)
        out, err = await asyncio.wait_for(finished, 60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    assert proc.returncode == 0, err
    # one line a game, numbered as the room numbers it (each game here is the first of its own series in Cave), with
    # the bot's own count of its games beside it
    ended = re.findall(r"^game \d+ in Cave: (?:won|drew|lost) against rando .*; nova's game (\d) of 2, score ", out,
                       re.M)
    assert ended == ["1", "2"], out
    started = re.findall(r"^nova: playing game \d+ in Cave against rando \(nova's game (\d) of 2\)$", out, re.M)
    assert started == ["1", "2"], out
    points = sum(1 - r.score for r in results)
    assert f"done: {points:g}/2 points" in out


def test_bot_command_rejects_bad_level():
    out = subprocess.run([sys.executable, "-m", "plyhall", "bot", "--game", "connect4", "--level", "grandmaster",
                          "--name", "x"], capture_output=True, text=True)
    assert out.returncode == 2 and "levels:" in out.stderr


async def test_bot_gives_up_with_a_clear_error_when_no_server(tmp_path):
    port = free_port()
    with pytest.raises(ConnectionError, match="reconnection attempts"):
        await run_player(RandomPlayer(), RunOptions(name="lost", url=f"ws://127.0.0.1:{port}/ws", game="connect4",
                                                     max_retries=1, think="thread"))


async def test_client_request_reply_ids(server, url):
    client = Client(url)
    await client.connect()
    reply = await client.request({"type": "ping"})
    assert reply["type"] == "pong" and reply["id"] == 1
    await client.close()


async def test_bot_waits_for_a_finished_room_to_empty_and_sets_it_up_again(server, url):
    a = await login(url, "ann")
    b = await login(url, "bob")
    await a.request({"type": "create_room", "game": "connect4", "name": "Fin"})
    await a.request({"type": "join", "room": "Fin"})
    await b.request({"type": "join", "room": "Fin"})
    await a.request({"type": "resign", "room": "Fin"})
    assert server.hall.rooms["Fin"].status == "finished"
    opts = dict(url=url, room="Fin", game="connect4", games=1, think="thread")
    refused, on_status = on_status_saying("Fin is finishing its games")
    cy = asyncio.create_task(run_player(RandomPlayer(10), RunOptions(name="cy", on_status=on_status, **opts)))
    await wait_until(refused, "cy was refused (the room is finished)")
    assert not cy.done()  # and keeps asking
    await a.request({"type": "leave", "room": "Fin"})
    await b.request({"type": "leave", "room": "Fin"})
    dee = asyncio.create_task(run_player(RandomPlayer(11), RunOptions(name="dee", **opts)))
    rc, rd = await asyncio.wait_for(asyncio.gather(cy, dee), 60)
    assert rc[0].room == rd[0].room == "Fin" and rc[0].record == rd[0].record
    await a.close()
    await b.close()


@pytest.fixture
def unretrieved() -> Iterator[Callable[[], list[dict[str, Any]]]]:
    """What asyncio would print as "Future exception was never retrieved" in this test: call it once the objects the
    test made are deleted (asyncio reports such an error when its future is freed)."""
    import gc

    unseen: list[dict[str, Any]] = []
    loop = asyncio.get_event_loop()
    loop.set_exception_handler(lambda _loop, context: unseen.append(context))

    def reported() -> list[dict[str, Any]]:
        gc.collect()
        return [context for context in unseen if "never retrieved" in str(context.get("message"))]

    yield reported
    loop.set_exception_handler(None)


async def test_a_request_whose_send_fails_leaves_no_unretrieved_error_when_the_connection_ends(server, url,
                                                                                              unretrieved):
    """A bot whose request could not be sent (the connection was going) must not see asyncio's "Future exception was
    never retrieved" when the connection then ends: the request's own error is all it gets."""
    client = Client(url)
    await client.connect()
    real_send = client.send

    async def failing_send(msg: dict[str, Any]) -> None:
        raise ConnectionError("the connection is closing")

    client.send = failing_send  # type: ignore[method-assign]
    with pytest.raises(ConnectionError, match="closing"):
        await client.request({"type": "ping"})
    client.send = real_send  # type: ignore[method-assign]
    await client.close()
    await asyncio.wait_for(client.closed.wait(), 10)
    del client, real_send
    assert not unretrieved()


async def test_a_request_failed_by_the_reader_while_its_send_waits_leaves_no_unretrieved_error(server, url,
                                                                                              unretrieved):
    """The connection ends while a request's send still waits: the reader fails the request's reply, then the send
    raises. The bot gets the send's error, and asyncio has no "Future exception was never retrieved" to print (a bot
    whose every login was dropped printed it)."""
    client = Client(url)
    await client.connect()

    async def send_while_the_connection_ends(msg: dict[str, Any], ending: Client = client) -> None:
        assert ending.ws is not None
        ending.ws.transport.abort()
        await asyncio.wait_for(ending.closed.wait(), 10)  # the reader has failed every reply waited for
        raise ConnectionError("the connection ended while sending")

    client.send = send_while_the_connection_ends  # type: ignore[method-assign]
    with pytest.raises(ConnectionError, match="while sending"):
        await client.request({"type": "ping"})
    del client, send_while_the_connection_ends
    assert not unretrieved()


class HeldPlayer(Player):
    """Plays the first legal move once let go (``go``); says when it starts thinking (``thinking``). Thinks in a
    thread (the events are shared with the test)."""

    def __init__(self) -> None:
        import threading

        self.thinking = threading.Event()
        self.go = threading.Event()

    def choose(self, turn: Turn):
        self.thinking.set()
        assert self.go.wait(30), "never let go"
        return turn.legal_moves[0]


async def ann_joins_until_bob_thinks(srv: PlyhallServer, url: str, room: str, player: HeldPlayer) -> Client:
    """ann joins the room bob's bot set up, and moves first if she is to: her client once bob's bot thinks."""
    await wait_until(lambda: room in srv.hall.rooms, "bob's bot set up its room")
    ann = await login(url, "ann")
    await ann.request({"type": "join", "room": room})
    start = await ann.expect("game_start", room=room)
    if start["to_move"] == start["seat"]:
        await ann.send({"type": "move", "room": room, "move": "4"})
    await wait_until(player.thinking.is_set, "bob's bot thinks")
    return ann


async def test_a_bot_taken_over_while_it_thinks_stops_and_leaves_the_name_to_the_second_process(one_server):
    """A second process logs in with the bot's name and secret while the bot thinks: the server closes the bot's
    connection, and the bot meets that close sending its move, not reading. It stops all the same (it used to take
    it for a lost connection, log in again and take the name back from the second process)."""
    from client.play_loop import PlayerRunner
    from client.sdk import TakenOver

    srv, url = one_server, f"ws://127.0.0.1:{one_server.port}/ws"
    player = HeldPlayer()
    runner = PlayerRunner(player, RunOptions(name="bob", secret="pw", url=url, game="connect4", room="Take", games=1,
                                             think="thread", room_options={"time_control": {"untimed": True}}))
    bot = asyncio.create_task(runner.run())
    try:
        ann = await ann_joins_until_bob_thinks(srv, url, "Take", player)
        second = await login(url, "bob", secret="pw")
        await wait_until(runner.client.closed, "the server closed the first connection")
        player.go.set()
        await wait_until(lambda: bot.done() or second.closed.is_set(), "the first bot stopped, or took the name back")
        assert not second.closed.is_set(), "the first bot logged in again and took the name back"
        with pytest.raises(TakenOver, match="this one stops"):
            await bot
        await second.request({"type": "ping"})  # the second process keeps its connection, and the name
        assert not second.closed.is_set() and srv.hall.by_name["bob"].conn in srv.connections
        await ann.close()
        await second.close()
    finally:
        player.go.set()
        bot.cancel()


async def test_a_bot_counts_its_reconnection_attempts_from_its_last_session_that_got_somewhere(one_server):
    """A drop after a session in which the game went on starts a new run of attempts: a bot allowed one attempt in a
    row survives two drops, each mended at the first try, with a move played between them (the count went on from
    one drop to the next, so that a bot running for days gave up at its ninth drop)."""
    srv, url = one_server, f"ws://127.0.0.1:{one_server.port}/ws"
    bot = asyncio.create_task(run_player(RandomPlayer(12), RunOptions(
        name="bob", secret="pw", url=url, game="connect4", room="Drops", games=1, max_retries=1, think="thread",
        room_options={"grace": 60, "time_control": {"untimed": True}})))
    try:
        await wait_until(lambda: "Drops" in srv.hall.rooms, "bob's bot set up its room")
        ann = await login(url, "ann")
        await ann.request({"type": "join", "room": "Drops"})
        await ann.expect("game_start", room="Drops")
        room = srv.hall.rooms["Drops"]
        ann_seat = room.seats.index("ann")
        for drop in (1, 2):
            conn = srv.hall.by_name["bob"].conn
            srv.connections[conn].ws.transport.abort()
            await wait_until(lambda dropped=conn: bot.done() or getattr(srv.hall.by_name.get("bob"), "conn", dropped)
                             != dropped, f"bob's bot back after drop {drop}")
            assert not bot.done(), bot.exception()
            await wait_until(lambda: room.game.to_move(room.state) == ann_seat, "bob's bot moved")
            played = len(room.moves)
            await ann.send({"type": "move", "room": "Drops", "move": str(drop + 1)})  # columns 2, 3: no four
            await wait_until(lambda since=played: len(room.moves) == since + 2, "bob's bot answered ann's move")
        await ann.request({"type": "resign", "room": "Drops"})
        [result] = await asyncio.wait_for(bot, 30)
        assert result.room == "Drops" and result.winner == result.seat and "resigned" in result.reason
        await ann.close()
    finally:
        bot.cancel()


class TimedHeldPlayer(HeldPlayer):
    """A :class:`HeldPlayer` that keeps the time left it was given for each turn, with the moves played before it."""

    def __init__(self) -> None:
        super().__init__()
        self.given: list[tuple[list[str], float | None]] = []

    def choose(self, turn: Turn):
        self.given.append((list(turn.moves), turn.time_left))
        return super().choose(turn)


async def test_a_turn_read_late_gives_the_bot_the_time_its_clock_really_has_left(one_server):
    """bob's bot thinks in the first game of a two-game room when ann resigns it; the second game starts at once, bob
    to move, and bob's clock runs while the bot still thinks about the first game. When the bot reads the second
    game's start, its turn says the time really left (less the time the message waited), not the time the message
    said when it came: an engine that used what the turn said lost the second game on time."""
    url = f"ws://127.0.0.1:{one_server.port}/ws"
    player = TimedHeldPlayer()
    bot = asyncio.create_task(run_player(player, RunOptions(name="bob", url=url, game="connect4", room="Two",
                                                            games=2, think="thread")))
    try:
        ann = await login(url, "ann")
        await ann.request({"type": "create_room", "name": "Two", "game": "connect4", "games": 2,
                           "time_control": {"per_move": 30}})
        await ann.request({"type": "join", "room": "Two", "seat": 0})
        await ann.expect("game_start", room="Two", game_no=1)
        await ann.send({"type": "move", "room": "Two", "move": "4"})
        await wait_until(player.thinking.is_set, "bob's bot thinks")
        await ann.request({"type": "resign", "room": "Two"})
        second = await ann.expect("game_start", room="Two", game_no=2)
        assert second["to_move"] != second["seat"] and second["clocks"]["left"] == [30, 30]  # bob's clock runs
        await asyncio.sleep(1.0)  # the bot goes on thinking about the first game
        player.go.set()
        await wait_until(lambda: len(player.given) == 2, "bob's bot moves in the second game")
        await ann.request({"type": "resign", "room": "Two"})
        first, second_game = await asyncio.wait_for(bot, 30)
        assert first.reason == second_game.reason == "ann resigned"
        (moves, _), (moves_2, left) = player.given
        assert moves == ["4"] and moves_2 == [] and left is not None and left <= 29.0, player.given
        await ann.close()
    finally:
        player.go.set()
        bot.cancel()


async def test_a_bot_whose_seat_went_while_it_was_away_counts_how_its_game_ended(one_server):
    """bob's bot loses its connection in a room with no grace: the server ends the game at once (bob lost: he
    disconnected) and frees his seat, so nothing about that game reaches the bot when it is back. It reads the game's
    record over HTTP and counts the loss, and stops after its one game (it used to forget the game and set up the room
    again, for a game more than it was asked for)."""
    srv, url = one_server, f"ws://127.0.0.1:{one_server.port}/ws"
    player = HeldPlayer()
    bot = asyncio.create_task(run_player(player, RunOptions(
        name="bob", secret="pw", url=url, game="connect4", room="Gone", games=1, think="thread",
        room_options={"grace": 0, "time_control": {"untimed": True}})))
    try:
        ann = await ann_joins_until_bob_thinks(srv, url, "Gone", player)
        srv.connections[srv.hall.by_name["bob"].conn].ws.transport.abort()
        over = await ann.expect("game_over", room="Gone")
        assert "bob disconnected" in over["reason"]
        await ann.request({"type": "leave", "room": "Gone"})  # the room goes: bob's seat went with the game
        player.go.set()
        await wait_until(lambda: bot.done() or "bob" in getattr(srv.hall.rooms.get("Gone"), "seats", ()),
                         "bob's bot stopped, or set up the room again")
        assert bot.done(), "bob's bot set up the room again, for a game more than it was asked for"
        [result] = bot.result()
        assert result.room == "Gone" and result.record == over["record"] and result.score == 0.0
        assert result.reason == over["reason"] and result.seat == 1 - over["winner"]
        await ann.close()
    finally:
        player.go.set()
        bot.cancel()


@pytest.mark.parametrize("held", [False, True], ids=["seeking", "in a room"])
async def test_a_bot_whose_every_login_is_dropped_at_once_gives_up_after_its_attempts(held):
    """A server that takes the login, sends what a server sends again at each login (the seat the bot holds) and
    drops the connection: a session in which no game went on does not start the count of attempts again (counted from
    each login, or from any message, the bot tried every quarter second for ever), so the bot gives up after its
    attempts in a row, as with no server at all."""
    import json

    from websockets.asyncio.server import serve

    from protocol.codec import JSON

    logins = 0

    async def drop_after_login(ws: Any) -> None:
        nonlocal logins
        async for raw in ws:
            msg = json.loads(raw)
            if msg["type"] == "login":
                logins += 1
                await ws.send(json.dumps({"type": "welcome", "id": msg["id"], "name": msg["name"],
                                          "rooms": ["Held"] if held else [], "resume": "token"}))
                if held:
                    await ws.send(json.dumps({"type": "joined", "room": "Held", "seat": 0}))
                await ws.close()
                return

    async with serve(drop_after_login, "127.0.0.1", 0, subprotocols=[JSON]) as server:
        port = server.sockets[0].getsockname()[1]
        bot = run_player(RandomPlayer(1), RunOptions(
            name="bob", url=f"ws://127.0.0.1:{port}/ws", game="connect4", games=1, max_retries=2, think="thread",
            subprotocol=JSON, **({"room": "Held"} if held else {})))
        with pytest.raises(ConnectionError, match="gave up after 2 reconnection attempts"):
            await asyncio.wait_for(bot, 60)
    assert logins == 3


def test_the_game_s_number_goes_only_to_a_server_that_takes_it():
    """A server from before ``game_no`` refuses a move that carries it (an unknown field), so a bot of today lost
    every game there on time: the number is sent only where ``welcome.features`` names it, as today's server does."""
    from client.connection import Client as Connection
    from client.play_loop import _game_no
    from protocol.messages import FEATURES

    room = {"game_no": 3}
    today, older = Connection("ws://127.0.0.1:1/ws"), Connection("ws://127.0.0.1:1/ws")
    today.welcome = {"type": "welcome", "features": list(FEATURES)}
    older.welcome = {"type": "welcome"}  # (no features: every field it takes is the base protocol's)
    assert _game_no(today, room) == {"game_no": 3} and _game_no(older, room) == {}


@pytest.mark.parametrize(("script", "said"), [
    ('from client.sdk import run\n\ndef choose(turn):\n    return None\n\n'
     'run(choose, name="noguard", game="connect4", url="ws://127.0.0.1:9/ws")\n',
     'a script that calls run() must call it under `if __name__ == "__main__":`'),
    ('from client.sdk import run\n\nif __name__ == "__main__":\n'
     '    run(lambda turn: None, name="lam", game="connect4", url="ws://127.0.0.1:9/ws")\n',
     'the player cannot be sent to its thinking process'),
])
def test_a_script_s_usual_mistakes_end_in_a_line_that_says_what_to_do(tmp_path, script: str, said: str):
    """A script without the ``__main__`` guard ended in ``ConnectionResetError: Connection reset by peer`` (read as a
    network fault), and a lambda player in a raw ``PicklingError``: each ends in a line that says what to change."""
    from pathlib import Path

    (tmp_path / "mybot.py").write_text(script, encoding="utf-8")
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "mybot.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode != 0 and said in done.stderr.strip().splitlines()[-1], done.stderr[-1500:]


async def test_a_bot_stuck_in_its_search_gives_up_as_soon_as_its_game_ends(server, url, tmp_path):
    """A search that never ends was waited for until the clock and a grace of 2 s were over, whatever the server
    said: in a series, the next game's time. The bot now gives up the turn as soon as its game's end arrives, and a
    fresh thinking process plays the next game."""
    statuses: list[str] = []
    series = dict(game="connect4", room="Stuck", games=2, room_options={"games": 2, "time_control": {"per_move": 3}})
    stuck = run_player(HangsOnce(str(tmp_path / "hung")), RunOptions(name="stuck", url=next_url(url),
                                                                     on_status=statuses.append, **series))
    other = run_player(RandomPlayer(3), RunOptions(name="other", url=next_url(url), think="thread", **series))
    results, _ = await asyncio.wait_for(asyncio.gather(stuck, other), 120)
    assert len(results) == 2 and results[0].reason == "stuck ran out of time", results
    assert any("its game ended while it thought" in line for line in statuses), statuses
    assert not any("did not answer within" in line for line in statuses), statuses
