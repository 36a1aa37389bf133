"""The client SDK: talk to a Plyhall server, and run a bot on it.

Two layers:

* :class:`Client` — one connection: connect with a subprotocol, log in, send
  requests and wait for replies or pushes. The server's tests use it too.
* :func:`run_player` / :func:`run` — everything a bot needs: log in, create or
  join a room, follow the game, call :meth:`Player.choose` in a worker process
  when it is the bot's turn (so keepalive pings are answered while it thinks),
  send the move, go on to the next game, and reconnect with backoff after a
  dropped connection, resuming the seat.

A complete bot::

    import random
    from client.sdk import Player, run

    class Random(Player):
        def choose(self, turn):
            return random.choice(turn.legal_moves)

    run(Random(), name="rando", secret="s3cret", game="connect4")
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import logging
import multiprocessing
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from protocol.codec import JSON, MSGPACK, Codec, codec_for
from protocol.games import Game, IllegalMove, get_game

log = logging.getLogger("plyhall.client")

DEFAULT_URL = "ws://127.0.0.1:8765/ws"
FINISHED_ROOM_RETRIES = 100  # tenths of a second to wait for a finished named room to empty


class ServerError(Exception):
    """The server answered a request with an ``error`` message."""

    def __init__(self, msg: dict[str, Any]) -> None:
        super().__init__(f"{msg.get('code')}: {msg.get('message')}")
        self.code = msg.get("code", "")
        self.message = msg.get("message", "")
        self.msg = msg


class Client:
    """One connection to a Plyhall server.

    Messages that are not a reply to a pending request are kept in order and
    read with :meth:`recv` / :meth:`expect`.
    """

    def __init__(self, url: str = DEFAULT_URL, subprotocol: str | None = MSGPACK) -> None:
        self.url = url
        self.subprotocol = subprotocol
        self.ws: ClientConnection | None = None
        self.codec: Codec = codec_for(subprotocol)
        self.name: str | None = None
        self.coords = "algebraic"
        self.welcome: dict[str, Any] = {}
        self._ids = itertools.count(1)
        self._pending: dict[Any, asyncio.Future] = {}
        self._inbox: deque[dict[str, Any]] = deque()
        self._arrived = asyncio.Event()
        self._reader: asyncio.Task | None = None
        self.closed = asyncio.Event()

    async def connect(self, **kwargs: Any) -> Client:
        """Open the WebSocket (kwargs go to ``websockets.connect``)."""
        protocols = [self.subprotocol] if self.subprotocol else None
        self.ws = await connect(self.url, subprotocols=protocols, compression=None, max_size=2**22, **kwargs)
        self.codec = codec_for(self.ws.subprotocol)
        self._reader = asyncio.create_task(self._read())
        return self

    async def _read(self) -> None:
        assert self.ws is not None
        try:
            async for data in self.ws:
                msg = self.codec.decode(data)
                if not isinstance(msg, dict):
                    log.warning("undecodable message from server: %r", msg)
                    continue
                future = self._pending.pop(msg.get("id"), None) if "id" in msg else None
                if future is not None and not future.done():
                    future.set_result(msg)
                    if msg.get("type") not in ("error", "pong", "rooms", "room", "legal_moves", "welcome"):
                        self._inbox.append(msg)  # replies that are also events stay visible to the reader
                        self._arrived.set()
                    continue
                self._inbox.append(msg)
                self._arrived.set()
        except ConnectionClosed:
            pass
        finally:
            self.closed.set()
            self._arrived.set()
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("connection closed"))

    async def send(self, msg: dict[str, Any]) -> None:
        """Send one message as is."""
        if self.ws is None:
            raise ConnectionError("not connected")
        await self.ws.send(self.codec.encode(msg))

    async def send_raw(self, data: bytes | str) -> None:
        """Send bytes or text without encoding (for robustness tests)."""
        assert self.ws is not None
        await self.ws.send(data)

    async def request(self, msg: dict[str, Any], timeout: float = 10.0, check: bool = True) -> dict[str, Any]:
        """Send ``msg`` with a fresh id and wait for the reply; raises ServerError on an error reply."""
        msg = dict(msg)
        msg["id"] = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self._pending[msg["id"]] = future
        await self.send(msg)
        reply = await asyncio.wait_for(future, timeout)
        if check and reply.get("type") == "error":
            raise ServerError(reply)
        return reply

    async def recv(self, timeout: float | None = 10.0) -> dict[str, Any]:
        """The next pushed message; ConnectionError once the connection is closed and drained."""
        while not self._inbox:
            if self.closed.is_set():
                raise ConnectionError("connection closed")
            self._arrived.clear()
            await asyncio.wait_for(self._arrived.wait(), timeout)
        return self._inbox.popleft()

    async def expect(self, kind: str, timeout: float = 10.0, **match: Any) -> dict[str, Any]:
        """Skip pushed messages until one of type ``kind`` (with fields equal to ``match``) arrives."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            msg = await self.recv(max(0.001, deadline - loop.time()))
            if msg.get("type") == kind and all(msg.get(k) == v for k, v in match.items()):
                return msg

    async def login(self, name: str, secret: str | None = None, coords: str = "algebraic") -> dict[str, Any]:
        """Log in; returns the ``welcome`` message."""
        msg: dict[str, Any] = {"type": "login", "name": name, "coords": coords, "client": "plyhall-sdk"}
        if secret is not None:
            msg["secret"] = secret
        self.welcome = await self.request(msg)
        self.name = name
        self.coords = coords
        return self.welcome

    async def close(self) -> None:
        """Close the connection."""
        if self.ws is not None:
            await self.ws.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)

    async def __aenter__(self) -> Client:
        return await self.connect()

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


