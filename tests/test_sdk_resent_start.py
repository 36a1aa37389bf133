"""A bot whose game's state comes again while it thinks (the server sends a running game's ``game_start`` anew when the
bot comes back to its seat: a dropped connection, a restarted server, a cluster that attaches its session again) keeps
the move it chose when the game and its position are the same: its player is asked once a turn, and the move it chose
is the one played, sent once on the connection the server reads."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from client.connection import Client
from client.play_loop import PlayerRunner
from client.sdk import Player, RunOptions, Turn
from server.io.server import PlyhallServer
from server.storage import SQLiteStorage
from tests.conftest import free_port
from tests.helpers import login, wait_until

ROOM = "Resent"
UNTIMED = {"grace": 60, "time_control": {"untimed": True}}

Log = list[tuple[Any, ...]]


class CountingPlayer(Player):
    """Thinks in a thread, held until ``go`` is set; notes each position it is asked about (the moves played before
    it) with the notation of the move it chose. Each call chooses another legal move than the call before, so that a
    second think about one turn would show in the move played."""

    def __init__(self) -> None:
        self.thinking = threading.Event()
        self.go = threading.Event()
        self.calls: list[tuple[list[str], str]] = []

    def choose(self, turn: Turn) -> Any:
        move = turn.legal_moves[len(self.calls) % len(turn.legal_moves)]
        self.calls.append((list(turn.moves), turn.game.notation(move)))
        self.thinking.set()
        assert self.go.wait(30), "never let go"
        return move

    def asked(self, moves: list[str]) -> list[str]:
        """The moves chosen for the position after ``moves``, one a call."""
        return [chosen for before, chosen in self.calls if before == moves]


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch) -> Log:
    """What bob's bot does, in order: ``("event", msg)`` for each message it handles (its ``on_event``) and
    ``("send", client, msg, sent)`` for each message it sends (``sent``: the send did not fail)."""
    log: Log = []
    original = Client.send

    async def send(self: Client, msg: dict[str, Any]) -> None:
        if self.name != "bob":
            await original(self, msg)
            return
        try:
            await original(self, msg)
        except BaseException:
            log.append(("send", self, msg, False))
            raise
        log.append(("send", self, msg, True))

    monkeypatch.setattr(Client, "send", send)
    return log


def moves_sent(log: Log, sent: bool | None = True) -> list[tuple[Client, Any]]:
    """The moves bob's bot sent (``sent=None``: tried to send, even on a connection that had ended), with the client
    each went by."""
    return [(entry[1], entry[2]["move"]) for entry in log
            if entry[0] == "send" and entry[2]["type"] == "move" and (sent is None or entry[3] == sent)]


def errors(log: Log) -> list[dict[str, Any]]:
    """The errors bob's bot was sent (a second move for one turn, or a move in a paused game, would be one)."""
    return [entry[1] for entry in log if entry[0] == "event" and entry[1]["type"] == "error"]


def start_bob(player: CountingPlayer, url: str, log: Log) -> tuple[PlayerRunner, asyncio.Task]:
    """bob's bot, in room ``ROOM`` (which it sets up), thinking in a thread; the messages it handles go to ``log``."""
    runner = PlayerRunner(player, RunOptions(name="bob", secret="pw", url=url, game="connect4", room=ROOM, games=1,
                                             think="thread", room_options=UNTIMED,
                                             on_event=lambda msg: log.append(("event", msg))))
    return runner, asyncio.create_task(runner.run())


async def bob_thinks(srv: PlyhallServer, url: str, player: CountingPlayer) -> tuple[Client, list[str]]:
    """ann joins bob's room (moving first if she is to) and waits until bob's bot thinks: her client, and the moves
    played before bob's turn."""
    await wait_until(lambda: ROOM in srv.hall.rooms, "bob's bot set up its room")
    ann = await login(url, "ann", secret="pw2")
    await ann.request({"type": "join", "room": ROOM})
    start = await ann.expect("game_start", room=ROOM)
    if start["to_move"] == start["seat"]:
        await ann.send({"type": "move", "room": ROOM, "move": "4"})
    await wait_until(player.thinking.is_set, "bob's bot thinks")
    return ann, list(player.calls[0][0])


