"""A node of a cluster: the Redis link that makes several ``plyhall serve`` processes one hall.

Every node runs its own :class:`~server.core.hall.Hall` and owns the rooms opened on it (it checks
their moves and clocks and stores them in the shared PostgreSQL database). This link carries the
rest through Redis (docs/SCALING.md has the whole design):

- **Forwarding.** A request of a client of this node about a room another node owns (``join``,
  ``move``, ``chat``...), a seek (all seeks go to the node holding the matchmaker lease, so two
  seeks meet wherever they were made) or a tournament run elsewhere is published on that node's
  channel with the client's name and address. There the client is a session under a stand-in
  connection id (negative, never a real one), the owner's hall answers as for its own clients,
  and what it sends to the stand-in comes back on this node's channel, batched per node.
- **Names.** ``sessions`` (name -> node), ``tokens`` (name -> digest of the latest resume token)
  and ``held:NAME`` (room -> node, for seats and tournament entries) let any node apply the
  login rule table to names held elsewhere; a login taking over a session on another node closes
  that connection there, and a login attaches the name's seats on every node that holds one.
- **The lobby.** Each node publishes its rooms and tournaments when they change (coalesced);
  every node lists them all and routes requests by them.
- **Leases.** A node renews ``node:NAME`` (expiring) while it lives, and the matchmaker lease
  while it holds it. When a node's lease lapses, another node adopts its rooms and tournaments
  from PostgreSQL; the node's advisory lock there (held by its process, dropped when it dies)
  keeps a node merely cut off from Redis from being robbed of its rooms.
- **Fencing.** Every adoption takes new epochs (fencing tokens) in PostgreSQL, and every write is
  refused there unless it carries its node's current epoch (``server.storage.postgres``). Every
  beat this node proves it still owns its rooms (its lock's connection answers and its epoch is
  current; a dropped lock is taken again, with a new epoch, if nobody took over meanwhile); a node
  that finds itself deposed (a refused write, an ``adopted`` naming it, its lock in other hands)
  stops serving at once (``PlyhallServer.depose``).
- **Redis down.** Rooms and clients of this node play on; requests that need another node get
  ``cluster_unavailable``; ``/healthz`` says degraded; when Redis is back every node republishes
  its listing and re-attaches its forwarded sessions (their owners resend the full state).

The module is long because it is the whole of one node's side of the cluster protocol: every kind
of message is sent and handled here, so a reader follows a request from the client's node to the
room's and back in one file.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import socket
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any

import msgpack

from protocol import messages as m
from protocol.messages import ErrorCode, validate_request

from ..core.cluster import ClusterView, credit_wait
from ..core.hall import ROOM_REQUESTS
from ..core.identity import Holder
from ..tournament.director import slug
from . import resp

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from .server import PlyhallServer

log = logging.getLogger("plyhall.cluster")

PREFIX = "plyhall:"
ALL = PREFIX + "all"  # every node listens: listings, adoptions, hellos
LEASE_SECONDS = 2.0  # a node whose lease is this old is dead (unless PostgreSQL says its process still runs)
BEAT_SECONDS = 0.5  # how often a node renews its leases and looks for dead nodes
PUBLISH_SECONDS = 0.25  # the longest a change of a node's rooms waits before the other nodes hear of it
ROOM_KINDS = frozenset({"join", *ROOM_REQUESTS})
EVENT_KINDS = frozenset({"watch_tournament", "tournament_control"})
SEEK_KINDS = frozenset({"seek", "cancel_seek"})
NUMBERS = 64  # room-name numbers a node reserves at a time
UNKNOWN = "?"  # the target of a seek while no matchmaker is known

# Deletes a name's session entry only when this node still holds it (a login elsewhere may have taken it over).
_RELEASE = "if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end " \
           "return 0"


# Deletes a key only while it holds this node's name.
_FORGET = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
FIND_WAITS = (0.0, 0.05, 0.2)  # seconds before each look-up of a room nobody here knows, in the register
AWAKE_SECONDS = 0.1  # how often the event loop notes that it runs
STALL_SECONDS = 1.0  # a stall of this process longer than this is given back to the clocks of its players to move
REQUEST_SECONDS = 1.0  # a forwarded request's deadline: its owner drops it after this
CLOCK_SKEW = 0.5  # how far the nodes' wall clocks may disagree: a forwarded request is answered cluster_unavailable
# by its client's node only this long after its deadline, by which the owner drops it
CLAIMING_SECONDS = 1.0  # how long a login being decided on one node keeps the same name from another's (a retry
# elsewhere within it is told name_in_use, as two logins claiming one name at once are on one node)


def preflight(url: str, host: str, port: int, reuse_port: bool) -> str | None:
    """What keeps a node from starting, checked before it joins the cluster (a node that joined and then failed
    would be taken for dead and adopted): the Redis client missing, the cluster's Redis not answering, the port
    taken. None when it can start."""
    try:
        import redis
    except ImportError:
        return "a cluster node needs the Redis client: pip install 'plyhall[cluster]'"
    client = redis.Redis.from_url(url, socket_connect_timeout=3.0, socket_timeout=3.0)
    try:
        client.ping()
    except Exception as exc:
        return f"cannot reach the cluster's Redis: {exc}"
    finally:
        client.close()
    if port == 0:
        return None
    try:
        addresses = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as exc:
        return f"cannot listen on {host}:{port}: {exc.strerror or exc}"
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if reuse_port:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind(address)
            except OSError as exc:
                return f"cannot listen on {host}:{port}: {exc.strerror or exc}"
    return None


def channel(node: str) -> str:
    """The channel a node listens on."""
    return f"{PREFIX}to:{node}"


class ClusterLink:
    """This node's link to the others (see the module docstring); ``server`` is the node's PlyhallServer."""

    def __init__(self, server: PlyhallServer, url: str, node: str) -> None:
        self.server = server
        self.hall = server.hall
        self.url = url
        self.node = node
        self.view = ClusterView(node)
        self.hall.cluster = self.view
        self._room_changes: set[str] = set()  # rooms opened or closed since the register was written
        self._listing_changes: set[str] = set()  # rooms relisted since the listing was published
        self.hall.registry.changed = [self._room_changes, self._listing_changes]
        self.redis: Redis | None = None
        self.up = False  # Redis answered the last command
        self.live: set[str] = {node}  # nodes whose lease is current
        self.matchmaker: str | None = None  # the node that pairs every seek of the cluster
        self.stand_ins: dict[tuple[str, int], int] = {}  # (node, its connection) -> the stand-in id here
        self.homes: dict[int, tuple[str, int]] = {}  # stand-in id -> (node, connection)
        self.forwarded: dict[int, set[str]] = {}  # a connection here -> nodes holding a session of it
        self.logins: dict[int, tuple[str | None, list[str]]] = {}  # connection -> (node it takes over, nodes to attach)
        self.counts: Counter[str] = Counter()  # messages published / received / dropped, by kind
        self._next_stand_in = 0
        self._outgoing: dict[str, list[Any]] = {}
        self._flush_scheduled = False
        self._writer = resp.Writer()  # publishes and register writes, in order, without waiting for replies
        self._published = -1  # the listing version last published
        self._held: dict[str, set[str]] = {}  # name -> rooms (and @tournaments) in the register as held here
        self._tasks: list[asyncio.Task] = []
        self._adopting: set[str] = set()
        self._waiting: dict[int, list[dict[str, Any]]] = {}  # connection -> its messages behind a look-up
        self._watches: dict[int, dict[str, tuple[str, dict[str, Any]]]] = {}  # conn -> event -> (node, request)
        self._seeks: dict[int, dict[str, tuple[str, dict[str, Any]]]] = {}  # conn -> game -> (matchmaker, seek)
        # node -> requests it has not answered: (request, its deadline by this node's wall clock)
        # ... [request, its deadline by this node's wall clock, whether its owner took it (acknowledged)]
        self._asked: dict[str, dict[tuple[int, Any], list[Any]]] = {}
        self._registered: set[str] = set()  # casefolded names of this node's rooms in the register
        self._registered_version = -1
        self._ever_up = False
        self._beats_done = 0
        self.lock = "held"  # this node's database lock: held, or unverified while the database cannot say
        self._lost_at: float | None = None  # since when Redis is away (up to the last beat that held the clocks)
        self._gone_since: dict[str, float] = {}  # a node whose lease lapsed -> the clocks held up to when
        self._gone_names: dict[str, set[str]] = {}  # ... -> its players to move then, not back yet
        self._awake_at = time.monotonic()  # when the event loop last noted that it runs
        self._renewed = time.monotonic()  # when this node's lease was last renewed
        self._checking: asyncio.Future[str] | None = None  # the ownership check running now
        self._fencing = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="plyhall-fence")

    # Life cycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect to Redis (``plyhall serve`` checked it answers, see :func:`preflight`; a Redis down now is waited
        for in the background: the node serves meanwhile)."""
        from redis.asyncio import Redis
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff
        from redis.exceptions import ConnectionError as RedisConnectionError
        from redis.exceptions import TimeoutError as RedisTimeoutError

        # A pooled connection that died with a Redis that came back is not a lost Redis: a command that fails on
        # one is tried once more on a fresh connection, an idle one is checked (PING) before use, and the pool is
        # emptied when Redis is back (``_back``).
        self.redis = Redis.from_url(self.url, socket_timeout=2.0, socket_connect_timeout=2.0, health_check_interval=5,
                                    retry=Retry(NoBackoff(), 1),
                                    retry_on_error=[RedisConnectionError, RedisTimeoutError])
        try:
            await self._beat()
            await self._load_listings()
        except Exception as exc:  # the loops below keep trying
            self._down(exc)
        loops = (self._listen(), self._repeat(BEAT_SECONDS, self._beat_and_recall),
                 self._repeat(PUBLISH_SECONDS, self._publish_if_changed), self._watch_ownership(),
                 self._watch_stalls())
        self._tasks = [asyncio.create_task(loop) for loop in loops]

    async def stop(self) -> None:
        """Leave the cluster: stop listening and let the lease lapse (the rooms stay this node's in the database,
        for another node to adopt unless this one is back first). Takes a few seconds at most, whatever Redis does."""
        for task in self._tasks:
            task.cancel()
        self._writer.close()
        self._fencing.shutdown(wait=False)
        if self._tasks:  # a Redis client caught mid-command may hold on to a cancellation: never wait for it long
            await asyncio.wait(self._tasks, timeout=2.0)
        if self.redis is not None:
            try:
                if self.up and not self.server.deposed:  # the others take over at once, not when the leases lapse
                    await asyncio.wait_for(self.redis.delete(f"{PREFIX}node:{self.node}"), 1.0)
                    await asyncio.wait_for(self.redis.eval(_FORGET, 1, f"{PREFIX}matchmaker", self.node), 1.0)
                await asyncio.wait_for(self.redis.aclose(), 1.0)
            except Exception:
                pass

    def status(self) -> dict[str, Any]:
        """For /healthz and /metrics: this node, whether Redis answers, the live nodes and the matchmaker, its
        database lock (``held``, ``unverified``, ``deposed``), its epoch and how often the lock was taken again."""
        return {"node": self.node, "redis": "up" if self.up else "down", "nodes": sorted(self.live),
                "matchmaker": self.matchmaker, "remote_sessions": len(self.homes),
                "lock": "deposed" if self.server.deposed else self.lock, "epoch": self.server.storage.epoch,
                "lock_retaken": self.counts["lock_retaken"]}

    def deposed(self) -> None:
        """This node was deposed (``PlyhallServer.depose``): it stops taking part (it says nothing more to the
        other nodes; its lease lapses, and a process started again under its name takes over)."""
        self._outgoing = {}
        self._send(ALL, ["deposed"])  # the others stop counting on it at once, and hold its players' clocks
        self._flush()
        for task in self._tasks:
            task.cancel()
        self._writer.close()

    async def _watch_stalls(self) -> None:
        """A stall of this process (stopped, swapped out, a paused VM) is an outage: the players to move could not
        have their moves taken meanwhile, so the time is given back to their clocks."""
        while True:
            self.awake()
            await asyncio.sleep(AWAKE_SECONDS)

    def awake(self) -> None:
        """The event loop runs: when it had not for more than STALL_SECONDS (this process was stopped), the players
        to move get that time back, before any message that waited meanwhile is handled (the server calls this
        first for every message of a client; the Redis listener, for every message of another node)."""
        now = time.monotonic()
        stalled, self._awake_at = now - self._awake_at - AWAKE_SECONDS, now
        if stalled > STALL_SECONDS:
            log.warning("this node stalled for %.1f s: the players to move in its rooms get that time back", stalled)
            self._give_back(stalled, lambda name, session: True)

    def _give_back(self, seconds: float, whose: Callable[[str, Any], bool]) -> None:
        """Give ``seconds`` back to the running clock of every room of this node whose player to move ``whose``
        (its name, and its session here or None) says had no part in them."""
        now = time.monotonic()
        for room in list(self.hall.registry.rooms.values()):
            clocks = room.clocks
            if clocks is None or clocks.running is None or len(room.players) != 2:
                continue
            name = room.players[clocks.running]
            if whose(name, self.hall.by_name.get(name)):
                credit_wait(room, seconds, now)

    def _lapsed(self, node: str, since: float) -> None:
        """``node`` stopped renewing its lease about ``since``: the players to move in this node's rooms who are
        connected through it are noted, for their clocks to be held until they are back (:meth:`_hold_gone_clocks`)."""
        if node in self._gone_since:
            return
        self._gone_since[node] = since
        names = self._gone_names.setdefault(node, set())
        for room in self.hall.registry.rooms.values():
            clocks = room.clocks
            if clocks is not None and clocks.running is not None and len(room.players) == 2:
                session = self.hall.by_name.get(room.players[clocks.running])
                if session is not None and session.conn < 0 and self.homes.get(session.conn, ("",))[0] == node:
                    names.add(session.name)

    def _hold_gone_clocks(self, node: str, back: bool = False) -> None:
        """While ``node``'s lease has lapsed (stalled, or dying), its players to move in this node's rooms cannot
        move, nor hear they should: every beat, and when it lives again (``back``), the time since the last is
        given back to them, until each is connected again (through that node or another)."""
        since = self._gone_since.get(node)
        if since is None:
            return
        now = time.monotonic()
        names = self._gone_names.get(node, set())

        def away(session: Any) -> bool:
            return session.conn < 0 and self.homes.get(session.conn, ("",))[0] == node

        self._give_back(now - since, lambda name, session: name in names and (session is None or away(session)))
        names.difference_update({name for name in names if (session := self.hall.by_name.get(name)) is not None
                                 and not away(session)})
        if back:
            del self._gone_since[node]
            self._gone_names.pop(node, None)
        else:
            self._gone_since[node] = now

    def _returned(self, node: str) -> None:
        """``node`` lives again after its lease lapsed."""
        self._hold_gone_clocks(node, back=True)

    async def _watch_ownership(self) -> None:
        """Every beat, prove that this node still owns its rooms (see the module docstring)."""
        while True:
            await asyncio.sleep(BEAT_SECONDS)
            await self._check_ownership()

    async def _check_ownership(self) -> None:
        """One proof, on a thread of its own (a database that hangs holds up nothing else); a check running
        already is waited for rather than doubled."""
        from ..storage import Deposed, StorageError

        if self._checking is None:
            self._checking = asyncio.get_running_loop().run_in_executor(
                self._fencing, self.server.storage.check_ownership)
            # its outcome is read below; should the waiting task be cancelled first (the node deposed), it is read here
            self._checking.add_done_callback(lambda done: done.cancelled() or done.exception())
        checking = self._checking
        try:
            result = await asyncio.shield(checking)
        except Deposed as exc:
            self.server.depose(str(exc))
            return
        except (StorageError, Exception) as exc:  # the database cannot say now: tried again at the next beat
            if self.lock == "held":
                log.error("cannot prove this node still holds its database lock (%s): its writes wait until it can",
                          exc)
            self.lock = "unverified"
            return
        finally:
            if self._checking is checking:
                self._checking = None
        if result == "retaken":
            self.counts["lock_retaken"] += 1
            log.warning("this node's database lock had been lost (its connection dropped); taken again, before any "
                        "other node adopted its rooms (epoch %s)", self.server.storage.epoch)
        elif self.lock != "held":
            log.warning("this node's database lock is proven held again")
        self.lock = "held"

    # Requests of this node's clients --------------------------------------------------------

    def take(self, conn: int, msg: dict[str, Any]) -> bool:
        """Take ``msg`` of connection ``conn`` when it is another node's business or needs a look-up in the
        cluster first (False: the hall here answers it now). A connection's messages keep their order: while
        one waits for its look-up, the ones after it wait too."""
        waiting = self._waiting.get(conn)
        if waiting is not None:
            waiting.append(msg)
            return True
        return self._process(conn, msg)

    def _process(self, conn: int, msg: dict[str, Any]) -> bool:
        step = self._step(conn, msg)
        if step is not None:
            self._waiting[conn] = []
            asyncio.create_task(self._run(conn, step, msg))
            return True
        return self.forward(conn, msg)

    def _step(self, conn: int, msg: dict[str, Any]) -> Coroutine[Any, Any, None] | None:
        """The look-up ``msg`` needs before it can be answered or forwarded, if any."""
        kind = msg["type"]
        if kind == "login":
            return self.login(conn, msg)
        if conn not in self.hall.sessions:
            return None
        if kind == "create_room" and msg.get("name") is not None:
            return self._reserve(conn, msg)
        if kind in ROOM_KINDS and self.hall.registry.find(msg["room"]) is None and self.view.owner(msg["room"]) is None:
            return self._find(conn, msg)
        return None

    async def _run(self, conn: int, step: Coroutine[Any, Any, None], msg: dict[str, Any]) -> None:
        try:
            await step
        except Exception:
            log.exception("a cluster look-up failed")
            self._reply_error(conn, msg, ErrorCode.BAD_MESSAGE, "the server could not handle this message")
        finally:
            waiting = self._waiting.pop(conn, [])
            while waiting and conn in self.server.connections:
                msg = waiting.pop(0)
                if not self._process(conn, msg):
                    self._local(conn, msg)
                if conn in self._waiting:  # that one waits for a look-up of its own: the rest wait behind it
                    self._waiting[conn].extend(waiting)
                    break

    def _local(self, conn: int, msg: dict[str, Any]) -> None:
        connection = self.server.connections.get(conn)
        if connection is not None:
            self.server.handle(connection, msg, time.monotonic())  # type: ignore[arg-type]

    async def _reserve(self, conn: int, msg: dict[str, Any]) -> None:
        """A room name is unique across the cluster: it is reserved in the register before the room opens."""
        name = " ".join(msg["name"].split())
        if self.hall.registry.taken(name):
            self._local(conn, msg)  # the hall says it exists
            return
        key = name.casefold()
        try:
            assert self.redis is not None
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.hsetnx(f"{PREFIX}rooms", key, self.node)
                pipe.hget(f"{PREFIX}rooms", key)
                _, owner = await pipe.execute()
        except Exception as exc:
            self._down(exc)
            self._unreachable(conn, msg, "the cluster's register of rooms")
            return
        owner = owner.decode() if owner else self.node
        if owner != self.node and owner in self.live:
            self._reply_error(conn, msg, ErrorCode.ROOM_EXISTS, f"a room called {name} exists already")
            return
        if owner != self.node:  # left by a node that is gone: the name is free again
            self._command("hset", f"{PREFIX}rooms", key, self.node)
        self._registered.add(key)
        self._local(conn, msg)
        if not self.hall.registry.taken(name):  # refused (an option, a quota): the name is free again
            self._registered.discard(key)
            self._command("eval", _RELEASE, 1, f"{PREFIX}rooms", key, self.node)

    async def _find(self, conn: int, msg: dict[str, Any]) -> None:
        """A room neither here nor in the listings yet (opened a moment ago elsewhere): ask the register."""
        try:
            assert self.redis is not None
            key = " ".join(msg["room"].split()).casefold()
            owner = None
            for wait in FIND_WAITS:  # the owner's register write, sent before its client heard of the room, may
                await asyncio.sleep(wait)  # reach Redis just after this look-up on a busy host: asked again
                owner = await self.redis.hget(f"{PREFIX}rooms", key)
                if owner is not None or self.hall.registry.find(msg["room"]) is not None or self.view.owner(
                        msg["room"]) is not None:
                    break
            owner = owner.decode() if owner else None
            if owner is not None and owner != self.node and owner not in self.live \
                    and await self.redis.exists(f"{PREFIX}node:{owner}"):
                self.live.add(owner)  # a node started a moment ago: its lease is there
        except Exception as exc:
            self._down(exc)
            owner = None
        if owner is not None and owner != self.node:  # a node that is not live: cluster_unavailable, not no_such_room
            self.view.route(msg["room"], owner)
        if not self.forward(conn, msg):
            self._local(conn, msg)

    def forward(self, conn: int, msg: dict[str, Any]) -> bool:
        """Send ``msg`` of connection ``conn`` to the node it is for; False when this node answers it itself."""
        session = self.hall.sessions.get(conn)
        if session is None:
            return False
        target = self._target(msg)
        if target is None or target == self.node:
            if msg["type"] in SEEK_KINDS:  # kept too: handed to the next matchmaker should this node lose the lease
                self._remember(conn, msg, self.node)
            return False
        if not self.up or target not in self.live:
            self._unreachable(conn, msg, "the cluster's matchmaker" if target == UNKNOWN else f"node {target}")
            return True
        self.forwarded.setdefault(conn, set()).add(target)
        self._remember(conn, msg, target)
        deadline = time.time() + REQUEST_SECONDS  # the owner drops it after this (it may have been answered here)
        if msg.get("id") is not None:  # answered with an error should its node die before it answers
            self._asked.setdefault(target, {})[(conn, msg["id"])] = [msg, deadline, False]
        address = self.hall.addresses.get(conn, "?")
        self._send(target, ["req", conn, session.name, session.coords, address, session.organiser, msg, deadline])
        return True

    def _target(self, msg: dict[str, Any]) -> str | None:
        """The node ``msg`` is for (None: this one; UNKNOWN: the matchmaker, unknown while Redis is away)."""
        kind = msg["type"]
        if kind in ROOM_KINDS:
            return None if self.hall.registry.find(msg["room"]) is not None else self.view.owner(msg["room"])
        if kind in SEEK_KINDS:
            return self.matchmaker or (None if self.up else UNKNOWN)
        if kind == "create_room" and msg.get("opponent") is not None:
            return self._house_elsewhere()
        if kind in EVENT_KINDS:
            key = msg["tournament"]
            if key not in self.hall.tournaments and slug(key) not in self.hall.tournaments:
                return self.view.events.get(key) or self.view.events.get(slug(key))
        return None

    def _remember(self, conn: int, msg: dict[str, Any], target: str) -> None:
        """Standing requests (waiting seeks, watched tournaments) are made again where their business goes if
        ``target`` dies."""
        kind, request = msg["type"], {k: v for k, v in msg.items() if k != "id"}
        if kind in SEEK_KINDS:
            seeks = self._seeks.setdefault(conn, {})
            if kind == "seek":
                seeks[msg["game"]] = (target, request)
            else:
                seeks.pop(msg["game"], None)
        elif kind == "watch_tournament":
            watches = self._watches.setdefault(conn, {})
            if msg.get("on", True):
                watches[msg["tournament"]] = (target, request)
            else:
                watches.pop(msg["tournament"], None)

    def _house_elsewhere(self) -> str | None:
        """The node with the most free house bots when this node's are all playing (the cluster's house bots
        serve any node's players, within their total), else None."""
        house = self.hall.house
        if len(house.running) < house.limit:
            return None
        free = [(count, node) for node, count in self.view.house_free.items() if count > 0 and node in self.live]
        return max(free)[1] if free else None

    def _unreachable(self, conn: int, msg: dict[str, Any], what: str) -> None:
        self._reply_error(conn, msg, ErrorCode.CLUSTER_UNAVAILABLE, f"{what} cannot be reached now (the cluster's "
                          f"Redis is {'up' if self.up else 'down'}); try again in a few seconds")

    def _answer_unreachable(self, node: str, expired: float | None = None) -> None:
        """Answer ``cluster_unavailable`` to the requests ``node`` has not answered: those it never took (never
        acknowledged) whose deadline is before ``expired``, lost on the way (Redis away) or waiting for a node that
        stalled; all when None (``node`` was adopted). The owner drops a request it gets after its deadline, so
        none of them can be executed after its client was told it failed (nodes' clocks agreeing within
        CLOCK_SKEW); one it took is answered by it."""
        asked = self._asked.get(node, {})
        for key, (request, deadline, taken) in sorted(asked.items(), key=lambda item: str(item[0])):
            if expired is None or (deadline < expired and not taken):
                del asked[key]
                self._unreachable(key[0], request, f"node {node}")
        if not asked:
            self._asked.pop(node, None)

    def _reply_error(self, conn: int, msg: dict[str, Any], code: str, text: str) -> None:
        """Answer ``msg`` of connection ``conn`` (here) with an error (its ``id``, and its ``room`` if it named one)."""
        error = m.error(code, text)
        if "room" in msg:
            error["room"] = msg["room"]
        if msg.get("id") is not None:
            error["id"] = msg["id"]
        connection = self.server.connections.get(conn)
        if connection is not None:
            connection.push(error)

    async def login(self, conn: int, msg: dict[str, Any]) -> None:
        """Look up who holds ``msg``'s name on other nodes, then let the hall decide the login as if they were
        here. Without Redis, only a name this node holds (or nobody here has heard of) can be decided: it is."""
        name = msg["name"]
        holder, seats, nodes, previous = Holder.NOBODY, [], [], None
        try:
            assert self.redis is not None
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.hget(f"{PREFIX}sessions", name)
                pipe.hgetall(f"{PREFIX}held:{name}")
                pipe.hget(f"{PREFIX}tokens", name)
                if msg.get("secret") is not None:  # a login that may claim the name marks it while it is decided
                    pipe.set(f"{PREFIX}claiming:{name}", self.node, px=int(CLAIMING_SECONDS * 1000), nx=True)
                pipe.get(f"{PREFIX}claiming:{name}")
                session_node, held, digest, *_, claiming = await pipe.execute()
        except Exception as exc:
            self._down(exc)
            if self.hall.holder(name, conn) is Holder.NOBODY and conn in self.server.connections:
                self._unreachable(conn, msg, "the cluster's register of names")
                return
        else:
            self._mark_up()
            here = self.node.encode()
            session_node = session_node.decode() if session_node else None
            if session_node is not None and session_node != self.node and session_node in self.live:
                holder, previous = Holder.SESSION, session_node
            elsewhere = {room.decode(): node.decode() for room, node in held.items()
                         if node != here and node.decode() in self.live}
            if elsewhere and holder is Holder.NOBODY and digest:  # as here: only a name that has logged in is held
                seated = any(not room.startswith("@") for room in elsewhere)
                holder = Holder.SEAT if seated else Holder.ENTRY
            claiming = claiming.decode() if claiming else self.node
            if holder is Holder.NOBODY and claiming != self.node and claiming in self.live:
                holder = Holder.CLAIMING  # a login for the name is being decided on another node right now
            seats = sorted(room for room in elsewhere if not room.startswith("@"))
            nodes = sorted(set(elsewhere.values()))
            if digest and holder is not Holder.NOBODY:
                self.hall.logins.identities[name] = digest.decode()
        self.view.holders[name] = holder
        self.view.seats[name] = seats
        if conn not in self.server.connections:
            return
        self.logins[conn] = (previous, nodes, name)
        self.server.dispatch(self.hall.handle(conn, msg, time.monotonic()))

    def changed(self) -> None:
        """The hall's outbox was delivered: register rooms opened here (and release closed ones), and the
        seats taken and given up, at once."""
        if self.hall.held_changed:
            names, self.hall.held_changed = self.hall.held_changed, set()
            self._publish_held(names)
        if self.hall.listing_version == self._registered_version:
            return
        self._registered_version = self.hall.listing_version
        rooms = self.hall.rooms
        # the rooms changed since the last listing was published (all of them, after Redis was away)
        changes = set(self._room_changes)  # emptied in place: the registry keeps writing into this very set
        self._room_changes.clear()
        for name in sorted(changes) if self._registered else sorted(rooms):
            key = name.casefold()
            if name in rooms and key not in self._registered:
                self._command("hset", f"{PREFIX}rooms", key, self.node)
                self._registered.add(key)
            elif name not in rooms and key in self._registered:
                self._command("eval", _RELEASE, 1, f"{PREFIX}rooms", key, self.node)
                self._registered.discard(key)

    def welcomed(self, conn: int, name: str) -> None:
        """Connection ``conn`` logged in as ``name`` here: register the session, take it over from another node,
        and attach its seats on the nodes that hold them."""
        previous, nodes, _ = self.logins.pop(conn, (None, [], name))
        self.view.holders.pop(name, None)
        self.view.seats.pop(name, None)
        digest = self.hall.logins.identities.get(name)
        self._command("hset", f"{PREFIX}sessions", name, self.node)
        self._command("eval", _FORGET, 1, f"{PREFIX}claiming:{name}", self.node)
        if digest:
            self._command("hset", f"{PREFIX}tokens", name, digest)
        if previous is not None and previous != self.node:
            self._send(previous, ["takeover", name])
        session = self.hall.sessions.get(conn)
        if session is None:
            return
        for node in nodes:
            if node != self.node and node in self.live:
                self._attach(node, conn, session)

    def _attach(self, node: str, conn: int, session: Any) -> None:
        self.forwarded.setdefault(conn, set()).add(node)
        self._send(node, ["attach", conn, session.name, session.coords, self.hall.addresses.get(conn, "?"),
                          session.organiser])

    def disconnected(self, conn: int) -> None:
        """A connection of this node closed: the nodes that hold a session of it are told."""
        login = self.logins.pop(conn, None)
        if login is not None:  # a login that never ended: what its look-up learned goes
            self.view.holders.pop(login[2], None)
            self.view.seats.pop(login[2], None)
        self._waiting.pop(conn, None)
        for asked in self._asked.values():
            for key in [key for key in asked if key[0] == conn]:
                del asked[key]
        self._watches.pop(conn, None)
        self._seeks.pop(conn, None)
        for node in sorted(self.forwarded.pop(conn, ())):
            self._send(node, ["gone", conn])
        session = self.hall.sessions.get(conn)
        if session is not None and self.hall.by_name.get(session.name) is session:
            self._command("eval", _RELEASE, 1, f"{PREFIX}sessions", session.name, self.node)

    # What this node's hall sends to stand-ins ------------------------------------------------

    def deliver(self, stand_in: int, msg: dict[str, Any]) -> None:
        """A message for a client of another node."""
        home = self.homes.get(stand_in)
        if home is not None:
            self._send(home[0], ["msg", home[1], msg])

    def close(self, stand_in: int, reason: str) -> None:
        """The hall closes a stand-in (its name logged in again): the real connection on its node closes."""
        home = self.homes.pop(stand_in, None)
        if home is not None:
            self.stand_ins.pop(home, None)
            self._send(home[0], ["close", home[1], reason])

    # Redis: publishing ----------------------------------------------------------------------

    def _send(self, node: str, item: list[Any]) -> None:
        """Queue ``item`` for ``node``; everything queued in one turn of the event loop goes in one message."""
        self._outgoing.setdefault(node, []).append(item)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        pack = msgpack.packb
        batch = [["PUBLISH", ALL if node == ALL else channel(node), pack([self.node, items], use_bin_type=True)]
                 for node, items in self._outgoing.items()]
        self._outgoing = {}
        self._write(batch)

    def _command(self, *args: Any) -> None:
        """Run a Redis command in order with the published messages (its failure only marks Redis down)."""
        self._write([args])

    def _write(self, commands: list[Any]) -> None:
        """Write ``commands`` to Redis now, without waiting for their replies (dropped while Redis is away, and
        once this node is deposed: it has left)."""
        if self.server.deposed and self._writer.open is False:
            return
        if self.up and self._writer.write(commands):
            self.counts["published"] += len(commands)
            return
        self.counts["dropped"] += len(commands)
        if self.up:
            self._down(ConnectionError("the connection for publishing broke"))

    async def _repeat(self, seconds: float, step: Callable[[], Awaitable[None]]) -> None:
        """Run ``step`` every ``seconds`` for as long as the link lives; a failure only marks Redis down."""
        while True:
            await asyncio.sleep(seconds)
            try:
                await step()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._down(exc)

    async def _publish_if_changed(self) -> None:
        """Publish this node's listing when it changed (the loop runs it every PUBLISH_SECONDS)."""
        if self.up and self.hall.listing_version != self._published:
            await self._publish_listing()

    async def _publish_listing(self) -> None:
        """The whole listing (at the start, and for a node that says hello), else the rooms that changed."""
        assert self.redis is not None
        version, whole = self.hall.listing_version, self._published < 0
        house, registry = self.hall.house, self.hall.registry
        free = max(0, house.limit - len(house.running))
        changed = set(self._listing_changes)
        self._listing_changes.clear()
        if whole:
            item = ["listing", self.hall.local_listing(), self.hall.events.summaries(), free]
        else:
            rooms = {name: registry.rooms[name].listing() if name in registry.rooms else None for name in changed}
            item = ["rooms", rooms, self.hall.events.summaries(), free]
        payload = msgpack.packb([self.node, [item]], use_bin_type=True)
        async with self.redis.pipeline(transaction=False) as pipe:
            if whole:
                pipe.set(f"{PREFIX}listing:{self.node}", payload)
            pipe.publish(ALL, payload)
            await pipe.execute()
        self._published = version

    def _held_rooms(self, name: str) -> set[str]:
        """What holds ``name`` here: its seats, and its entries (``@`` and the tournament) in events going on."""
        held = set(self.hall.seat_holders.get(name, ()))
        director = self.hall.events.entrant(name)
        if director is not None:
            held.add("@" + director.id)
        return held

    def _publish_held(self, names: Iterable[str]) -> None:
        """Put the seats and entries of ``names`` held here in the register (a login elsewhere finds them)."""
        for name in sorted(names):
            now = self._held_rooms(name)
            before = self._held.get(name, set())
            for room in sorted(now - before):
                self._command("hset", f"{PREFIX}held:{name}", room, self.node)
            for room in sorted(before - now):
                self._command("hdel", f"{PREFIX}held:{name}", room)
            if now:
                self._held[name] = now
            else:
                self._held.pop(name, None)

    # Redis: leases, dead nodes, listings --------------------------------------------------------

    async def _beat_and_recall(self) -> None:
        """A beat; and every 20 beats (10 s), the nodes the database knows (Redis forgets its members when
        restarted)."""
        self._beats_done += 1
        if not self.up:
            self._hold_remote_clocks()
        late = time.monotonic() - self._renewed
        if late > LEASE_SECONDS:  # stalled, or Redis was away: other nodes may have adopted this one's rooms
            if self.up:
                log.warning("this node's lease went %.1f s without renewal: proving it still owns its rooms", late)
            self._renewed = time.monotonic()  # (once a lease's time while Redis stays away)
            await self._check_ownership()
            if self.server.deposed:
                return
        if self._beats_done % 20 == 0:
            await self._recall_members()
        await self._beat()

    async def _beat(self) -> None:
        """Renew this node's lease (and the matchmaker's, or take it), learn which nodes live, adopt dead ones."""
        assert self.redis is not None
        if not self._writer.open:
            await self._writer.connect(self.url)
        if len(self.view.numbers) < NUMBERS // 2:  # generated room names: a block of numbers nobody else uses
            end = await self.redis.incrby(f"{PREFIX}lakes", NUMBERS)
            self.view.numbers.extend(range(end - NUMBERS, end))
        ttl = int(LEASE_SECONDS * 1000)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(f"{PREFIX}node:{self.node}", str(time.time()), px=ttl)
            pipe.sadd(f"{PREFIX}members", self.node)
            pipe.set(f"{PREFIX}matchmaker", self.node, px=ttl, nx=True)
            pipe.get(f"{PREFIX}matchmaker")
            pipe.smembers(f"{PREFIX}members")
            _, _, _, matchmaker, members = await pipe.execute()
        self._renewed = time.monotonic()
        matchmaker = matchmaker.decode() if matchmaker else None
        if matchmaker == self.node:
            await self.redis.pexpire(f"{PREFIX}matchmaker", ttl)
        names = sorted(member.decode() for member in members)
        async with self.redis.pipeline(transaction=False) as pipe:
            for name in names:
                pipe.exists(f"{PREFIX}node:{name}")
            leases = await pipe.execute()
        live = {name for name, lease in zip(names, leases, strict=True) if lease} | {self.node}
        self._live_now(live)
        if self.matchmaker == self.node and matchmaker not in (None, self.node):
            self._hand_over(matchmaker)  # the lease went elsewhere (Redis restarted): the waiting seeks go with it
        if matchmaker is not None and matchmaker != self.matchmaker:
            self._new_matchmaker(matchmaker)
        self.matchmaker = matchmaker
        self._mark_up()
        for dead in sorted(set(names) - live):
            if dead not in self._adopting:
                self._adopting.add(dead)
                asyncio.create_task(self._adopt(dead))

    def _live_now(self, live: set[str]) -> None:
        """The nodes whose leases are current are ``live``: a node that lapsed keeps its rooms listed (they answer
        cluster_unavailable until adopted) and its players' clocks held; its unanswered requests are answered."""
        for gone in self.live - live:
            log.warning("node %s stopped renewing its lease", gone)
            self._lapsed(gone, time.monotonic() - LEASE_SECONDS)  # about when it renewed it last
        for back in sorted(live - self.live):
            self._returned(back)
        for gone in sorted(set(self._gone_since) - live):
            self._hold_gone_clocks(gone)
        self.live = live
        for node in sorted(self._asked):
            self._answer_unreachable(node, time.time() - CLOCK_SKEW)

    def _hand_over(self, matchmaker: str) -> None:
        """This node paired the seeks and another does now, this node living on: every seek waiting here is
        withdrawn and made again there, by the node of its player."""
        for waiting in list(self.hall.seeks.seeks.values()):
            for seek in list(waiting):
                game = seek.settings.game.id
                self.hall.seeks.drop(seek.name, game, keep_ladder=True)
                session = self.hall.by_name.get(seek.name)
                if session is None:
                    continue
                if session.conn < 0:
                    home = self.homes.get(session.conn)
                    if home is not None:
                        self._send(home[0], ["reseek", home[1], game, matchmaker])
                else:
                    self._reseek(session.conn, game, matchmaker)

    def _reseek(self, conn: int, game: str, matchmaker: str) -> None:
        """Make the seek of connection ``conn`` for ``game`` again at ``matchmaker``."""
        entry = self._seeks.get(conn, {}).get(game)
        session = self.hall.sessions.get(conn)
        if entry is None or session is None:
            return
        self._seeks[conn][game] = (matchmaker, entry[1])
        if matchmaker == self.node:
            self._local(conn, entry[1])
        else:
            self.forwarded.setdefault(conn, set()).add(matchmaker)
            self._send(matchmaker, ["req", conn, session.name, session.coords, self.hall.addresses.get(conn, "?"),
                                    session.organiser, entry[1]])

    def _on_reseek(self, sender: str, item: list[Any], now: float) -> None:
        self._reseek(item[1], item[2], item[3])

    def _new_matchmaker(self, matchmaker: str) -> None:
        """Another node pairs the seeks now: the seeks this node's clients made at one that died are made again."""
        for conn, seeks in sorted(self._seeks.items()):
            for game, (node, request) in sorted(seeks.items()):
                if node not in self.live and conn in self.hall.sessions:  # never twice at two live matchmakers
                    seeks[game] = (matchmaker, request)
                    session = self.hall.sessions[conn]
                    if matchmaker == self.node:
                        self._local(conn, request)
                    else:
                        self.forwarded.setdefault(conn, set()).add(matchmaker)
                        self._send(matchmaker, ["req", conn, session.name, session.coords,
                                                self.hall.addresses.get(conn, "?"), session.organiser, request])

    async def _recall_members(self) -> None:
        """Put every node that has rooms or tournaments in the database among the members: one that died while
        Redis was away (which forgot the members) is adopted all the same."""
        assert self.redis is not None
        loop = asyncio.get_running_loop()
        nodes = await loop.run_in_executor(self.server.reads, self.server.storage.nodes)
        if nodes:
            await self.redis.sadd(f"{PREFIX}members", *nodes)

    async def _adopt(self, dead: str) -> None:
        """Take over ``dead``'s rooms and tournaments, unless its process still runs (then it keeps them)."""
        loop = asyncio.get_running_loop()
        try:
            restored = await loop.run_in_executor(self.server.reads, self.server.storage.adopt, dead)
            if restored is None:
                return  # its process still holds its lock in PostgreSQL (cut off from Redis only), or it is us
            assert self.redis is not None
            await self.redis.srem(f"{PREFIX}members", dead)
            await self.redis.delete(f"{PREFIX}listing:{dead}")
            names: list[str] = []
            if restored.rooms or restored.tournaments:
                out, names = self.hall.adopt(restored, time.monotonic())
                self.server.dispatch(out)
                self._publish_held([*names, *(name for director in self.hall.tournaments.values()
                                              for name in director.entrants)])
                log.warning("adopted %d rooms and %d tournaments of node %s (its lease lapsed, its database lock was "
                            "free)", len(restored.rooms),
                            len(restored.tournaments), dead)
                await self._publish_listing()
            self._send(ALL, ["adopted", dead, names])
            self._adopted(self.node, dead, ())
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("could not adopt the rooms of node %s", dead)
        finally:
            self._adopting.discard(dead)

    async def _load_listings(self) -> None:
        assert self.redis is not None
        for key in await self.redis.keys(f"{PREFIX}listing:*"):
            payload = await self.redis.get(key)
            if payload:
                self._receive(payload)

    def _down(self, exc: BaseException) -> None:
        if self.up:
            log.error("lost the cluster's Redis at %s (%s): rooms of other nodes are out of reach until it is back",
                      self.url, exc)
            self._lost_at = time.monotonic()
        self.up = False

    def _hold_remote_clocks(self) -> None:
        """While Redis is away, the clock of a player of another node whose turn it is does not run (what this
        node sends that player is lost meanwhile, and its moves cannot arrive): every beat, and when Redis is
        back, the time since the last is given back to it."""
        if self._lost_at is None:
            return
        now = time.monotonic()
        seconds, self._lost_at = now - self._lost_at, (None if self.up else now)
        # a stand-in: the player is on another node
        self._give_back(seconds, lambda name, session: session is not None and session.conn < 0)

    def _back(self, again: bool) -> None:
        """Redis answers (``again``: after it was lost): publish this node's listing and register, and re-attach
        the sessions of other nodes' rooms (their owners resend the full state: what was sent meanwhile was
        lost)."""
        if again:
            log.warning("the cluster's Redis is back")
            self._hold_remote_clocks()
            if self.redis is not None:  # its idle pooled connections died with it: a fresh pool
                self._tasks.append(asyncio.create_task(self.redis.connection_pool.disconnect(inuse_connections=False)))
        self._published = -1
        self._held = {}
        self._publish_held(set(self.hall.seat_holders) | {name for director in self.hall.tournaments.values()
                                                            for name in director.entrants})
        for conn, session in sorted(self.hall.sessions.items()):  # Redis may have lost them (a restart)
            if conn >= 0 and self.hall.by_name.get(session.name) is session:
                self._command("hset", f"{PREFIX}sessions", session.name, self.node)
                digest = self.hall.logins.identities.get(session.name)
                if digest:
                    self._command("hset", f"{PREFIX}tokens", session.name, digest)
        self._registered_version = -1
        self._registered = set()
        self._resync()

    def _mark_up(self) -> None:
        """Redis answered: after it was away (or at the start), this node catches up with the others."""
        if not self.up:
            again = self._ever_up
            self.up = self._ever_up = True
            self._back(again)

    def _listening(self) -> None:
        """Subscribed (again): catch up (once Redis answered after it was away, or now)."""
        if self.up:
            self._resync()
        else:
            self._mark_up()

    def _resync(self) -> None:
        """The other nodes resend what this node missed (their hello handler), and this node's clients are attached
        again on the nodes they have business with (which resend the full state). Done whenever this node
        subscribes or Redis answers again: whichever of two nodes catches up last, the attachments reach a node
        that listens."""
        self._send(ALL, ["hello", sorted(self.forwarded)])
        for conn, nodes in sorted(self.forwarded.items()):
            session = self.hall.sessions.get(conn)
            if session is not None:
                for node in sorted(nodes):
                    self._attach(node, conn, session)

    # Redis: receiving -----------------------------------------------------------------------

    async def _listen(self) -> None:
        while True:
            try:
                async for payload in resp.subscribed(self.url, [channel(self.node), ALL]):
                    if payload is not None:
                        self._receive(payload)
                        continue
                    if not self._writer.open:
                        await self._writer.connect(self.url)
                    self._listening()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._down(exc)
                await asyncio.sleep(0.5)

    def _receive(self, payload: bytes) -> None:
        self.awake()
        try:
            sender, items = msgpack.unpackb(payload, raw=False, strict_map_key=False)
        except Exception:
            log.exception("an undecodable cluster message")
            return
        if sender == self.node:
            return
        self.counts["received"] += 1
        if sender not in self.live:
            self._returned(sender)
        self.live.add(sender)  # it speaks: it lives (a node that just started may not have renewed a lease we saw)
        for item in items:
            try:
                self._handle(sender, item)
            except Exception:  # one bad item must not cost the others, nor the listener
                log.exception("could not handle cluster message %s from %s", item[0] if item else "?", sender)

    def _handle(self, sender: str, item: list[Any]) -> None:
        handler = self._handlers.get(item[0])
        if handler is None:
            log.warning("unknown cluster message %r from %s", item[0], sender)
            return
        handler(self, sender, item, time.monotonic())

    def _on_msg(self, sender: str, item: list[Any], now: float) -> None:
        """A message for a client of this node, from the node that owns its room."""
        conn, msg = item[1], item[2]
        if "id" in msg:
            self._asked.get(sender, {}).pop((conn, msg["id"]), None)
        room = msg.get("room")
        if isinstance(room, str):
            self.view.route(room, sender)
        if msg["type"] == "game_start" and not msg.get("paused"):  # a seek of this game was answered
            seek = self._seeks.get(conn, {}).get(msg.get("game", ""))
            if seek is not None and not seek[1].get("ladder"):
                del self._seeks[conn][msg["game"]]
        connection = self.server.connections.get(conn)
        if connection is not None and not connection.push(msg):
            self.server._close(connection, 1008, "too slow: too many unsent messages")

    def _on_request(self, sender: str, item: list[Any], now: float) -> None:
        """A request of a client of ``sender`` about something of this node's; dropped (answered
        ``cluster_unavailable``) once past its deadline: ``sender`` may have told its client it failed."""
        _, conn, name, coords, address, organiser, msg = item[:7]
        if len(item) > 7 and item[7] is not None and time.time() > item[7]:
            self.counts["stale"] += 1
            if isinstance(msg, dict) and msg.get("id") is not None:
                error = m.error(ErrorCode.CLUSTER_UNAVAILABLE, f"node {self.node} got this request too late to "
                                "answer it (it was not executed); try again")
                error["id"] = msg["id"]
                if isinstance(msg.get("room"), str):
                    error["room"] = msg["room"]
                self._send(sender, ["msg", conn, error])
            return
        if isinstance(msg, dict) and msg.get("id") is not None:  # taken: its answer comes from here, in time or not
            self._send(sender, ["ack", conn, msg["id"]])
        stand_in = self._stand_in(sender, conn, name, coords, address, organiser, now)
        request = validate_request(msg)
        if isinstance(request, Exception):
            self.deliver(stand_in, request.to_message())
            return
        self.server.dispatch(self.hall.handle(stand_in, request, now))

    def _on_attach(self, sender: str, item: list[Any], now: float) -> None:
        _, conn, name, coords, address, organiser = item
        self._stand_in(sender, conn, name, coords, address, organiser, now, resume=True)

    def _on_gone(self, sender: str, item: list[Any], now: float) -> None:
        stand_in = self.stand_ins.pop((sender, item[1]), None)
        if stand_in is not None:
            del self.homes[stand_in]
            self.server.dispatch(self.hall.disconnect(stand_in, now))

    def _on_close(self, sender: str, item: list[Any], now: float) -> None:
        connection = self.server.connections.get(item[1])
        if connection is not None:
            self.server._close(connection, 1000, item[2])

    def _on_listing(self, sender: str, item: list[Any], now: float) -> None:
        """``sender``'s whole listing (``listing``), or the rooms of it that changed (``rooms``)."""
        if item[0] == "listing":
            changed = self.view.learn(sender, item[1], item[2])
        else:
            changed = self.view.update(sender, item[1], item[2])
        self.view.house_free[sender] = item[3]
        if not changed:  # the lobby's watchers hear of changes only
            return
        self.live.add(sender)
        self.server.dispatch(self.hall.lobby_changed_elsewhere(now))

    def _on_hello(self, sender: str, item: list[Any], now: float) -> None:
        """``sender`` listens (again, after Redis was away): it hears this node's listing at the next publish, and
        this node's clients with business there are attached to it again (it resends them the full state)."""
        self._published = -1
        alive = set(item[1]) if len(item) > 1 else None  # its connections with business elsewhere
        for key in [key for key in self.stand_ins if key[0] == sender and alive is not None and key[1] not in alive]:
            stand_in = self.stand_ins.pop(key)  # its "gone" was lost (Redis away), or it started again
            del self.homes[stand_in]
            self.server.dispatch(self.hall.disconnect(stand_in, now))
        for conn, nodes in sorted(self.forwarded.items()):
            session = self.hall.sessions.get(conn)
            if sender in nodes and session is not None:
                self._attach(sender, conn, session)
                for node, request in list(self._watches.get(conn, {}).values()):
                    if node == sender:
                        self._send(sender, ["req", conn, session.name, session.coords,
                                            self.hall.addresses.get(conn, "?"), session.organiser, request])

    def _on_takeover(self, sender: str, item: list[Any], now: float) -> None:
        self._taken_over(item[1])

    def _on_ack(self, sender: str, item: list[Any], now: float) -> None:
        """``sender`` took a request of a client of this node: it answers it, however late."""
        asked = self._asked.get(sender, {}).get((item[1], item[2]))
        if asked is not None:
            asked[2] = True

    def _on_deposed(self, sender: str, item: list[Any], now: float) -> None:
        """``sender`` was deposed and stops: it is gone, as if its lease had lapsed now."""
        self._live_now(self.live - {sender})
        self._lapsed(sender, time.monotonic())

    def _on_adopted(self, sender: str, item: list[Any], now: float) -> None:
        if item[1] == self.node:  # this node was taken for dead (stalled past its lease, its lock lost)
            self.server.depose(f"node {sender} adopted this node's rooms")
            return
        self._adopted(sender, item[1], item[2])

    _handlers = {"msg": _on_msg, "req": _on_request, "attach": _on_attach, "gone": _on_gone, "close": _on_close,
                 "listing": _on_listing, "rooms": _on_listing, "hello": _on_hello, "takeover": _on_takeover,
                 "adopted": _on_adopted, "reseek": _on_reseek, "deposed": _on_deposed, "ack": _on_ack}

    def _stand_in(self, node: str, conn: int, name: str, coords: str, address: str, organiser: bool, now: float,
                  resume: bool = False) -> int:
        """The stand-in connection of ``node``'s connection ``conn`` here, attached to the hall (a session of
        ``name``) when new, or when ``resume`` asks to resume its seats again."""
        key = (node, conn)
        stand_in = self.stand_ins.get(key)
        session = self.hall.sessions.get(stand_in) if stand_in is not None else None
        if stand_in is not None and session is not None and session.name != name:
            # that node started again and numbers its connections anew: the old stand-in is gone
            del self.stand_ins[key], self.homes[stand_in]
            self.server.dispatch(self.hall.disconnect(stand_in, now))
            stand_in = None
        if stand_in is None:
            self._next_stand_in -= 1
            stand_in = self._next_stand_in
            self.stand_ins[key] = stand_in
            self.homes[stand_in] = key
        session = self.hall.sessions.get(stand_in)
        if session is None or resume:  # attached again (after Redis was down, say): the seats' state is sent anew
            self.server.dispatch(self.hall.attach(stand_in, name, coords, address, organiser, now, resume))
        return stand_in

    def _taken_over(self, name: str) -> None:
        """A login on another node took over ``name``: its connection here goes (its seats stay, for the new one)."""
        session = self.hall.by_name.get(name)
        self.view.holders[name] = Holder.SESSION  # for whatever the closing decides about the name here
        if session is not None and session.conn >= 0:
            connection = self.server.connections.get(session.conn)
            if connection is not None:
                self.server._close(connection, 1000, "logged in from another connection")

    def _adopted(self, adopter: str, dead: str, names: Iterable[str]) -> None:
        """``adopter`` took over ``dead``'s rooms: this node's sessions seated there are attached to it."""
        self._lapsed(dead, time.monotonic() - LEASE_SECONDS)  # (its players' clocks held until they are back)
        self.view.forget(dead)
        self.live.discard(dead)
        self._answer_unreachable(dead)  # it died before it answered (and, deposed, it can execute nothing now)
        for nodes in self.forwarded.values():
            nodes.discard(dead)
        for key in [key for key in self.stand_ins if key[0] == dead]:  # sessions of the dead node's clients
            stand_in = self.stand_ins.pop(key)
            del self.homes[stand_in]
            self.server.dispatch(self.hall.disconnect(stand_in, time.monotonic()))
        for name in names:
            session = self.hall.by_name.get(name)
            if session is not None and session.conn >= 0:
                self._attach(adopter, session.conn, session)
        for conn, watches in sorted(self._watches.items()):  # tournaments watched there are watched where they went
            for node, request in list(watches.values()):
                if node == dead and conn in self.hall.sessions and not self.forward(conn, request):
                    self._local(conn, request)
