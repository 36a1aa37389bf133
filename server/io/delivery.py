"""Delivery: a client's whole message to the hall, and the hall outbox's messages sent once its writes are committed,
in the order the outboxes were made.

A mixin of :class:`~server.io.server.PlyhallServer` (the server's own state is declared below for the type checker).
Each outbox's writes go to the group-commit writer, and the outbox waits in ``_held`` with its sequence number
until the writer reports that number committed; then its messages are written to their connections (a message
sent to several connections is encoded once for each codec), a game's end with each connection's messages in one
write, and the timer woken if a deadline came earlier.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from typing import Any, Final

from mypy_extensions import mypyc_attr

from protocol.messages import ProtocolError, request_id, validate_request
from protocol.requests import ClientMessage

from ..core.cluster import WAITED, credit_wait, turn_rooms
from ..core.hall import Hall, HallOutbox
from ..storage.records import MovePlayed
from ..storage.writer import Writer
from .analysis import AnalysisQueue
from .checks import Checks
from .cluster import ClusterLink
from .connections import Connection, RateLimit, TokenBucket
from .metrics import Metrics
from .supervisor import HouseBots

log = logging.getLogger("plyhall.server")
LARGE_ANSWERS: Final = {"legal_moves": (("moves",), 80.0), "list_rooms": (("rooms",), 25.0),
                         "watch_lobby": (("rooms",), 25.0), "list_tournaments": (("tournaments",), 25.0),
                         "watch_tournament": (("tournament", "schedule"), 250.0)}
"""Requests whose answer is a list that may be long: where the list is in it, and the items of it that cost one more
token of the rate limit. An Amazons opening's 2,176 legal moves cost 27 more (a connection's burst of 200 bought 200
answers of 97 KB, a second of the event loop), a listing of 500 rooms 20, an event of 100 entrants (9,900 games: 1 MB
in msgpack, 1.6 MB in JSON, 3 and 11 ms to encode, its view kept a moment once made) 39."""
FAN_OUT: Final = {"seek": ("seeking", 10.0), "chat": ("chat", 25.0)}
"""Requests that send a message to other connections too: its type, and the copies of it to others that cost one more
token. A chat line to a room of 100 costs 4 more, a seek that 100 other seekers hear of 10 (100 connections of one
address chatting in a full room, or seeking on settings that change each time, held every room for seconds); the
lobby's pushes that a request sets off are nobody's to pay for."""
ADDRESS_LARGE: Final = RateLimit(rate=250.0, burst=1000.0)
"""What the connections of one address together may spend on :data:`LARGE_ANSWERS` (150 connections of one address,
each within its own limit, held every room for seconds): about nine Amazons answers a second, then refused
(``rate_limited``, with ``retry_after``) until the address's budget has filled up again."""
ADDRESSES_KEPT: Final = 4096  # addresses whose budget is kept before full ones are forgotten
_WAITED: Final = WAITED  # compiled, a C static: no look-up in the module's dictionary a commit


