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
import signal
import socket
import ssl
import time
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

from protocol.codec import JSON, MSGPACK, Codec, codec_for
from protocol.games import Game, IllegalMove, get_game

log = logging.getLogger("plyhall.client")

DEFAULT_URL = "ws://127.0.0.1:8765/ws"
FINISHED_ROOM_RETRIES = 100  # tenths of a second to wait for a finished named room to empty
TOURNAMENT_POLL = 2.0  # seconds between two looks for a tournament that does not exist yet


class ServerError(Exception):
    """The server answered a request with an ``error`` message."""

    def __init__(self, msg: dict[str, Any]) -> None:
        super().__init__(f"{msg.get('code')}: {msg.get('message')}")
        self.code = msg.get("code", "")
        self.message = msg.get("message", "")
        self.msg = msg


class ServerURLError(ValueError):
    """The server address is not a Plyhall WebSocket address; the message says how to write it."""


class NoServer(ConnectionError):
    """Nothing answered at the address (connection refused, unknown host): no server runs there."""


class TakenOver(ConnectionError):
    """The server closed this connection because the same name logged in from another connection."""


class CannotPlay(Exception):
    """The bot cannot play what it was asked to (a tournament or room of another game, a tournament it is no
    entrant of): the message says what is wrong and what would work."""


class TryLater(ConnectionError):
    """The server asked to try again later (a login throttled or queued, too many connections from this address):
    the bot reconnects after ``delay`` seconds."""

    def __init__(self, reason: str, delay: float) -> None:
        super().__init__(reason)
        self.delay = delay


TAKEOVER_REASON = "logged in from another connection"


def check_url(url: str) -> str:
    """``url`` if it looks like a Plyhall WebSocket address, else :class:`ServerURLError` saying what to use."""
    if not isinstance(url, str) or not url.strip():
        raise ServerURLError(f"no server address given; use {DEFAULT_URL}")
    parts = urlsplit(url)
    if parts.scheme in ("http", "https"):
        fixed = urlunsplit(("ws" if parts.scheme == "http" else "wss", parts.netloc, parts.path or "/ws", "", ""))
        raise ServerURLError(f"{url} is a web address; bots connect to the WebSocket address: use {fixed} "
                             "(ws://HOST:PORT/ws)")
    if parts.scheme not in ("ws", "wss") or not parts.netloc:
        guess = "ws://" + url.split("://", 1)[-1].lstrip("/")
        if not urlsplit(guess).path:
            guess += "/ws"
        raise ServerURLError(f"{url} has no ws:// scheme; use {guess} (ws://HOST:PORT/ws)")
    return url


