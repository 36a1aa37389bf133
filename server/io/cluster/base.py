"""What every part of a cluster node's link shares: the Redis keys and timings, the state of the link, and
the writing of messages and commands to Redis (in order, without waiting for replies)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import msgpack

from protocol import messages as m
from protocol.messages import ErrorCode

from ...core.cluster import ClusterView
from ...core.hall import ROOM_REQUESTS
from ...storage import database_error
from .. import resp
from ..ownership import OwnershipProof

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from ..host import Host

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
RELEASE = "if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end " \
           "return 0"
# Deletes the fields of a hash that hold this node's name (ARGV[1]), but those named after it (a node's register
# written again as Redis answers: what it released meanwhile may not have reached Redis).
PRUNE = "local keep = {} for i = 2, #ARGV do keep[ARGV[i]] = true end local all = redis.call('HGETALL', KEYS[1]) " \
        "for i = 1, #all, 2 do if all[i + 1] == ARGV[1] and not keep[all[i]] then redis.call('HDEL', KEYS[1], " \
        "all[i]) end end return 0"
# Puts this node's sessions (ARGV[3...]) that were in the register before Redis went away back in it (KEYS[1]), each
# where no other live node holds the name: one that does took a login of it while this node was cut off, and its
# takeover, published then, never reached this node; it is published to this node (ARGV[1], listening on ARGV[2])
# again, so that its connection of that name goes as if it had. A name held by a node whose lease lapsed is this
# node's again.
REGISTER_SESSIONS = "for i = 3, #ARGV do local name = ARGV[i] local holder = redis.call('HGET', KEYS[1], name) " \
    "if holder and holder ~= ARGV[1] and redis.call('EXISTS', '" + PREFIX + "node:' .. holder) == 1 then " \
    "redis.call('PUBLISH', ARGV[2], cmsgpack.pack({holder, {{'takeover', name}}})) " \
    "else redis.call('HSET', KEYS[1], name, ARGV[1]) end end return 0"
# Puts this node's sessions (ARGV[2...]) that logged in while Redis was away in the register over any other node's
# entry: such a login is the newest of its name; the node it replaces is told (a takeover, from this node ARGV[1]).
CLAIM_SESSIONS = "for i = 2, #ARGV do local name = ARGV[i] local holder = redis.call('HGET', KEYS[1], name) " \
    "redis.call('HSET', KEYS[1], name, ARGV[1]) if holder and holder ~= ARGV[1] then " \
    "redis.call('PUBLISH', '" + PREFIX + "to:' .. holder, cmsgpack.pack({ARGV[1], {{'takeover', name}}})) end end " \
    "return 0"
# Deletes a key only while it holds this node's name.
FORGET = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
FIND_WAITS = (0.0, 0.05, 0.2)  # seconds before each look-up in the register of a room nobody here knows (or of
# a name to reserve that another node holds): a write sent before a client heard of it may reach Redis after its look-up
AWAKE_SECONDS = 0.1  # how often the event loop notes that it runs
STALL_SECONDS = 1.0  # a stall of this process longer than this is given back to the clocks of its players to move
REQUEST_SECONDS = 1.0  # a forwarded request's deadline: its owner drops it after this
CLOCK_SKEW = 0.5  # how far the nodes' wall clocks may disagree: a forwarded request is answered cluster_unavailable
# by its client's node only this long after its deadline, by which the owner drops it
REATTACH_SECONDS = 5.0  # after an outage (Redis away, this node stalled, the player's node adopted), how long an
# owner holds the clock of a player to move until it is reached again (attached, a request of it, a login here)
ANSWERS_KEPT = 16  # answers to a stand-in's requests kept, to send again when its node says they were lost
CLAIMING_SECONDS = 1.0  # how long a login being decided on one node keeps the same name from another's (a retry
# elsewhere within it is told name_in_use, as two logins claiming one name at once are on one node)


def channel(node: str) -> str:
    """The channel a node listens on."""
    return f"{PREFIX}to:{node}"


class LinkBase:
    """The state of this node's link to the others, and its writing to Redis (see the package docstring);
    ``server`` is the node's server."""

    def __init__(self, server: Host, url: str, node: str) -> None:
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
        self.unregistered: set[str] = set()  # sessions logged in here while Redis was away: not in the register yet
        self.counts: Counter[str] = Counter()  # messages published / received / dropped, by kind
        self._next_stand_in = 0
        self._outgoing: dict[str, list[Any]] = {}
        self._flush_scheduled = False
        self._writer = resp.Writer()  # publishes and register writes, in order, without waiting for replies
        self._published = -1  # the listing version last published
        self._held: dict[str, set[str]] = {}  # name -> rooms (and @tournaments) the register may hold for it here
        self._tasks: list[asyncio.Task] = []
        self.leaving = False  # stop() has begun: what is written to Redis from here on is dropped, silently
        self._adopting: set[str] = set()
        self._adoption_waits: set[str] = set()  # dead nodes whose adoption waits for the database (said once)
        self._said_gone: set[str] = set()  # nodes said to have stopped renewing their lease, not said back yet
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
        self._lost_at: float | None = None  # since when Redis is away (up to the last beat that held the clocks)
        self._gone_since: dict[str, float] = {}  # a node whose lease lapsed -> the clocks held up to when
        self._gone_names: dict[str, set[str]] = {}  # ... -> its players to move then, not back yet
        self._unreached: dict[str, float] = {}  # a player to move not reached again since an outage -> its clock
        # held up to when
        self._unreached_until = 0.0  # ... until then at most (REATTACH_SECONDS after the outage)
        self._answers: dict[int, dict[Any, dict[str, Any]]] = {}  # stand-in -> request id -> its answer (the last)
        self._awake_at = time.monotonic()  # when the event loop last noted that it runs
        self._renewed = time.monotonic()  # when this node's lease was last renewed
        self.proof = OwnershipProof(server)  # this node's database lock, proven every beat
        self._database_away = False  # a repeated step failed on the database (said once, not blamed on Redis)

    @property
    def lock(self) -> str:
        """This node's database lock: held, or unverified while the database cannot say."""
        return self.proof.lock

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

    def _command(self, *args: Any) -> bool:
        """Run a Redis command in order with the published messages (its failure only marks Redis down); False
        when it was dropped."""
        return self._write([args])

    def _write(self, commands: list[Any]) -> bool:
        """Write ``commands`` to Redis now, without waiting for their replies (dropped while Redis is away, and
        once this node is deposed: it has left); False when they were dropped."""
        if self.leaving or (self.server.deposed and self._writer.open is False):
            return False
        if self.up and self._writer.write(commands):
            self.counts["published"] += len(commands)
            return True
        self.counts["dropped"] += len(commands)
        if self.up:
            self._down(ConnectionError("the connection for publishing broke"))
        return False

    async def _repeat(self, seconds: float, step: Callable[[], Awaitable[None]]) -> None:
        """Run ``step`` every ``seconds`` for as long as the link lives; a failure only marks Redis down."""
        while True:
            await asyncio.sleep(seconds)
            try:
                await step()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not database_error(exc):
                    self._down(exc)
                elif not self._database_away:  # the database, not Redis (said once an outage)
                    self._database_away = True
                    log.warning("the database is not answering (%s); the cluster's work that needs it waits",
                                " ".join(str(exc).split()))
            else:
                if self._database_away:
                    self._database_away = False
                    log.warning("the database answers again")

    def _down(self, exc: BaseException) -> None:
        if self.leaving:  # it closes its own connections: not a loss
            return
        if self.up:
            log.error("lost the cluster's Redis at %s (%s): rooms of other nodes are out of reach until it is back",
                      self.url, exc)
            self._lost_at = time.monotonic()
        self.up = False

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

    def _local(self, conn: int, msg: dict[str, Any]) -> None:
        connection = self.server.connections.get(conn)
        if connection is not None:
            self.server.handle(connection, msg, time.monotonic())  # type: ignore[arg-type]

    def _unreachable(self, conn: int, msg: dict[str, Any], what: str) -> None:
        self._reply_error(conn, msg, ErrorCode.CLUSTER_UNAVAILABLE, f"{what} cannot be reached now (the cluster's "
                          f"Redis is {'up' if self.up else 'down'}); try again in a few seconds")