@dataclass
class Turn:
    """What a bot sees when it is its turn: the reference-rules state and its clock."""

    game: Game
    state: Any
    seat: int
    room: str
    players: list[str]
    moves: list[str]
    time_left: float | None
    per_move: float | None
    increment: float
    _legal: list[Any] | None = field(default=None, repr=False)

    @property
    def legal_moves(self) -> list[Any]:
        """The legal moves (reference-rules move values)."""
        if self._legal is None:
            self._legal = self.game.legal_moves(self.state)
        return self._legal

    @property
    def opponent(self) -> str:
        """The other player's name."""
        return self.players[1 - self.seat]


class Player:
    """Subclass and write :meth:`choose`; everything else is done for you."""

    def choose(self, turn: Turn) -> Any:
        """Return a move: a reference move value, notation text, or the structured form."""
        raise NotImplementedError


class FunctionPlayer(Player):
    """Wraps a plain function ``turn -> move`` (it must be picklable: a module-level function)."""

    def __init__(self, func: Callable[[Turn], Any]) -> None:
        self.func = func

    def choose(self, turn: Turn) -> Any:
        """Call the function."""
        return self.func(turn)


@dataclass
class GameResult:
    """One finished game as the bot saw it."""

    room: str
    seat: int | None
    winner: int | None
    reason: str
    players: list[str]
    record: str | None

    @property
    def score(self) -> float:
        """1 for a win, 0.5 for a draw, 0 for a loss (from the bot's seat)."""
        if self.winner is None:
            return 0.5
        return 1.0 if self.winner == self.seat else 0.0


# The worker process keeps one player, created once, so it may keep state between moves.
_worker_player: Player | None = None


def _init_worker(player: Player | Callable[[], Player]) -> None:
    global _worker_player
    _worker_player = player() if callable(player) and not isinstance(player, Player) else player


def _think(turn: Turn) -> Any:
    assert _worker_player is not None
    return _worker_player.choose(turn)