def describe_connect_error(url: str, exc: BaseException, connected_before: bool) -> tuple[str, bool]:
    """One clear line about why connecting to ``url`` failed, and whether trying again is pointless
    (the address is wrong, not the server away)."""
    parts = urlsplit(url)
    if isinstance(exc, InvalidStatus):
        status = exc.response.status_code
        if status in (429, 503):
            body = bytes(exc.response.body or b"").decode(errors="replace").strip()
            return f"the server at {url} is busy (HTTP {status}{': ' + body[:160] if body else ''})", False
        if status == 404 and not parts.path.rstrip("/").endswith("/ws"):
            fixed = urlunsplit((parts.scheme, parts.netloc, "/ws", "", ""))
            return f"the server at {url} has no WebSocket endpoint there: add /ws ({fixed})", True
        return f"the server at {url} refused the WebSocket handshake (HTTP {status})", True
    if parts.scheme == "wss" and not connected_before and isinstance(
            exc, (ssl.SSLError, ConnectionResetError, EOFError, InvalidHandshake)):
        plain = urlunsplit(("ws", parts.netloc, parts.path, parts.query, ""))
        return (f"the TLS handshake with {parts.netloc} failed: wss:// needs a server behind TLS; a plain "
                f"Plyhall server speaks ws://: use {plain}"), True
    if isinstance(exc, (ConnectionRefusedError, socket.gaierror)) or (
            isinstance(exc, OSError) and not isinstance(exc, ConnectionError) and not connected_before):
        what = "unknown host" if isinstance(exc, socket.gaierror) else "connection refused"
        return f"no server at {url} ({what}); start one with `plyhall serve`, or check --url", False
    if isinstance(exc, InvalidHandshake):
        return f"{url} did not answer like a WebSocket server ({exc})", True
    return f"connection lost ({exc or type(exc).__name__})", False


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
        self.resume: str | None = None  # the token of the latest welcome: proves this identity next time
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

    @property
    def taken_over(self) -> bool:
        """True when the server closed this connection because the name logged in elsewhere."""
        return self.ws is not None and self.ws.close_reason == TAKEOVER_REASON

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
                    if msg.get("type") not in ("error", "pong", "rooms", "room", "legal_moves", "welcome",
                                               "seeking", "seek_cancelled"):
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
            error = TakenOver(TAKEOVER_REASON) if self.taken_over else ConnectionError("connection closed")
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(error)

    async def send(self, msg: dict[str, Any]) -> None:
        """Send one message as is."""
        if self.ws is None:
            raise ConnectionError("not connected")
        await self.ws.send(self.codec.encode(msg))

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
        """The next pushed message; ConnectionError (TakenOver after a takeover) once closed and drained."""
        while not self._inbox:
            if self.closed.is_set():
                raise TakenOver(TAKEOVER_REASON) if self.taken_over else ConnectionError("connection closed")
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

    async def login(self, name: str, secret: str | None = None, coords: str = "algebraic",
                    resume: str | None = None, **extra: Any) -> dict[str, Any]:
        """Log in; returns the ``welcome`` message (its ``resume`` token is kept in :attr:`resume`)."""
        msg: dict[str, Any] = {"type": "login", "name": name, "coords": coords, "client": "plyhall-sdk", **extra}
        if secret is not None:
            msg["secret"] = secret
        if resume is not None:
            msg["resume"] = resume
        self.welcome = await self.request(msg)
        self.name = name
        self.coords = coords
        self.resume = self.welcome.get("resume")
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

    def warm_up(self) -> str | None:
        """Get ready to play before the bot logs in (load or compile an engine, read a book): called once, in
        the thinking process. Returns what was warmed up, for the bot's output (None: nothing to say)."""
        return None


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
    status: str = "finished"  # finished (played), forfeit (somebody never came) or aborted (no result)

    @property
    def played(self) -> bool:
        """True when the game has a result (it was not aborted: a cancelled tournament, nobody came back)."""
        return self.status != "aborted"

    @property
    def opponent(self) -> str:
        """The other player's name."""
        return self.players[1 - self.seat] if self.seat is not None else "?"

    @property
    def score(self) -> float:
        """1 for a win, 0.5 for a draw, 0 for a loss (from the bot's seat)."""
        if self.winner is None:
            return 0.5
        return 1.0 if self.winner == self.seat else 0.0


def _make(player: Player | Callable[[], Player]) -> Player:
    return player() if callable(player) and not isinstance(player, Player) else player


WARM_UP = "warm-up"
"""What the thinking process is sent to warm its player up (instead of a Turn)."""


def _warm_up(player: Player) -> tuple[str | None, float]:
    started = time.perf_counter()
    what = player.warm_up() if hasattr(player, "warm_up") else None
    return what, time.perf_counter() - started