@dataclass
class Thinking:
    """bob's bot thinking about its first turn in ``ROOM`` on ``srv``, against ann."""

    player: CountingPlayer
    runner: PlayerRunner
    bot: asyncio.Task
    ann: Client
    before: list[str]  # the moves played before bob's turn
    client: Client  # the bot's connection as it thinks


@asynccontextmanager
async def bob_thinking(srv: PlyhallServer, wire: Log) -> AsyncIterator[Thinking]:
    """bob's bot, on ``srv``, once it thinks about its first turn (ann seated against it); stopped at the end."""
    player = CountingPlayer()
    runner, bot = start_bob(player, f"ws://127.0.0.1:{srv.port}/ws", wire)
    try:
        ann, before = await bob_thinks(srv, f"ws://127.0.0.1:{srv.port}/ws", player)
        assert runner.client is not None
        yield Thinking(player, runner, bot, ann, before, runner.client)
    finally:
        player.go.set()
        bot.cancel()
        await asyncio.gather(bot, return_exceptions=True)


def send_state_again(srv: PlyhallServer) -> None:
    """The server sends bob the running game's whole state again (a ``game_start``), on his connection."""
    srv.handle(srv.connections[srv.hall.by_name["bob"].conn], {"type": "state", "room": ROOM}, time.monotonic())


async def finish(ann: Client, bot: asyncio.Task, log: Log) -> None:
    """ann resigns: bob's bot ends with its one game won, and was never sent an error."""
    await ann.request({"type": "resign", "room": ROOM})
    [result] = await asyncio.wait_for(bot, 30)
    assert result.winner == result.seat and result.reason == "ann resigned"
    assert not errors(log), errors(log)
    await ann.close()


async def test_a_bot_whose_connection_drops_while_it_thinks_plays_the_move_it_chose_once_back(one_server, wire):
    """The connection drops while bob's bot thinks; the bot comes back and the server sends the game's state again,
    the same position: the move the bot chose is played, and its player was asked once (it was asked again, its
    first search thrown away)."""
    srv = one_server
    async with bob_thinking(srv, wire) as bob:
        srv.connections[srv.hall.by_name["bob"].conn].ws.transport.abort()
        await wait_until(bob.client.closed, "bob's bot saw its connection end")
        bob.player.go.set()
        room = srv.hall.rooms[ROOM]
        await wait_until(lambda: bob.bot.done() or len(room.moves) > len(bob.before), "bob's move played")
        assert not bob.bot.done(), bob.bot.exception()
        assert bob.player.asked(bob.before) == [room.moves[len(bob.before)].notation], bob.player.calls
        [(by, _)] = moves_sent(wire)
        assert by is not bob.client and by is bob.runner.client, "sent once, on the new connection"
        await finish(bob.ann, bob.bot, wire)


async def test_a_game_start_resent_on_the_same_connection_while_the_bot_thinks_keeps_its_move(one_server, wire):
    """The server sends the running game's state again on bob's connection while his bot thinks (what a cluster does
    when it attaches his session again): the bot sends the move it chose, once, and does not think again when it
    reads that state; the game goes on (a second move for the turn would be refused with an error)."""
    srv = one_server
    async with bob_thinking(srv, wire) as bob:
        send_state_again(srv)
        await wait_until(lambda: any(m["type"] == "game_start" for m in bob.client.unread(ROOM)),
                         "the game's state waits unread while bob's bot thinks")
        bob.player.go.set()
        room = srv.hall.rooms[ROOM]
        await wait_until(lambda: len(room.moves) > len(bob.before), "bob's move played")
        # ann moves: bob's bot, asked about its next turn, has handled everything sent before (an error included)
        after = [m.notation for m in room.moves]
        await bob.ann.send({"type": "move", "room": ROOM, "move": "1" if after[-1] != "1" else "2"})
        await wait_until(lambda: len(bob.player.calls) == 2, "bob's bot thinks about its next turn")
        assert bob.player.asked(bob.before) == [after[len(bob.before)]], bob.player.calls
        assert not errors(wire), errors(wire)
        anns = next(i for i, e in enumerate(wire) if e[0] == "event" and e[1]["type"] == "moved"
                    and e[1]["seq"] == len(after) + 1)
        assert [by for by, _ in moves_sent(wire[:anns], sent=None)] == [bob.client], "one move sent for the turn"
        await finish(bob.ann, bob.bot, wire)


