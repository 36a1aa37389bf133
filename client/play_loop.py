"""The play loop of a bot: find games, follow them, move when it is the bot's turn, reconnect.

:func:`run_player` (and its blocking form :func:`run`) logs in, creates or joins
a room, seeks an opponent in the lobby or follows a tournament, follows each
game, asks the :class:`~client.thinker.Thinker` for a move when it is the bot's
turn, sends it, goes on to the next game, and reconnects with backoff after a
dropped connection, resuming the seat. :class:`RunOptions` says how.

It is long because :class:`PlayerRunner` is one loop whose steps (logging in, seeking, joining or following
a tournament, playing, reconnecting) share one connection and one seat; it is read from :meth:`PlayerRunner.run`
down.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

from protocol.codec import MSGPACK
from protocol.games import IllegalMove, get_game

from . import interrupt
from .connection import (
    DEFAULT_URL,
    Client,
    NoServer,
    ServerError,
    ServerURLError,
    TakenOver,
    TryLater,
    check_url,
    describe_connect_error,
)
from .player import FunctionPlayer, GameResult, NoMove, Player, Resign, Turn
from .thinker import Thinker
from .tournament import http_base

log = logging.getLogger("plyhall.client")

FINISHED_ROOM_RETRIES = 100  # looks a tenth of a second apart for a finished named room to empty (then 2 s apart)
TOURNAMENT_POLL = 2.0  # seconds between two looks for a tournament that does not exist yet


class CannotPlay(Exception):
    """The bot cannot play what it was asked to (a tournament or room of another game, a tournament it is no
    entrant of): the message says what is wrong and what would work."""


@dataclass
class RunOptions:
    """How :func:`run_player` finds its games.

    Without ``room`` the bot *seeks* a game: the server pairs it with another bot seeking the
    same game on the same settings, or keeps the seek until one comes. With ``room`` it joins
    that room, creating it (with ``room_options``) if it does not exist. ``series`` asks for
    rooms of that many games (the seek, or a room this bot creates). With ``ladder`` it plays rated
    games on the server's ladder of ``game`` for as long as it runs: the server pairs it again after
    each game, and it takes its place again after every reconnection.
    """

    name: str
    secret: str | None = None
    url: str = DEFAULT_URL
    game: str | None = None
    room: str | None = None
    tournament: str | None = None  # play this tournament's games (seated by the server) until it ends
    ladder: bool = False  # play rated games on the server's ladder of `game` (paired by rating, game after game)
    games: int | None = None  # stop after this many games; None plays on
    series: int = 1
    coords: str = "algebraic"
    subprotocol: str = MSGPACK
    room_options: dict[str, Any] = field(default_factory=dict)  # for rooms this bot creates, and its seeks
    think: str = "process"
    max_retries: int | None = None  # reconnection attempts in a row before giving up: None, RETRIES (a tournament's
    # entrant TOURNAMENT_RETRIES, as long as a restarting server may take before its games forfeit)
    on_result: Callable[[GameResult], None] | None = None
    on_event: Callable[[dict[str, Any]], None] | None = None
    on_status: Callable[[str], None] | None = None  # what the bot is doing, in a sentence (also logged)


MAX_BACKOFF = 10.0
"""The longest wait between two reconnection attempts, in seconds."""
RETRIES = 8
"""Reconnection attempts in a row before a bot gives up (about 40 s of a server that is not there)."""
TOURNAMENT_RETRIES = 60
"""... and a tournament's entrant, whose event waits for the server (about ten minutes: a bot that gave up after 35 s
forfeited every game left once its server was back)."""
PROGRESS = frozenset({"moved", "game_over"})
"""What shows a session got somewhere (a game went on), unlike what a server sends again at every login (the rooms
held, their state, the answer to a tournament's watch): one of these ends a run of reconnection failures."""
STABLE_SESSION = 30.0
"""Seconds a session must last, when no game went on over it, for its drop to count as the first failure of a new run:
a server that takes the login and drops the connection at once is not tried again every quarter second for ever."""
MAX_WAIT = 300.0
"""The longest wait the bot accepts when the server says to try later (a throttled login), in seconds."""
CLUSTER_RETRY = 2.0
"""Seconds before the bot comes back after ``cluster_unavailable`` (a node of a cluster out of reach for a moment):
the protocol promises the request was not executed and says to try again in a few seconds. The bot reconnects
and resumes, and the server sends the full state of its games again."""


class PlayerRunner:
    """The play loop of one bot (see :func:`run_player`)."""

    def __init__(self, player: Player | Callable[[], Player], options: RunOptions) -> None:
        if options.game is not None:
            get_game(options.game)  # KeyError naming the games
        if options.room is None and options.game is None and options.tournament is None:
            raise ValueError("give a room to join, a game to find an opponent for, or a tournament to play in")
        if options.ladder and (options.game is None or options.room is not None or options.tournament is not None):
            raise ValueError("the ladder is played by game: give the game, and no room or tournament")
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
        self._tournament_id: str | None = None  # the id of the event followed, as the server's answer gives it
        self._next_game_in: set[str] = set()  # rooms where the bot waits for the next game of the room's series
        self._failures = 0  # failed attempts in a row: since the last session that got somewhere
        self._logged_in_at: float | None = None  # when the session now running logged in (the loop's clock)
        self._answers: dict[str, Answer] = {}  # room -> the move chosen for its position now, and where it went
        self._alone_in: set[str] = set()  # rooms where the bot holds a seat and waits for a second player

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
        connected_before = False
        self.thinker = Thinker(self.player, self.options.think)
        try:
            await self._look_for_server()
            await self._warm_up()
            while not self.finished:
                try:
                    await self._session()
                except TakenOver:
                    raise self._taken_over() from None
                except InvalidURI as exc:
                    raise ServerURLError(f"bad server address {self.options.url!r}: {exc}") from None
                except TryLater as exc:  # the server is there and says when: waiting is never a reason to give up
                    delay = min(MAX_WAIT, exc.delay) * (1.0 + random.random() / 4)
                    self.status(f"{exc}; trying again in {delay:.1f} s")
                    await asyncio.sleep(delay)
                except (TimeoutError, OSError, ConnectionError, ConnectionClosed, InvalidHandshake) as exc:
                    if self.finished:
                        break
                    if self.client is not None and self.client.taken_over:
                        # the takeover's close met a send (the bot had been thinking) rather than a read: the same
                        # stop, or this bot would log in again and take the name back from the second process
                        raise self._taken_over() from None
                    if self.client is not None and self.client.ws is not None:
                        connected_before = True
                    reason, fatal = describe_connect_error(self.options.url, exc, connected_before)
                    if fatal:
                        raise ServerURLError(reason) from None
                    if self._logged_in_at is not None and \
                            asyncio.get_running_loop().time() - self._logged_in_at >= STABLE_SESSION:
                        self._failures = 0  # a session that held: this drop starts a new run of attempts
                    self._logged_in_at = None
                    self._failures += 1
                    if self._failures > self._retries():
                        error = NoServer if reason.startswith("no server") else ConnectionError
                        raise error(f"{reason}; gave up after {self._failures - 1} reconnection attempts") from None
                    delay = min(MAX_BACKOFF, 0.25 * 2 ** (self._failures - 1)) * (0.75 + random.random() / 2)
                    delay = min(delay, MAX_BACKOFF)
                    self.status(f"{reason}; trying again in {delay:.1f} s")
                    await asyncio.sleep(delay)
        finally:
            self.thinker.close()
        return self.results

    def _retries(self) -> int:
        """The reconnection attempts in a row this bot makes before it gives up."""
        if self.options.max_retries is not None:
            return self.options.max_retries
        return TOURNAMENT_RETRIES if self.options.tournament is not None else RETRIES

    def _taken_over(self) -> TakenOver:
        """The error that stops a bot whose name logged in from another connection."""
        return TakenOver(f"{self.options.name} logged in from another connection (another process with the same "
                         "name and secret?); this one stops")

    async def _look_for_server(self) -> None:
        """Connect once before the player warms up (which may take a minute): a wrong address is said and ends
        the bot at once, and so is a server not there yet (the bot goes on, and keeps trying once it is ready)."""
        probe = Client(self.options.url, self.options.subprotocol)
        try:
            async with asyncio.timeout(10.0):
                await probe.connect()
        except (TimeoutError, OSError, ConnectionError, InvalidHandshake) as exc:
            reason, fatal = describe_connect_error(self.options.url, exc, False)
            if fatal:
                raise ServerURLError(reason) from None
            what = getattr(self.player, "warms_up", None)  # (an engine may take a minute to build first)
            self.status(f"{reason}; trying again {'once ' + what + ' is ready' if what else 'in a moment'}")
        except InvalidURI as exc:
            raise ServerURLError(f"bad server address {self.options.url!r}: {exc}") from None
        finally:
            await probe.close()

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
                if exc.code in ("throttled", "busy", "cluster_unavailable"):
                    raise TryLater(f"the server says: {exc.message}", retry_after(exc, 2.0)) \
                        from None
                raise
            self.resume = client.resume
            self._logged_in_at = asyncio.get_running_loop().time()
            try:
                await self._play(client, welcome)
            except ServerError as exc:  # a request of the bot answered cluster_unavailable or rate_limited: nothing
                if exc.code == "cluster_unavailable":  # was done; the bot comes back when the server says
                    raise TryLater(f"the server says: {exc.message}", CLUSTER_RETRY) from None
                if exc.code == "rate_limited":  # (a big event's watch_tournament, its address's budget spent)
                    raise TryLater(f"the server says: {exc.message}", retry_after(exc, 2.0)) \
                        from None
                raise
            except asyncio.CancelledError:  # stopped (Ctrl-C): a seat where nobody came yet is given back at once,
                await self._leave_empty_rooms(client)  # not kept for the grace period against the bot's return
                raise
        finally:
            await client.close()

    async def _leave_empty_rooms(self, client: Client) -> None:
        """Leave the rooms where the bot waits alone (a second, then it gives up: the seat is kept as before)."""
        try:
            async with asyncio.timeout(1.0):
                for room in sorted(self._alone_in):
                    await client.send({"type": "leave", "room": room})
        except (TimeoutError, OSError, ConnectionError, ConnectionClosed):
            pass

    async def _play(self, client: Client, welcome: dict[str, Any]) -> None:
        """Find the next game if the bot has none, then follow what the server sends until the bot is done."""
        opts = self.options
        await self._missed_ends(set(welcome.get("rooms") or []))
        if self.finished:
            return
        if opts.tournament is not None or opts.ladder or not welcome.get("rooms"):
            # a tournament entrant follows its event even when seated already; a ladder bot takes its place
            # again (a restarted server forgot it) and is paired once the games it resumes are over
            await self._find_game(client)
        while not self.finished:
            msg = await client.recv(timeout=None)
            await self._on_message(client, msg)
            if msg.get("type") in PROGRESS:
                self._failures = 0  # the session got somewhere: the next drop starts a new run of attempts

    async def _missed_ends(self, seated: set[str]) -> None:
        """Count the games followed whose end the bot did not hear and where the server keeps no seat for it (its
        grace ran out while it was away; a ladder room, which it leaves at the game's end; the end lost with a server
        that died): their records on the server's HTTP side say how they ended. Without them the bot neither counted
        these games nor stopped following them, and played one game more than ``games`` asked for."""
        missed = {name: self.rooms[name]["record"] for name in sorted(set(self.rooms) - seated)}
        looked_up = await asyncio.gather(*(asyncio.to_thread(stored_game, self.options.url, record)
                                           for record in missed.values()))  # at once: each may take its timeout
        for (name, record), stored in zip(missed.items(), looked_up, strict=True):
            if stored is not None and stored.get("ended_at") is None:
                continue  # still running: its news comes by the connection
            if stored is None:
                self.rooms.pop(name)
                self.status(f"the end of the game in {name} was not heard, and its record could not be read; "
                            "not counted")
                continue
            await self._count({"room": name, "winner": stored["winner"], "reason": stored["reason"],
                               "players": stored["players"], "record": record, "status": stored["status"]})
            if self.options.games is not None and sum(r.played for r in self.results) >= self.options.games:
                self.finished = True

    async def _find_game(self, client: Client) -> None:
        """Get into the next game: follow the tournament, seek an opponent, or join (or set up) the room."""
        if self.options.tournament is not None:
            await self._follow_tournament(client)
        elif self.options.room is None:
            await self._seek(client)
        else:
            await self._join_room(client)

    async def _follow_tournament(self, client: Client) -> None:
        """Watch the tournament (waiting for it to be created); the server seats the bot in its games."""
        opts = self.options
        while True:
            since = client.kept
            try:
                reply = await client.request({"type": "watch_tournament", "tournament": opts.tournament})
            except ServerError as exc:
                if exc.code == "rate_limited":  # a big event's entrants on one address, after a restart: ask again
                    wait = min(retry_after(exc, 1.0), TOURNAMENT_POLL)  # soon, still logged in
                    self.status(f"the server is busy answering others about {opts.tournament}: asking again in "
                                f"{wait:g} s")
                    await asyncio.sleep(wait)
                    continue
                if exc.code != "no_such_tournament":
                    raise
                self.status(f"waiting for the tournament {opts.tournament} to be created")
                # looked at again at once when the server sends anything: an event created with this bot among its
                # entrants starts its first game at once, whose clock would otherwise run out the wait
                await client.news(since, TOURNAMENT_POLL)
                continue
            # The answer is news of the event too, and waits in the inbox behind what the server sent before it (a
            # game_start, a game_over of a game the event seated this bot in between two looks): read in that order,
            # so that an event cancelled meanwhile ends only after its game's end was heard.
            self._check_tournament(reply["tournament"])
            self._tournament_id = reply["tournament"]["id"]  # its news is known by it ("SLOW" found the event "Slow")
            return

    async def _seek(self, client: Client) -> None:
        """Ask the lobby for an opponent on this bot's settings."""
        opts = self.options
        seek: dict[str, Any] = {"type": "seek", "game": opts.game, "games": opts.series}
        for key in ("options", "time_control"):
            if key in opts.room_options:
                seek[key] = opts.room_options[key]
        if opts.ladder:  # the ladder sets the time and the series itself
            seek = {"type": "seek", "game": opts.game, "ladder": True}
        reply = await client.request(seek)
        if reply["type"] == "seeking":
            self.status(describe_seeking(reply, self._plan()))

    def _plan(self) -> str:
        """The games this bot will still play, in words (its seek's series is not their number)."""
        return describe_plan(self.options.series, self.options.games, sum(r.played for r in self.results))

    async def _join_room(self, client: Client) -> None:
        """Join the named room, creating it first when it does not exist and this bot knows its game."""
        opts = self.options
        join: dict[str, Any] = {"type": "join", "room": opts.room}
        if opts.game is not None:
            join["game"] = opts.game
        if await self._try_join(client, join):
            return
        create = {"type": "create_room", "game": opts.game, "name": opts.room, **opts.room_options}
        if opts.series > 1:
            create.setdefault("games", opts.series)
        try:
            await client.request(create)
        except ServerError as exc:
            if exc.code != "room_exists":
                raise
        await self._joined(await client.request(join))

    async def _try_join(self, client: Client, join: dict[str, Any]) -> bool:
        """Join the room: True once in it, False when there is no such room (and this bot can create it)."""
        # A finished room lingers until everybody has left it (an opponent away keeps its seat for the room's grace,
        # up to ten minutes), and is then removed, so the next game can be set up under the same name: wait for that,
        # looking again every tenth of a second at first, then every two seconds.
        attempt = 0
        while True:
            try:
                await self._joined(await client.request(join))
                return True
            except ServerError as exc:
                if exc.code == "game_not_running":
                    self.status(f"{self.options.room} is finishing its games; waiting to set it up again")
                    attempt += 1
                    await asyncio.sleep(0.1 if attempt <= FINISHED_ROOM_RETRIES else 2.0)
                    continue
                if exc.code != "no_such_room" or self.options.game is None:
                    raise
            return False

    async def _joined(self, joined: dict[str, Any]) -> None:
        seats = joined["settings"]["seats"]
        if joined["seat"] is not None and None in seats:
            self._alone_in.add(joined["room"])
            self.status(f"waiting in {joined['room']} for a second player ({self._plan()})")

    async def _on_message(self, client: Client, msg: dict[str, Any]) -> None:
        """Follow one pushed message: a game starting, a move, a game over, news of the tournament or lobby."""
        if self.options.on_event is not None:
            self.options.on_event(msg)
        kind = msg.get("type")
        if kind == "game_start":
            await self._game_start(client, msg)
        elif kind == "moved":
            await self._moved(client, msg)
        elif kind == "game_over":
            await self._game_over(client, msg)
        elif kind == "room_state":
            await self._room_state(client, msg)
        elif kind == "tournament":
            self._tournament_news(msg["tournament"])
        elif kind == "seeking":
            self.status(describe_seeking(msg, self._plan()))
        elif kind in ("seated", "player_away"):
            await self._seats_news(client, msg)
        elif kind == "error":
            await self._server_error(client, msg)

    async def _server_error(self, client: Client, msg: dict[str, Any]) -> None:
        """An error the server pushed or answered: logged; a refused move stops the bot (its game resigned)."""
        log.warning("%s: server error: %s %s", self.options.name, msg.get("code"), msg.get("message"))
        # a move refused (a game paused meanwhile, say) is not sent again: the game's next state asks again
        self._answers.pop(msg.get("room"), None)
        if msg.get("code") == "illegal_move":  # the bot stops: its game is resigned, as when choose raises, not
            room = self.rooms.get(msg.get("room") or "")  # left to the opponent's wait out of the grace
            if room is not None:
                await client.send({"type": "resign", "room": msg["room"], **_game_no(client, room)})
            raise IllegalMove(msg.get("message", "illegal move"))
        if msg.get("code") == "cluster_unavailable":  # a move not taken (nothing was done): back with the state
            raise TryLater(f"the server says: {msg.get('message')}", CLUSTER_RETRY)

    async def _game_start(self, client: Client, msg: dict[str, Any]) -> None:
        """A game begins (or is resumed): follow it, and move if it is this bot's turn."""
        if self.options.game is not None and msg["game"] != self.options.game and msg.get("seat") is not None:
            raise CannotPlay(f"{msg['room']} plays {msg['game']}, and this bot plays {self.options.game}: "
                             f"start it with --game {msg['game']}")
        game = get_game(msg["game"])
        self._next_game_in.discard(msg["room"])
        self._alone_in.discard(msg["room"])
        self.rooms[msg["room"]] = {
            "game": game, "state": game.decode_state(msg["state"], client.coords), "seat": msg["seat"],
            "players": msg["players"], "clocks": msg["clocks"], "moves": list(msg["moves"]),
            "to_move": msg["to_move"], "paused": msg.get("paused", False), "record": msg.get("record"),
            "clocks_at": client.received_at, "game_no": msg["game_no"],
        }
        if msg.get("paused"):
            self.status(f"game {msg['game_no']} in {msg['room']} waits for both players after a server restart")
        else:
            opponent = msg["players"][1 - msg["seat"]] if msg["seat"] is not None else "?"
            own = "" if msg["seat"] is None else \
                f" ({own_count(self.options.name, sum(r.played for r in self.results) + 1, self.options.games)})"
            self.status(f"playing game {msg['game_no']} in {msg['room']} against {opponent}{own}")
        if self.options.ladder and self.options.games is not None and msg.get("seat") is not None and \
                sum(r.played for r in self.results) + 1 >= self.options.games:
            # the last game wanted: off the ladder now, or the server would pair the bot again as it ends, and the
            # bot, gone, would lose that next game on time
            await client.request({"type": "cancel_seek", "game": msg["game"]}, check=False)
        await self._maybe_move(client, msg["room"], msg)

    async def _moved(self, client: Client, msg: dict[str, Any]) -> None:
        """A move was played in a followed game: apply it, and move if it is this bot's turn now."""
        room = self.rooms.get(msg["room"])
        if room is None:
            return
        self._answers.pop(msg["room"], None)  # the position it was chosen for is gone
        game = room["game"]
        move = game.parse_move(msg["move"], room["state"], client.coords)
        room["state"] = game.apply(room["state"], move)
        room["moves"].append(msg["notation"])
        room["clocks"], room["clocks_at"] = msg["clocks"], client.received_at
        room["to_move"] = msg["to_move"]
        await self._maybe_move(client, msg["room"])

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
        key = self.options.tournament
        if event.get("id") != self._tournament_id and key not in (event.get("id"), event.get("name")):
            return
        if event["status"] in ("finished", "cancelled"):
            # Over: none of its games plays on (the server sends each game's game_over before this news). A room
            # still followed lost its game_over with a server that died between storing the result and sending it.
            self._tournament_over = self.finished = True
            for room in sorted(self.rooms):
                self.status(f"the end of the game in {room} was not heard (a server restarted); the tournament's "
                            "standings count it")
            self.rooms.clear()
            self.status(f"tournament {event['name']} is {event['status']}")
            return
        if not self.rooms:
            progress = event.get("progress", {})
            self.status(f"waiting to be seated in tournament {event['name']} ({event['status']}, "
                        f"{progress.get('done', 0)} of {progress.get('total', '?')} games played)")

    async def _room_state(self, client: Client, msg: dict[str, Any]) -> None:
        """A room where no game runs, sent on coming back to a seat: a followed game that ended meanwhile (its
        game_over sent while the bot was away, or lost with a server that died right after storing the result)
        ends here as if that game_over had come."""
        room, result = self.rooms.get(msg["room"]), msg.get("last_result")
        if room is not None and result and result.get("record") == room["record"]:
            await self._game_over(client, {
                "room": msg["room"], "winner": result["winner"], "reason": result["reason"],
                "status": result["status"], "players": result["players"], "record": result["record"],
                "next_game": msg.get("status") == "waiting", "game_no": msg.get("game_no")})
        elif room is not None:
            return
        if msg.get("status") == "waiting":  # between two games of a series: is the opponent still there?
            await self._opponent_gone(client, msg["room"], msg["players"])
        elif room is None and msg.get("status") == "finished" and msg.get("seat") is not None:
            # a seat still held in a room whose games are all over and whose end the bot heard: the leave that
            # followed was lost with the connection. Leave it now and go on, or the bot would wait there for ever
            await self._go_on(client, msg["room"], next_game=False)

    async def _game_over(self, client: Client, msg: dict[str, Any]) -> None:
        await self._count(msg)
        await self._go_on(client, msg["room"], bool(msg.get("next_game")))

    async def _count(self, msg: dict[str, Any]) -> None:
        """A game is over (``msg``: its game_over): stop following it, and count it if the bot played in it."""
        room = self.rooms.pop(msg["room"], None)
        self._answers.pop(msg["room"], None)
        seat = room["seat"] if room else None
        if room is None and msg.get("status") == "forfeit" and self.options.name in msg["players"]:
            # a game that never started (no game_start): the opponent did not come to the tournament's room, or
            # left it first. It is the bot's result all the same, as the event's standings count it
            seat = msg["players"].index(self.options.name)
        rating = msg["ratings"][seat] if seat is not None and msg.get("ratings") else None
        result = GameResult(msg["room"], seat, msg["winner"], msg["reason"], msg["players"], msg.get("record"),
                            msg.get("status", "finished"), rating, msg.get("game_no"))
        if seat is not None:
            self.results.append(result)
            if self.thinker is not None:
                await self.thinker.game_over(result)
            if self.options.on_result is not None:
                self.options.on_result(result)

    async def _go_on(self, client: Client, room: str, next_game: bool) -> None:
        """A game in ``room`` is over (and counted): stop once the bot is done, else stay for the room's next game,
        or leave and find the next one."""
        played = sum(r.played for r in self.results)
        # a tournament's or the ladder's room goes as its game ends: leaving it was an error (no_such_room) a game
        stays = self.options.tournament is None and not self.options.ladder
        if (self.options.games is not None and played >= self.options.games) or (
                self._tournament_over and not self.rooms):
            self.finished = True
            if stays:
                await client.request({"type": "leave", "room": room}, check=False)
        elif self.options.tournament is not None:
            pass  # the event seats the bot in its next game
        elif not next_game:
            if stays:
                await client.request({"type": "leave", "room": room}, check=False)
            if self.options.ladder:  # the server puts the bot back on the ladder once the result is stored
                self.status(f"on the ladder of {self.options.game}: waiting to be paired again")
            else:
                await self._find_game(client)
        else:
            self._next_game_in.add(room)

    async def _seats_news(self, client: Client, msg: dict[str, Any]) -> None:
        """A player lost the connection (``player_away``), or a seat changed hands (``seated``)."""
        if msg["type"] == "player_away":
            self.status(f"{msg['name']} lost the connection; it has {msg['grace']:g} s to come back")
        else:
            await self._opponent_gone(client, msg["room"], msg["seats"])

    async def _opponent_gone(self, client: Client, room: str, seats: list[str | None]) -> None:
        """The seats of ``room`` (``seated``, or the room's state on coming back). In a room the lobby paired this bot
        in, between two games of its series, an empty seat is an opponent gone for good (it left, or did not come
        back in time): nobody else is sent there, so the bot leaves and seeks again (it used to wait there for
        ever). A room the bot was told to play in (``room``) keeps it waiting for a second player."""
        if room not in self._next_game_in or None not in seats or self.options.room is not None:
            return
        self._next_game_in.discard(room)
        self.status(f"the opponent left {room} before the next game of the series")
        await client.request({"type": "leave", "room": room}, check=False)
        await self._find_game(client)

    async def _maybe_move(self, client: Client, room_name: str, start: dict[str, Any] | None = None) -> None:
        """Choose and send a move in ``room_name`` when it is this bot's turn there (``start``: the ``game_start``
        that asks, if one does)."""
        room = self.rooms[room_name]
        seat = room["seat"]
        if seat is None or room["to_move"] != seat or room["paused"]:
            return
        answer = self._answers.get(room_name)
        if answer is not None and answer.fits(room):
            # the game's state came again (the bot back at its seat) in the position already answered: the move
            # chosen stands, never thought about again. It is sent on this connection unless it went by it after
            # this state was sent: it went by a connection that ended, or waited for the game to resume, or the
            # state came after it (a cluster that lost the move on its way, then attached the session again: a move
            # the server did take is refused as out of turn, never played twice)
            if answer.sent_on is client and any(start is heard for heard in answer.heard):
                answer.heard = [heard for heard in answer.heard if heard is not start]
                return
            answer.sent_on, answer.heard = client, []
            await client.send(answer.message)
            return
        control = room["clocks"].get("control", {})
        time_left = room["clocks"]["left"][seat]
        if time_left is not None:  # less the time the message waited unread (the bot was thinking about another game)
            time_left = max(0.0, time_left - (asyncio.get_running_loop().time() - room["clocks_at"]))
        turn = Turn(
            game=room["game"], state=room["state"], seat=seat, room=room_name, players=room["players"],
            moves=list(room["moves"]), time_left=time_left,
            per_move=control.get("per_move"), increment=control.get("increment", 0.0), record=room["record"],
        )
        seq = len(room["moves"])
        try:
            move = await self._choose_while_it_runs(client, room_name, room["record"], turn)
        except Resign as exc:
            if self._moved_on(client, room_name, room, seq):
                return
            self.status(f"resigning game in {room_name}: {exc}")
            # the game's number: a resignation that crosses the game's end is refused, not given to the next game
            await client.send({"type": "resign", "room": room_name, **_game_no(client, room)})
            return
        except NoMove as exc:
            self.status(f"no move in {room_name}: {exc}")
            return
        except Exception:  # the player can play no more (StopPlaying; a crash, which ends the bot): its game is
            # resigned, not left to the opponent's wait for a player that will never come back
            if not self._moved_on(client, room_name, room, seq):
                await client.send({"type": "resign", "room": room_name, **_game_no(client, room)})
            raise
        game = room["game"]
        form = game.format_move(move, client.coords) if game.is_move(move) else move
        # the game's number: a move that crosses the game's end (its clock ran out) is refused, not played in the next
        answer = Answer(room["record"], turn.moves, seat,
                        {"type": "move", "room": room_name, "move": form, **_game_no(client, room)})
        if self._moved_on(client, room_name, room, seq, answer):
            return
        answer.sent_on = client
        self._answers[room_name] = answer
        await client.send(answer.message)

    async def _choose_while_it_runs(self, client: Client, room_name: str, record: str, turn: Turn) -> Any:
        """The thinker's move for ``turn``, given up on (:class:`NoMove`) as soon as a message says that its game
        ended meanwhile (its clock ran out, the opponent resigned, the room's next game began): a bot stuck in its
        search lost the next game of a series as well, waiting out its clock and a grace for a move nobody wanted."""
        thinker = self.thinker
        assert thinker is not None
        choosing = asyncio.ensure_future(thinker.choose(turn))
        try:
            while not choosing.done():
                since = client.kept
                if any(msg.get("type") == "game_over" or (msg.get("type") == "game_start" and msg.get("record")
                                                          != record) for msg in client.unread(room_name)):
                    thinker.abandon()
                    break
                news = asyncio.ensure_future(client.news(since, 3600.0))
                try:
                    await asyncio.wait({choosing, news}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    news.cancel()
                if news.done() and not news.cancelled() and not news.result():
                    break  # nothing more comes (the connection closed): the move, whenever it comes
            return await choosing
        except asyncio.CancelledError:
            choosing.cancel()
            raise

    def _moved_on(self, client: Client, room_name: str, room: dict[str, Any], seq: int,
                  answer: Answer | None = None) -> bool:
        """True when the game thought about (``room`` after ``seq`` moves) is no longer the one to answer: it ended
        or started again while the bot thought (its clock ran out, the opponent resigned, the room's next game began),
        as messages read or still unread say. The answer would go to the room's next game, where it was never chosen
        (and may be illegal: a Quarto bot stopped on its 'illegal move'); the game's start, read next, asks again.

        A game's start that only sends the same game's state again in the position answered (the bot back at its
        seat: a server that restarted, a cluster that attached its session again) leaves ``answer`` standing: sent
        now (False), or, when that state says the game is paused, kept for the start that resumes it (True)."""
        if self.rooms.get(room_name) is not room or len(room["moves"]) != seq:
            return True
        news = [msg for msg in client.unread(room_name) if msg.get("type") in ("game_over", "game_start")]
        if not news:
            return False
        if answer is None or not all(msg["type"] == "game_start" and answer.fits(msg) for msg in news):
            return True
        self._answers[room_name] = answer  # sent_on None: not sent yet
        answer.heard = news  # sent before the move is: their reading asks nothing more
        return any(msg.get("paused") for msg in news)


def _game_no(client: Client, room: dict[str, Any]) -> dict[str, int]:
    """``game_no`` for a request about ``room``'s game, where the server takes it (``welcome.features``: an older
    server refuses a field it does not know, and every move with it)."""
    return {"game_no": room["game_no"]} if "game_no" in client.welcome.get("features", ()) else {}


@dataclass
class Answer:
    """The move a bot chose in one position of one game (``record``, after ``moves``, ``seat`` to move), the message
    that plays it, and the connection it was sent on (None: not sent yet). The game's state sent again in that same
    position (a ``game_start`` on coming back to the seat) is answered with it, never thought about again; ``heard``
    are those states the server sent before the move went (unread when it went): the move already answers them."""

    record: str | None
    moves: list[str]
    seat: int
    message: dict[str, Any]
    sent_on: Client | None = None
    heard: list[dict[str, Any]] = field(default_factory=list)

    def fits(self, game: dict[str, Any]) -> bool:
        """True when ``game`` (a ``game_start``, or a followed room) is this answer's game in its position: the same
        record, the same moves, this bot's seat and its turn. A game without a record is never taken for another."""
        return (self.record is not None and game.get("record") == self.record and game.get("seat") == self.seat
                and game.get("to_move") == self.seat and list(game.get("moves") or ()) == self.moves)


def stored_game(url: str, record: str | None, timeout: float = 5.0) -> dict[str, Any] | None:
    """The record of game ``record`` (``/api/games/ID``) on the HTTP side of the server whose WebSocket address is
    ``url``; None when it cannot be read (or there is no record to read)."""
    if not record:
        return None
    try:
        with urllib.request.urlopen(f"{http_base(url)}/api/games/{quote(record, safe='')}", timeout=timeout) as resp:
            return json.loads(resp.read())
    except (OSError, ValueError):
        return None


def describe_settings(seek: dict[str, Any], plan: str | None = None) -> str:
    """A seek's settings in words: ``30 s a move, 3 games`` (and the options, if any); ``plan``, when given, says
    the games instead of the seek's series (a bot's own seek: what it will really play, :func:`describe_plan`)."""
    control = seek.get("time_control") or {}
    if "per_move" in control:
        clock = f"{control['per_move']:g} s a move"
    elif "initial" in control:
        clock = f"{control['initial']:g} s a game + {control.get('increment', 0):g} s a move"
    else:
        clock = "untimed"
    games = seek.get("games", 1)
    options = ", ".join(f"{k}={v}" for k, v in sorted((seek.get("options") or {}).items()))
    plan = plan or f"{games} game{'' if games == 1 else 's'}"
    return f"{clock}, {plan}" + (f", {options}" if options else "")


def retry_after(error: ServerError, default: float) -> float:
    """The seconds a refusal says to wait before asking again (``default`` when it says none)."""
    return float(error.msg.get("retry_after") or default)


def series_words(games: Any) -> str:
    """Another seek's series in words: ``one game a room``, ``series of 3``."""
    return "one game a room" if games == 1 else f"series of {games}"


def describe_plan(series: int, total: int | None, played: int = 0) -> str:
    """The games a bot seeking with ``series`` games a room will play, ``played`` of its ``total`` done, in words:
    ``3 games`` (``2 more games`` once one is played), ``6 games, in series of 3``; ``game after game`` (``series of
    3 games, one after another``) when it plays on until stopped."""
    in_series = f"series of {series} games" if series > 1 else ""
    if total is None:
        return f"{in_series}, one after another" if in_series else "game after game"
    left = max(total - played, 0)
    text = f"{left}{' more' if played else ''} game{'' if left == 1 else 's'}"
    return f"{text}, in series of {series}" if series > 1 else text


def own_count(name: str, count: int, total: int | None) -> str:
    """The bot's own count of a game, beside the room's number of it: ``deep's game 3 of 5`` (``deep's game 3`` when
    it plays on)."""
    return f"{name}'s game {count}" + ("" if total is None else f" of {total}")


def describe_rating(rating: dict[str, Any]) -> str:
    """A rating as a status line shows it: ``1523 ± 80`` (``?`` when provisional), with its last change if any."""
    text = f"{rating['rating']:.0f} ± {rating['deviation']:.0f}{'?' if rating.get('provisional') else ''}"
    return text + (f" ({rating['change']:+.1f})" if "change" in rating else "")


def describe_seeking(msg: dict[str, Any], plan: str | None = None) -> str:
    """What a waiting seeker is waiting for (``plan``: the games it will play, :func:`describe_plan`; the seek's
    series when not given), and the seeks it will not pair with because their settings differ."""
    seek = msg["seek"]
    ladder = msg.get("ladder")
    if seek.get("ladder") and ladder is not None:
        return (f"on the ladder of {seek.get('game')} ({describe_settings(seek, plan)}), "
                f"rating {describe_rating(ladder)}: waiting for an opponent ({ladder.get('waiting', 0)} waiting, "
                f"{ladder.get('playing', 0)} playing)")
    text = f"waiting for an opponent for {seek.get('game')} in the lobby ({describe_settings(seek, plan)})"
    others = msg.get("others") or []
    if others:
        # their series, not a number of games beside the bot's own number of games to play
        listed = "; ".join(f"{o.get('name')} ({describe_settings(o, series_words(o.get('games', 1)))})"
                           for o in others[:5])
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
        return interrupt.run(runner.run())  # Ctrl-C between callbacks (client/interrupt.py)
    except KeyboardInterrupt:
        log.info("%s: stopped (Ctrl-C) after %d games", name, len(runner.results))
        return runner.results