def _worker_main(channel: Any, player: Player | Callable[[], Player]) -> None:
    """The thinking process: one player, created once (so it may keep state between moves)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops this process
    made = _make(player)
    while True:
        try:
            turn = channel.recv()
        except (EOFError, OSError):
            return
        try:
            if isinstance(turn, str) and turn == WARM_UP:
                channel.send(("ready", _warm_up(made)))
            else:
                channel.send(("move", made.choose(turn)))
        except Exception:
            channel.send(("error", traceback.format_exc()))


class Thinker:
    """Runs a player's ``choose`` outside the event loop: in a worker process (default) or a thread.

    The process is a plain ``multiprocessing`` process on a pipe, so stopping the bot (Ctrl-C)
    ends it at once, even in the middle of a search, and leaves nothing behind."""

    def __init__(self, player: Player | Callable[[], Player], mode: str = "process") -> None:
        if mode not in ("process", "thread"):
            raise ValueError("think mode is 'process' or 'thread'")
        self.mode = mode
        self.player = player
        self.pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="plyhall-think")
        self._process: Any = None
        if mode == "process":
            context = multiprocessing.get_context("spawn")
            self._channel, child = context.Pipe()
            self._process = context.Process(target=_worker_main, args=(child, player), daemon=True,
                                            name="plyhall-thinker")
            self._process.start()
            child.close()
        else:
            self.local = _make(player)

    def _ask(self, turn: Turn | str) -> Any:
        self._channel.send(turn)
        try:
            kind, value = self._channel.recv()
        except EOFError:
            raise RuntimeError("the thinking process ended") from None
        if kind == "error":
            raise RuntimeError(f"the bot failed while thinking:\n{value}")
        return value

    async def warm_up(self) -> tuple[str | None, float]:
        """Warm the player up where it thinks (:meth:`Player.warm_up`): what was warmed up, and how long it took."""
        loop = asyncio.get_running_loop()
        if self.mode == "process":
            return await loop.run_in_executor(self.pool, self._ask, WARM_UP)
        return await loop.run_in_executor(self.pool, _warm_up, self.local)

    async def choose(self, turn: Turn) -> Any:
        """The player's move for ``turn``."""
        loop = asyncio.get_running_loop()
        if self.mode == "process":
            return await loop.run_in_executor(self.pool, self._ask, turn)
        return await loop.run_in_executor(self.pool, self.local.choose, turn)

    def close(self) -> None:
        """Stop the worker (at once, even mid-search)."""
        if self._process is not None:
            self._process.terminate()
            self._process.join(5)
            self._channel.close()
            self._process = None
        self.pool.shutdown(wait=False, cancel_futures=True)


@dataclass
class RunOptions:
    """How :func:`run_player` finds its games.

    Without ``room`` the bot *seeks* a game: the server pairs it with another bot seeking the
    same game on the same settings, or keeps the seek until one comes. With ``room`` it joins
    that room, creating it (with ``room_options``) if it does not exist. ``series`` asks for
    rooms of that many games (the seek, or a room this bot creates).
    """

    name: str
    secret: str | None = None
    url: str = DEFAULT_URL
    game: str | None = None
    room: str | None = None
    tournament: str | None = None  # play this tournament's games (seated by the server) until it ends
    games: int | None = None  # stop after this many games; None plays on
    series: int = 1
    coords: str = "algebraic"
    subprotocol: str = MSGPACK
    room_options: dict[str, Any] = field(default_factory=dict)  # for rooms this bot creates, and its seeks
    think: str = "process"
    max_retries: int = 8  # reconnection attempts in a row before giving up
    on_result: Callable[[GameResult], None] | None = None
    on_event: Callable[[dict[str, Any]], None] | None = None
    on_status: Callable[[str], None] | None = None  # what the bot is doing, in a sentence (also logged)


MAX_BACKOFF = 10.0
"""The longest wait between two reconnection attempts, in seconds."""
MAX_WAIT = 300.0
"""The longest wait the bot accepts when the server says to try later (a throttled login), in seconds."""