async def test_a_move_lost_on_its_way_is_sent_again_when_the_game_s_state_comes_after_it(one_server, wire):
    """bob's move never reaches the room (a cluster node that lost it on its way, with no error to say so), and the
    game's state then comes again on the same connection, the same position (the cluster attached his session again):
    the bot sends the move it chose again, unasked, and it is played (it waited, and would have lost on time)."""
    srv = one_server
    original, lost = srv.handle, []

    def handle(connection: Any, msg: Any, now: float, on_credit: bool = False) -> None:
        if msg["type"] == "move" and connection.id == srv.hall.by_name["bob"].conn and not lost:
            lost.append(msg)  # the first move bob sends goes nowhere
            return
        original(connection, msg, now, on_credit)

    srv.handle = handle  # type: ignore[method-assign]
    async with bob_thinking(srv, wire) as bob:
        bob.player.go.set()
        await wait_until(lambda: lost, "bob's move was lost")
        room = srv.hall.rooms[ROOM]
        assert len(room.moves) == len(bob.before)
        send_state_again(srv)
        await wait_until(lambda: bob.bot.done() or len(room.moves) > len(bob.before), "bob's move played")
        assert not bob.bot.done(), bob.bot.exception()
        assert bob.player.asked(bob.before) == [room.moves[len(bob.before)].notation], bob.player.calls
        assert [by for by, _ in moves_sent(wire)] == [bob.client, bob.client], "sent again on the same connection"
        await finish(bob.ann, bob.bot, wire)


async def test_a_bot_back_in_a_paused_game_after_a_restart_plays_its_move_when_the_game_resumes(db_path: Path, wire):
    """The server restarts while bob's bot thinks. Back, the bot finds the game paused (ann is not back yet) and sends
    nothing; once ann is back the game resumes and the move the bot chose is played, its player asked once."""
    port = free_port()
    srv = PlyhallServer(SQLiteStorage(db_path), host="127.0.0.1", port=port)
    await srv.start()
    again: PlyhallServer | None = None

    def paused_starts() -> int:
        return sum(1 for e in wire if e[0] == "event" and e[1]["type"] == "game_start" and e[1].get("paused"))

    try:
        async with bob_thinking(srv, wire) as bob:
            await bob.ann.close()
            await srv.stop()
            again = PlyhallServer(SQLiteStorage(db_path), host="127.0.0.1", port=port)
            await again.start()
            assert again.restored[1] == 1, "the running game was kept"
            bob.player.go.set()
            await wait_until(lambda: bob.bot.done() or paused_starts() == 1, "bob's bot back in the paused game")
            assert not bob.bot.done(), bob.bot.exception()
            # the game's state once more: once the bot reads it, it has handled the first (and sent what it sent then)
            send_state_again(again)
            await wait_until(lambda: paused_starts() == 2, "bob's bot read the paused game's state again")
            assert not moves_sent(wire), "no move sent to a paused game"
            room = again.hall.rooms[ROOM]
            assert len(room.moves) == len(bob.before) and room.paused
            ann = await login(f"ws://127.0.0.1:{port}/ws", "ann", secret="pw2")  # both back: the game resumes
            await wait_until(lambda: len(room.moves) > len(bob.before), "bob's move played")
            assert bob.player.asked(bob.before) == [room.moves[len(bob.before)].notation], bob.player.calls
            assert [by for by, _ in moves_sent(wire)] == [bob.runner.client], "one move sent, once the game resumed"
            await finish(ann, bob.bot, wire)
    finally:
        await srv.stop()
        if again is not None:
            await again.stop()