@mypyc_attr(allow_interpreted_subclasses=True)
class Delivery:
    """The server's side of a message: :meth:`_receive` a client's (checked, to the hall), :meth:`dispatch` an
    outbox, and what follows a commit. Part of the compiled core (``plyhall.compiled``), as everything a move runs
    through."""

    hall: Hall
    writer: Writer | None
    metrics: Metrics
    checks: Checks
    analysis: AnalysisQueue
    analyse_finished: bool
    house: HouseBots | None
    connections: dict[int, Connection]
    cluster: ClusterLink | None
    deposed: str | None
    games_recorded: int
    stopping: bool
    rate_limit: RateLimit
    large_answers: dict[str, TokenBucket]  # each address's budget for LARGE_ANSWERS and FAN_OUT
    _held: deque[tuple[int, HallOutbox, float]]
    _timer_wakeup: asyncio.Event
    _timer_until: float | None

    def close_connection(self, connection: Connection, code: int, reason: str) -> None:
        """Close ``connection`` with a WebSocket close ``code`` and ``reason`` (once)."""
        if connection.closing:
            return
        connection.closing = True
        asyncio.create_task(connection.ws.close(code, reason))

    def _house_exited(self, name: str, code: int) -> None:
        self.dispatch(self.hall.house_exited(name, time.monotonic()))

    def _receive(self, connection: Connection, data: bytes | str) -> None:
        """A whole message of ``connection``, as websockets hands it on: one call a message, nothing raised."""
        if connection.closing:  # read and dropped until the close handshake is done: a handler that stopped
            return  # reading left a flooder's close reply unread until close_timeout
        if self.stopping:
            connection.refuse_while_stopping(data)
            return
        if self.cluster is not None:
            self.cluster.awake()  # a stall of this process is given back to the clocks before this message counts
        try:
            now = time.monotonic()
            self.metrics.received += 1
            on_credit = not connection.bucket.take(now)  # past the limit: dropped, but a move (an accepted one
            decoded = connection.codec.decode(data)  # costs nothing: its clock runs); each is a strike until played,
            if on_credit and (type(decoded) is not dict or decoded.get("type") != "move"  # so a flood of refused
                              or connection.bucket.strikes >= self.rate_limit.strikes_to_close):  # ones is closed
                self._rate_limited(connection, request_id(decoded))
                return
            if isinstance(decoded, ProtocolError):
                self._refuse(connection, decoded)
                return
            msg = validate_request(decoded)
            if isinstance(msg, ProtocolError):
                self._refuse(connection, msg)
                return
            if self.cluster is not None and self.cluster.take(connection.id, msg):  # type: ignore[arg-type]
                return  # another node's business, or a look-up in the cluster comes first
            self.handle(connection, msg, now, on_credit)
        except Exception:  # never into websockets' own code, which called us
            log.exception("error receiving a message")

    def _rate_limited(self, connection: Connection, msg_id: str | int | None) -> None:
        """A message dropped by the rate limit: said on the first strike and every tenth (with the dropped request's
        ``id``), closed past the last."""
        if connection.bucket.strikes >= self.rate_limit.strikes_to_close:
            self.close_connection(connection, 1008, "rate limit exceeded")
        elif connection.bucket.strikes == 1 or connection.bucket.strikes % 10 == 0:
            self._refuse(connection, ProtocolError(
                "rate_limited", f"over the rate limit ({self.rate_limit.rate:g} messages a second, long answers "
                                "counting more): this message was dropped, and others will be until it has filled up "
                                f"again; moves are never dropped", msg_id))

    def handle(self, connection: Connection, msg: ClientMessage, now: float, on_credit: bool = False) -> None:
        """Let the hall answer a validated message of ``connection`` (``on_credit``: a move that came past the rate
        limit, which is forgiven if it is played and costs a message if not)."""
        kind = msg["type"]
        budget = None
        if kind != "move" and (kind in LARGE_ANSWERS or kind in FAN_OUT):
            budget = self._address_budget(connection, now)
            if budget.tokens < 0:
                wait = -budget.tokens / ADDRESS_LARGE.rate
                self._refuse(connection, ProtocolError(
                    "rate_limited", f"too many {'messages to others' if kind in FAN_OUT else 'long answers'} "
                                    f"({kind}) for your address; try again in {max(1, round(wait))} s", msg.get("id")),
                    round(wait, 1))
                return
        try:
            out = self.hall.handle(connection.id, msg, now)
        except Exception:  # a bug must cost one reply, never the server
            log.exception("error handling %s", msg.get("type"))
            self._refuse(connection, ProtocolError("bad_message", "the server could not handle this message",
                                                   msg.get("id")))
            return
        if kind == "move":
            played = 0
            for write in out.writes:  # no generator's frames (sum over one): this runs every move
                played += type(write) is MovePlayed
            if played:
                self.metrics.moves += played
                if on_credit:
                    connection.bucket.forgive()
                else:
                    connection.bucket.refund()
            elif on_credit:  # an illegal move, or one out of turn, is a message as any other
                connection.bucket.charge(1.0)
        elif budget is not None:  # a long answer costs what many short ones do, to its connection and its address
            cost = _fan_out_cost(out, connection.id, *FAN_OUT[kind]) if kind in FAN_OUT else \
                _answer_cost(out, connection.id, *LARGE_ANSWERS[kind])
            connection.bucket.charge(cost)
            budget.charge(cost)
        self.dispatch(out)

    def _address_budget(self, connection: Connection, now: float) -> TokenBucket:
        """The budget for :data:`LARGE_ANSWERS` of ``connection``'s address, filled up to ``now``."""
        address = self.hall.addresses.get(connection.id, "?")
        budget = self.large_answers.get(address)
        if budget is None:
            if len(self.large_answers) >= ADDRESSES_KEPT:  # forget the addresses whose budget is whole again
                for kept, other in list(self.large_answers.items()):
                    if other.level(now) >= ADDRESS_LARGE.burst:
                        del self.large_answers[kept]
            budget = self.large_answers[address] = TokenBucket(ADDRESS_LARGE, now)
        budget.level(now)
        return budget

    def _refuse(self, connection: Connection, error: ProtocolError, retry_after: float | None = None) -> None:
        """An error found before the hall saw the message (undecodable, invalid, rate-limited): sent behind the
        answers that still wait for their commit, so that a client hears its messages answered in their order."""
        self.metrics.errors[error.code] += 1
        out = HallOutbox()
        extra = {} if retry_after is None else {"retry_after": retry_after}
        out.send(connection.id, error.to_message(**extra))
        self.dispatch(out)

    def dispatch(self, out: HallOutbox) -> None:
        """Send ``out`` once its writes are committed (at once when it has none and nothing waits); nothing once
        this node is deposed."""
        if self.deposed is not None:
            return
        for check in out.checks:
            self.checks.check(check)
        for lookup in out.lookups:
            self.checks.look_up(lookup)
        if out.house or out.house_stop:
            self._run_house(out)
        for reason in out.refused:
            self.metrics.refusals[reason] += 1
        if out.ended:
            self.games_recorded += len(out.ended)
            for record in out.ended:
                self.metrics.games_ended[record.status] += 1
        if out.writes and self.writer is not None:
            seq = self.writer.submit(out.writes)
        elif self._held:
            seq = self._held[-1][0]
        else:
            _deliver_outbox(self, out)
            self._wake_timer()
            return
        self._held.append((seq, out, time.monotonic()))

    def _committed(self, seq: int) -> None:
        now = time.monotonic()
        held = self._held
        while held and held[0][0] <= seq:
            _, out, made = held.popleft()
            if now - made > _WAITED:  # the player to move learns it only now: the wait is not its time
                for name in turn_rooms(out.messages):
                    credit_wait(self.hall.registry.find(name), now - made, now)
            _deliver_outbox(self, out)
        self._wake_timer()  # once for the whole commit's outboxes

    def credit_held(self, now: float) -> None:
        """Before the timer acts on the clocks: a move whose announcement has waited for its commit past ``WAITED``
        (a database away) gives its room's player to move the wait so far back, so that no flag falls on a player
        who was never told its turn (a 10 s outage lost games at 5 s a move); the commit gives back the rest. The
        oldest outboxes are first: a quick commit leaves nothing to do."""
        held = self._held
        for index in range(len(held)):
            seq, out, made = held[index]
            if now - made <= _WAITED:
                break
            for name in turn_rooms(out.messages):
                credit_wait(self.hall.registry.find(name), now - made, now)
            held[index] = (seq, out, now)

    def _deliver(self, out: HallOutbox) -> None:
        """Send ``out``'s messages (its writes are committed), each connection's as one write at a game's end. The
        server's own calls go to :func:`_deliver_outbox` directly: a subclass that overrides this is not called."""
        _deliver_outbox(self, out)

    def _welcomed(self, conn_id: int, welcome: dict[str, Any]) -> None:
        """A login went through: counted, and the name registered with the cluster (for a client of this node)."""
        self.metrics.logins += 1
        if self.cluster is not None and conn_id > 0:
            self.cluster.welcomed(conn_id, welcome["name"])

    def _ended(self, out: HallOutbox) -> HallOutbox:
        """Games of ``out`` ended and are stored now: the analysis worker may read them, and the hall learns their
        ratings (what it answers goes on: the ladder's next pairing)."""
        if self.analyse_finished:
            self.analysis.request_played(out.ended)
        return self.hall.committed(out, time.monotonic())

    def _push_gathered(self, gathered: dict[Connection, list[dict[str, Any]]],
                       frames: dict[tuple[int, int], bytes]) -> None:
        """Each connection's gathered messages, in one write each."""
        for connection, msgs in gathered.items():
            if not (connection.push(msgs[0], frames) if len(msgs) == 1 else connection.push_all(msgs, frames)):
                self.close_connection(connection, 1008, "too slow: too many unsent messages")

    def _wake_timer(self) -> None:
        """Wake the timer when a deadline earlier than the one it sleeps until appeared (once a delivery, not once an
        outbox): moves push later deadlines almost always, and a wake-up per message is costly."""
        deadline = self.hall.next_deadline()
        if deadline is not None and (self._timer_until is None or deadline < self._timer_until):
            self._timer_wakeup.set()

    def _close_all(self, closes: list[tuple[int, str]]) -> None:
        for conn_id, reason in closes:
            if conn_id < 0 and self.cluster is not None:  # a stand-in: the connection is on another node
                self.cluster.close(conn_id, reason)
            connection = self.connections.get(conn_id)
            if connection is not None:
                self.close_connection(connection, 1000, reason)

    def _run_house(self, out: HallOutbox) -> None:
        failed = [r.name for r in out.house] if self.house is None else self.house.run(out.house, out.house_stop)
        for name in failed:  # after this outbox's own writes are submitted (we are inside its dispatch): in order
            asyncio.get_running_loop().call_soon(self._house_exited, name, -1)