class PlayerRunner:
    """The play loop of one bot (see :func:`run_player`)."""

    def __init__(self, player: Player | Callable[[], Player], options: RunOptions) -> None:
        if options.game is not None:
            get_game(options.game)  # KeyError naming the games
        if options.room is None and options.game is None and options.tournament is None:
            raise ValueError("give a room to join, a game to find an opponent for, or a tournament to play in")
        check_url(options.url)
        self.options = options
        self.player = player
        self.thinker: Thinker | None = None
        self.results: list[GameResult] = []
        self.client: Client | None = None
        self.rooms: dict[str, dict[str, Any]] = {}  # room -> what the bot follows of its game
        self.finished = False
        self.resume: str | None = None
        self._said = ""
        self._tournament_over = False

    def status(self, text: str) -> None:
        """Say what the bot is doing, once per change (to ``on_status`` and the log)."""
        if text == self._said:
            return
        self._said = text
        log.info("%s: %s", self.options.name, text)
        if self.options.on_status is not None:
            self.options.on_status(text)

    async def run(self) -> list[GameResult]:
        """Play until the wanted number of games is done; reconnects after drops."""
        failures = 0
        connected_before = False
        self.thinker = Thinker(self.player, self.options.think)
        try:
            await self._warm_up()
            while not self.finished:
                try:
                    await self._session()
                    failures = 0
                except TakenOver:
                    raise TakenOver(f"{self.options.name} logged in from another connection (another process "
                                    "with the same name and secret?); this one stops") from None
                except InvalidURI as exc:
                    raise ServerURLError(f"bad server address {self.options.url!r}: {exc}") from None
                except TryLater as exc:  # the server is there and says when: waiting is never a reason to give up
                    delay = min(MAX_WAIT, exc.delay) * (1.0 + random.random() / 4)
                    self.status(f"{exc}; trying again in {delay:.1f} s")
                    await asyncio.sleep(delay)
                except (TimeoutError, OSError, ConnectionError, ConnectionClosed, InvalidHandshake) as exc:
                    if self.finished:
                        break
                    if self.client is not None and self.client.ws is not None:
                        connected_before = True
                    reason, fatal = describe_connect_error(self.options.url, exc, connected_before)
                    if fatal:
                        raise ServerURLError(reason) from None
                    failures += 1
                    if failures > self.options.max_retries:
                        error = NoServer if reason.startswith("no server") else ConnectionError
                        raise error(f"{reason}; gave up after {failures - 1} reconnection attempts") from None
                    delay = min(MAX_BACKOFF, 0.25 * 2 ** (failures - 1)) * (0.75 + random.random() / 2)
                    delay = min(delay, MAX_BACKOFF)
                    self.status(f"{reason}; trying again in {delay:.1f} s")
                    await asyncio.sleep(delay)
        finally:
            self.thinker.close()
        return self.results

    async def _warm_up(self) -> None:
        """Get the player ready before it logs in, so that no clock runs while an engine compiles."""
        assert self.thinker is not None
        what = getattr(self.player, "warms_up", None)
        if what:
            self.status(f"warming up {what}…")
        warmed, seconds = await self.thinker.warm_up()
        if what or warmed:
            self.status(f"{warmed or what} ready in {seconds:.1f} s")

    async def _session(self) -> None:
        opts = self.options
        client = Client(opts.url, opts.subprotocol)
        self.client = client
        try:
            try:
                await client.connect()
            except InvalidStatus as exc:
                if exc.response.status_code == 429:  # too many connections from this address: one may close
                    raise TryLater(describe_connect_error(opts.url, exc, False)[0], 10.0) from None
                raise
            try:
                welcome = await client.login(opts.name, opts.secret, opts.coords, self.resume)
            except ServerError as exc:
                if exc.code in ("throttled", "busy"):
                    raise TryLater(f"the server says: {exc.message}", float(exc.msg.get("retry_after") or 2.0)) \
                        from None
                raise
            self.resume = client.resume
            if opts.tournament is not None or not welcome.get("rooms"):
                await self._find_game(client)  # a tournament entrant follows its event even when seated already
            while not self.finished:
                msg = await client.recv(timeout=None)
                await self._on_message(client, msg)
        finally:
            await client.close()

    async def _find_game(self, client: Client) -> None:
        opts = self.options
        if opts.tournament is not None:
            while True:
                try:
                    reply = await client.request({"type": "watch_tournament", "tournament": opts.tournament})
                except ServerError as exc:
                    if exc.code != "no_such_tournament":
                        raise
                    self.status(f"waiting for the tournament {opts.tournament} to be created")
                    await asyncio.sleep(TOURNAMENT_POLL)
                    continue
                self._check_tournament(reply["tournament"])
                self._tournament_news(reply["tournament"])
                return
        if opts.room is None:
            seek: dict[str, Any] = {"type": "seek", "game": opts.game, "games": opts.series}
            for key in ("options", "time_control"):
                if key in opts.room_options:
                    seek[key] = opts.room_options[key]
            reply = await client.request(seek)
            if reply["type"] == "seeking":
                self.status(describe_seeking(reply))
            return
        # A finished room lingers until everybody has left it, and is then removed, so the
        # next game can be set up under the same name: wait (briefly) for that.
        join: dict[str, Any] = {"type": "join", "room": opts.room}
        if opts.game is not None:
            join["game"] = opts.game
        for attempt in range(FINISHED_ROOM_RETRIES + 1):
            try:
                await self._joined(await client.request(join))
                return
            except ServerError as exc:
                if exc.code == "game_not_running" and attempt < FINISHED_ROOM_RETRIES:
                    self.status(f"{opts.room} is finishing its games; waiting to set it up again")
                    await asyncio.sleep(0.1)
                    continue
                if exc.code != "no_such_room" or opts.game is None:
                    raise
            break
        create = {"type": "create_room", "game": opts.game, "name": opts.room, **opts.room_options}
        if opts.series > 1:
            create.setdefault("games", opts.series)
        try:
            await client.request(create)
        except ServerError as exc:
            if exc.code != "room_exists":
                raise
        await self._joined(await client.request(join))

    async def _joined(self, joined: dict[str, Any]) -> None:
        seats = joined["settings"]["seats"]
        if joined["seat"] is not None and None in seats:
            self.status(f"waiting in {joined['room']} for a second player")

    async def _on_message(self, client: Client, msg: dict[str, Any]) -> None:
        if self.options.on_event is not None:
            self.options.on_event(msg)
        kind = msg.get("type")
        if kind == "game_start":
            if self.options.game is not None and msg["game"] != self.options.game and msg.get("seat") is not None:
                raise CannotPlay(f"{msg['room']} plays {msg['game']}, and this bot plays {self.options.game}: "
                                 f"start it with --game {msg['game']}")
            game = get_game(msg["game"])
            self.rooms[msg["room"]] = {
                "game": game, "state": game.decode_state(msg["state"], client.coords), "seat": msg["seat"],
                "players": msg["players"], "clocks": msg["clocks"], "moves": list(msg["moves"]),
                "to_move": msg["to_move"], "paused": msg.get("paused", False),
            }
            if msg.get("paused"):
                self.status(f"game {msg['game_no']} in {msg['room']} waits for both players after a server restart")
            else:
                opponent = msg["players"][1 - msg["seat"]] if msg["seat"] is not None else "?"
                self.status(f"playing game {msg['game_no']} in {msg['room']} against {opponent}")
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
            await self._game_over(client, msg)
        elif kind == "tournament":
            self._tournament_news(msg["tournament"])
        elif kind == "seeking":
            self.status(describe_seeking(msg))
        elif kind == "player_away":
            self.status(f"{msg['name']} lost the connection; it has {msg['grace']:g} s to come back")
        elif kind == "error":
            log.warning("server error: %s %s", msg.get("code"), msg.get("message"))
            if msg.get("code") == "illegal_move":
                raise IllegalMove(msg.get("message", "illegal move"))

    def _check_tournament(self, event: dict[str, Any]) -> None:
        """Stop with one clear line when this bot cannot play in ``event`` (another game; not an entrant)."""
        opts = self.options
        if opts.game is not None and event.get("game") != opts.game:
            raise CannotPlay(f"the tournament {event['name']} plays {event.get('game')}, and this bot plays "
                             f"{opts.game}: start it with --game {event.get('game')}")
        entrants = event.get("entrants") or []
        if opts.name not in entrants:
            listed = ", ".join(entrants[:30]) + (" …" if len(entrants) > 30 else "")
            raise CannotPlay(f"{opts.name} is not an entrant of the tournament {event['name']}; its entrants: "
                             f"{listed or 'none'}")

    def _tournament_news(self, event: dict[str, Any]) -> None:
        """Follow the tournament this bot plays in: say where it stands; stop once it is over."""
        if self.options.tournament not in (event.get("id"), event.get("name")):
            return
        if event["status"] in ("finished", "cancelled"):
            self._tournament_over = True
            if not self.rooms:
                self.finished = True
                self.status(f"tournament {event['name']} is {event['status']}")
            return
        if not self.rooms:
            progress = event.get("progress", {})
            self.status(f"waiting to be seated in tournament {event['name']} ({event['status']}, "
                        f"{progress.get('done', 0)} of {progress.get('total', '?')} games played)")

    async def _game_over(self, client: Client, msg: dict[str, Any]) -> None:
        room = self.rooms.pop(msg["room"], None)
        seat = room["seat"] if room else None
        result = GameResult(msg["room"], seat, msg["winner"], msg["reason"], msg["players"], msg.get("record"),
                            msg.get("status", "finished"))
        if seat is not None:
            self.results.append(result)
            if self.options.on_result is not None:
                self.options.on_result(result)
        played = sum(r.played for r in self.results)
        if (self.options.games is not None and played >= self.options.games) or (
                self._tournament_over and not self.rooms):
            self.finished = True
            await client.request({"type": "leave", "room": msg["room"]}, check=False)
        elif self.options.tournament is not None:
            await client.request({"type": "leave", "room": msg["room"]}, check=False)
        elif not msg.get("next_game"):
            await client.request({"type": "leave", "room": msg["room"]}, check=False)
            await self._find_game(client)

    async def _maybe_move(self, client: Client, room_name: str) -> None:
        room = self.rooms[room_name]
        seat = room["seat"]
        if seat is None or room["to_move"] != seat or room["paused"]:
            return
        control = room["clocks"].get("control", {})
        turn = Turn(
            game=room["game"], state=room["state"], seat=seat, room=room_name, players=room["players"],
            moves=list(room["moves"]), time_left=room["clocks"]["left"][seat],
            per_move=control.get("per_move"), increment=control.get("increment", 0.0),
        )
        seq = len(room["moves"])
        assert self.thinker is not None
        move = await self.thinker.choose(turn)
        if self.rooms.get(room_name) is not room or len(room["moves"]) != seq:
            return  # the game moved on while we thought (resumed, timed out, ended)
        game = room["game"]
        form = game.format_move(move, client.coords) if game.is_move(move) else move
        await client.send({"type": "move", "room": room_name, "move": form})