class Thinker:
    """Runs a player's ``choose`` outside the event loop: in a worker process (default) or a thread."""

    def __init__(self, player: Player | Callable[[], Player], mode: str = "process") -> None:
        if mode not in ("process", "thread"):
            raise ValueError("think mode is 'process' or 'thread'")
        self.mode = mode
        self.player = player
        if mode == "process":
            context = multiprocessing.get_context("spawn")
            self.pool: concurrent.futures.Executor = concurrent.futures.ProcessPoolExecutor(
                1, mp_context=context, initializer=_init_worker, initargs=(player,))
        else:
            self.local = player() if callable(player) and not isinstance(player, Player) else player
            self.pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="plyhall-think")

    async def choose(self, turn: Turn) -> Any:
        """The player's move for ``turn``."""
        loop = asyncio.get_running_loop()
        if self.mode == "process":
            return await loop.run_in_executor(self.pool, _think, turn)
        return await loop.run_in_executor(self.pool, self.local.choose, turn)

    def close(self) -> None:
        """Stop the worker."""
        self.pool.shutdown(wait=False, cancel_futures=True)


@dataclass
class RunOptions:
    """How :func:`run_player` finds its games."""

    name: str
    secret: str | None = None
    url: str = DEFAULT_URL
    game: str | None = None
    room: str | None = None
    games: int | None = None  # stop after this many games; None plays on
    coords: str = "algebraic"
    subprotocol: str = MSGPACK
    room_options: dict[str, Any] = field(default_factory=dict)  # for rooms this bot creates
    think: str = "process"
    max_retries: int = 8  # reconnection attempts in a row before giving up
    on_result: Callable[[GameResult], None] | None = None
    on_event: Callable[[dict[str, Any]], None] | None = None