def _answer_cost(out: HallOutbox, conn: int, path: tuple[str, ...], per: float) -> float:
    """The tokens a long answer to ``conn`` costs more than a short one: the items of its list at ``path``, ``per``
    a token."""
    cost = 0.0
    for to, reply in out.messages:
        items: Any = reply if to == conn else None
        for key in path:
            items = items.get(key) if type(items) is dict else None
        if type(items) is list:
            cost += len(items) / per
    return cost


def _fan_out_cost(out: HallOutbox, conn: int, kind: str, per: float) -> float:
    """The tokens a request costs more for the messages of type ``kind`` it sends to connections other than ``conn``,
    ``per`` a token."""
    return sum(1 for to, msg in out.messages if to != conn and msg["type"] == kind) / per


def _deliver_outbox(server: Delivery, out: HallOutbox) -> None:
    """:meth:`Delivery._deliver`: a function, so that the delivery of each outbox is a native call when compiled (a
    method of a class that interpreted classes extend is called through Python's look-up of its name)."""
    after = server._ended(out) if out.ended else None
    metrics = server.metrics
    metrics.sent += len(out.messages)
    frames: dict[tuple[int, int], bytes] = {}  # the batch's messages stay alive, so their ids are unique
    connections, cluster = server.connections, server.cluster
    if cluster is not None:  # the register first: a name released before its client hears the room closed
        cluster.changed()
    # a game's end tells each member several things (the last move, game_over, the next game's start): each
    # connection's messages go out in one write, in order, once the loop below has gathered them
    gathered: dict[Connection, list[dict[str, Any]]] | None = {} if out.ended else None
    for conn_id, msg in out.messages:
        kind = msg["type"]
        if kind == "error":
            metrics.errors[msg["code"]] += 1
        elif kind == "welcome":
            server._welcomed(conn_id, msg)
        if conn_id < 0 and cluster is not None:  # a client of another node of the cluster
            cluster.deliver(conn_id, msg)
            continue
        connection = connections.get(conn_id)
        if connection is None:
            continue
        if gathered is not None:
            gathered.setdefault(connection, []).append(msg)
        elif not connection.push(msg, frames):
            server.close_connection(connection, 1008, "too slow: too many unsent messages")
    if gathered:
        server._push_gathered(gathered, frames)
    if out.close:  # what closing them changes comes as outboxes of their own
        server._close_all(out.close)
    if after is not None:
        server.dispatch(after)