def describe_settings(seek: dict[str, Any]) -> str:
    """A seek's settings in words: ``30 s a move, 3 games`` (and the options, if any)."""
    control = seek.get("time_control") or {}
    if "per_move" in control:
        clock = f"{control['per_move']:g} s a move"
    elif "initial" in control:
        clock = f"{control['initial']:g} s a game + {control.get('increment', 0):g} s a move"
    else:
        clock = "untimed"
    games = seek.get("games", 1)
    options = ", ".join(f"{k}={v}" for k, v in sorted((seek.get("options") or {}).items()))
    return f"{clock}, {games} game{'' if games == 1 else 's'}" + (f", {options}" if options else "")


def describe_seeking(msg: dict[str, Any]) -> str:
    """What a waiting seeker is waiting for, and the seeks it will not pair with because their settings differ."""
    seek = msg["seek"]
    text = f"waiting for an opponent for {seek.get('game')} in the lobby ({describe_settings(seek)})"
    others = msg.get("others") or []
    if others:
        listed = "; ".join(f"{o.get('name')} ({describe_settings(o)})" for o in others[:5])
        text += (f"; not pairing with {listed}: their settings differ (give both bots the same --per-move and "
                 "--series)")
    return text


async def run_player(player: Player | Callable[[], Player], options: RunOptions) -> list[GameResult]:
    """Run ``player`` on a server until ``options.games`` games are done (forever if None)."""
    return await PlayerRunner(player, options).run()


def run(player: Player | Callable[[Turn], Any], name: str, **options: Any) -> list[GameResult]:
    """Blocking convenience wrapper: ``run(MyBot(), name="me", game="connect4")``.

    Progress (waiting for an opponent, each game, its result) is logged at INFO through
    ``logging`` (logger ``plyhall.client``). Ctrl-C stops the bot and returns the results so far.
    """
    if not isinstance(player, Player):
        player = FunctionPlayer(player)
    runner = PlayerRunner(player, RunOptions(name=name, **options))
    try:
        return asyncio.run(runner.run())
    except KeyboardInterrupt:
        log.info("%s: stopped (Ctrl-C) after %d games", name, len(runner.results))
        return runner.results


__all__ = ["CannotPlay", "Client", "FunctionPlayer", "GameResult", "JSON", "MSGPACK", "NoServer", "Player",
           "RunOptions", "ServerError", "ServerURLError", "TakenOver", "TryLater", "Turn", "check_url", "run",
           "run_player"]