class PlayerRunner:
    """The play loop of one bot (see :func:`run_player`)."""

    def __init__(self, player: Player | Callable[[], Player], options: RunOptions) -> None:
        if options.game is not None:
            get_game(options.game)  # KeyError naming the games
        if options.room is None and options.game is None:
            raise ValueError("give a room to join, or a game to find or create a room for")
        self.options = options
        self.thinker = Thinker(player, options.think)
        self.results: list[GameResult] = []
        self.client: Client | None = None
        self.rooms: dict[str, dict[str, Any]] = {}  # room -> {game, state, seat, players, clocks, seq}
        self.current_room: str | None = None
        self.finished = False

    async def run(self) -> list[GameResult]:
        """Play until the wanted number of games is done; reconnects after drops."""
        failures = 0
        try:
            while not self.finished:
                try:
                    await self._session()
                    failures = 0
                except (TimeoutError, OSError, ConnectionError, ConnectionClosed, InvalidHandshake) as exc:
                    if self.finished:
                        break
                    failures += 1
                    if failures > self.options.max_retries:
                        raise ConnectionError(f"gave up after {failures - 1} reconnection attempts: {exc}") from exc
                    delay = min(10.0, 0.25 * 2 ** (failures - 1)) * (0.75 + random.random() / 2)
                    log.warning("connection lost (%s); reconnecting in %.1fs", exc, delay)
                    await asyncio.sleep(delay)
                except InvalidURI as exc:
                    raise ValueError(f"bad server URL {self.options.url!r}: {exc}") from None
        finally:
            self.thinker.close()
        return self.results

    async def _session(self) -> None:
        opts = self.options
        client = Client(opts.url, opts.subprotocol)
        self.client = client
        await client.connect()
        try:
            welcome = await client.login(opts.name, opts.secret, opts.coords)
            if not welcome.get("rooms"):
                await self._find_room(client)
            while not self.finished:
                msg = await client.recv(timeout=None)
                await self._on_message(client, msg)
        finally:
            await client.close()

    async def _find_room(self, client: Client) -> None:
        opts = self.options
        if opts.room is not None:
            # A finished room lingers until everybody has left it, and is then removed, so
            # the next game can be set up under the same name: wait (briefly) for that.
            for attempt in range(FINISHED_ROOM_RETRIES + 1):
                try:
                    await client.request({"type": "join", "room": opts.room})
                    return
                except ServerError as exc:
                    if exc.code == "game_not_running" and attempt < FINISHED_ROOM_RETRIES:
                        await asyncio.sleep(0.1)
                        continue
                    if exc.code != "no_such_room" or opts.game is None:
                        raise
                break
            await self._create(client, opts.room)
            return
        listing = await client.request({"type": "list_rooms", "game": opts.game})
        for room in listing["rooms"]:
            if room["status"] == "waiting" and None in room["seats"] and opts.name not in room["seats"]:
                try:
                    await client.request({"type": "join", "room": room["name"]})
                    return
                except ServerError:
                    continue
        await self._create(client, None)

    async def _create(self, client: Client, name: str | None) -> None:
        msg: dict[str, Any] = {"type": "create_room", "game": self.options.game, **self.options.room_options}
        if name is not None:
            msg["name"] = name
        try:
            reply = await client.request(msg)
        except ServerError as exc:
            if exc.code != "room_exists" or name is None:
                raise
            await client.request({"type": "join", "room": name})
            return
        await client.request({"type": "join", "room": reply["room"]["name"]})

    async def _on_message(self, client: Client, msg: dict[str, Any]) -> None:
        if self.options.on_event is not None:
            self.options.on_event(msg)
        kind = msg.get("type")
        if kind == "game_start":
            game = get_game(msg["game"])
            self.rooms[msg["room"]] = {
                "game": game, "state": game.decode_state(msg["state"], client.coords), "seat": msg["seat"],
                "players": msg["players"], "clocks": msg["clocks"], "moves": list(msg["moves"]),
                "to_move": msg["to_move"],
            }
            await self._maybe_move(client, msg["room"])
        elif kind == "moved":
            room = self.rooms.get(msg["room"])
            if room is None:
                return
            game = room["game"]
            move = game.parse_move(msg["move"], room["state"], client.coords)
            room["state"] = game.apply(room["state"], move)
            room["moves"].append(msg["notation"])
            room["clocks"] = msg["clocks"]
            room["to_move"] = msg["to_move"]
            await self._maybe_move(client, msg["room"])
        elif kind == "game_over":
            room = self.rooms.pop(msg["room"], None)
            seat = room["seat"] if room else None
            result = GameResult(msg["room"], seat, msg["winner"], msg["reason"], msg["players"], msg.get("record"))
            if seat is not None:
                self.results.append(result)
                if self.options.on_result is not None:
                    self.options.on_result(result)
            if self.options.games is not None and len(self.results) >= self.options.games:
                self.finished = True
                await client.request({"type": "leave", "room": msg["room"]}, check=False)
            elif not msg.get("next_game"):
                await client.request({"type": "leave", "room": msg["room"]}, check=False)
                await self._find_room(client)
        elif kind == "error":
            log.warning("server error: %s %s", msg.get("code"), msg.get("message"))
            if msg.get("code") == "illegal_move":
                raise IllegalMove(msg.get("message", "illegal move"))

    async def _maybe_move(self, client: Client, room_name: str) -> None:
        room = self.rooms[room_name]
        seat = room["seat"]
        if seat is None or room["to_move"] != seat:
            return
        control = room["clocks"].get("control", {})
        turn = Turn(
            game=room["game"], state=room["state"], seat=seat, room=room_name, players=room["players"],
            moves=list(room["moves"]), time_left=room["clocks"]["left"][seat],
            per_move=control.get("per_move"), increment=control.get("increment", 0.0),
        )
        seq = len(room["moves"])
        move = await self.thinker.choose(turn)
        if self.rooms.get(room_name) is not room or len(room["moves"]) != seq:
            return  # the game moved on while we thought (resumed, timed out, ended)
        game = room["game"]
        if isinstance(move, game._move_types()):
            form: Any = game.format_move(move, client.coords)
        else:
            form = move
        await client.send({"type": "move", "room": room_name, "move": form})


async def run_player(player: Player | Callable[[], Player], options: RunOptions) -> list[GameResult]:
    """Run ``player`` on a server until ``options.games`` games are done (forever if None)."""
    return await PlayerRunner(player, options).run()


def run(player: Player | Callable[[Turn], Any], name: str, **options: Any) -> list[GameResult]:
    """Blocking convenience wrapper: ``run(MyBot(), name="me", game="connect4")``."""
    if not isinstance(player, Player):
        player = FunctionPlayer(player)
    return asyncio.run(run_player(player, RunOptions(name=name, **options)))


__all__ = ["Client", "FunctionPlayer", "GameResult", "JSON", "MSGPACK", "Player", "RunOptions", "ServerError",
           "Turn", "run", "run_player"]
