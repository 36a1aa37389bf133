"""One client connection as the server holds it: its codec, its rate limit, and writing to its socket.

A message goes straight into the websockets protocol and the transport's buffer (no queue, task or
coroutine per message); a client that lets more than ``MAX_UNSENT_BYTES`` pile up is too slow and is
disconnected. The rate limit is a token bucket per connection, driven by the time it is given.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from websockets.asyncio.server import ServerConnection

from protocol import messages as m
from protocol.codec import Codec

from ..core.limits import Limits
from ..core.refusals import Refusal
from .frames import OPEN_STATE, frame_header

log = logging.getLogger("plyhall.server")

STRIKE_MEMORY: Final = 10.0  # seconds without a rate-limited message after which strikes are forgotten
MAX_UNSENT_BYTES: Final = 8 * 1024 * 1024  # bytes waiting for one slow client before it is dropped


@dataclass
class RateLimit:
    """A token bucket: ``rate`` messages a second on average, bursts of ``burst``."""

    rate: float = 50.0
    burst: float = 200.0
    strikes_to_close: int = 50  # rate-limited messages before the connection is closed


class ConnectionQuota:
    """The WebSocket connections open from each client address, against ``limits.max_connections_per_address`` (0:
    none); ``refused`` counts the refusals (the server's metrics)."""

    def __init__(self, limits: Limits, refused: Counter[str]) -> None:
        self.limits = limits
        self.open: Counter[str] = Counter()
        self._refused = refused

    def full(self, address: str) -> bool:
        """True (and counted as a refusal) when ``address`` has as many connections open as it may."""
        limit = self.limits.max_connections_per_address
        if limit and self.open[address] >= limit:
            self._refused[Refusal.CONNECTIONS_PER_ADDRESS] += 1
            return True
        return False

    def closed(self, address: str) -> None:
        """One connection of ``address`` less."""
        self.open[address] -= 1
        if self.open[address] <= 0:
            del self.open[address]

    def refusal(self, address: str) -> str:
        """What a refused handshake is told."""
        return (f"too many connections from your address ({self.open[address]}, the limit is "
                f"{self.limits.max_connections_per_address}); close some and try again\n")


OPENING_RETRY_SECONDS: Final = 1  # what a connection past the opening quota is told to wait
REFUSED_LINGER: Final = 2.0  # seconds a refused connection's last bytes are read before it is closed regardless


class OpeningQuota:
    """The TCP connections of each client address that have not finished their opening request (a WebSocket
    handshake, or a plain HTTP request not yet answered), against ``limits.max_opening_per_address`` (0: none).

    Each costs a socket and its buffers for up to the handshake's 10 s timeout, before any other quota sees it:
    without this, one address could open thousands that never finish their request and take the descriptors and
    memory every other client needs. ``counts_as`` gives the address a peer counts as, None for a trusted proxy's
    (whose connections are everybody's)."""

    def __init__(self, limits: Limits, refused: Counter[str], counts_as: Callable[[str], str | None]) -> None:
        self.limits = limits
        self.opening: Counter[str] = Counter()
        self.lingering: Counter[str] = Counter()  # refused connections being ended, by address
        self._refused = refused
        self._counts_as = counts_as

    def admit(self, peer: str) -> tuple[str, bool]:
        """Count a new connection from ``peer``: the address it counts as ("" when it is not counted), to give
        back to :meth:`done` once its request is answered, and whether it may open (False: its address has as
        many opening as it may; :meth:`refuse` it)."""
        limit = self.limits.max_opening_per_address
        address = self._counts_as(peer) if limit else None
        if address is None:
            return "", True
        if self.opening[address] >= limit:
            self._refused[Refusal.OPENING_PER_ADDRESS] += 1
            return address, False
        self.opening[address] += 1
        return address, True

    def done(self, address: str) -> None:
        """One connection of ``address`` past its opening request (or closed before it)."""
        if address:
            self.opening[address] -= 1
            if self.opening[address] <= 0:
                del self.opening[address]

    def refuse(self, address: str, transport: asyncio.Transport) -> None:
        """Answer 429 on a refused connection and end it. The answer is followed by the end of what the server
        sends, and what the client still sends is read and dropped until it closes (at most ``REFUSED_LINGER``
        seconds): closed at once with its request unread, the kernel would reset the connection, and many a client
        loses the answer with it. An address with more refused connections lingering than it may open is not
        answered: those are closed at once."""
        if self.lingering[address] >= self.limits.max_opening_per_address:
            transport.set_protocol(_Refused(transport, self, ""))  # websockets' protocol never saw it opened
            transport.abort()
            return
        body = (f"too many connections from your address are opening at once (the limit is "
                f"{self.limits.max_opening_per_address}); try again in a second\n").encode()
        transport.write(f"HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain; charset=utf-8\r\n"
                        f"Content-Length: {len(body)}\r\nRetry-After: {OPENING_RETRY_SECONDS}\r\n"
                        f"Connection: close\r\n\r\n".encode() + body)
        if transport.can_write_eof():
            transport.write_eof()
        self.lingering[address] += 1
        transport.set_protocol(_Refused(transport, self, address))


class _Refused(asyncio.Protocol):
    """A connection the opening quota refused, answered and half closed: what it sends is dropped until it closes."""

    def __init__(self, transport: asyncio.Transport, quota: OpeningQuota, address: str) -> None:
        self.quota = quota
        self.address = address  # "": not counted as lingering (aborted at once)
        self.timer = asyncio.get_running_loop().call_later(REFUSED_LINGER, transport.abort)

    def data_received(self, data: bytes) -> None:
        """Dropped."""

    def eof_received(self) -> bool:
        """The client is done too: close."""
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        """No longer lingering."""
        self.timer.cancel()
        if self.address:
            self.quota.lingering[self.address] -= 1
            if self.quota.lingering[self.address] <= 0:
                del self.quota.lingering[self.address]


class TokenBucket:
    """Per-connection rate limiter driven by the time it is given."""

    __slots__ = ("limit", "tokens", "updated", "strikes", "last_strike")

    def __init__(self, limit: RateLimit, now: float) -> None:
        self.limit = limit
        self.tokens = limit.burst
        self.updated = now
        self.strikes = 0
        self.last_strike = now

    def refund(self) -> None:
        """Give back the token of a message that turned out to be an accepted move: play is paced by the
        opponent's moves, so a bot answering at once is never limited, however fast its games go."""
        if self.tokens < self.limit.burst:
            self.tokens = min(self.limit.burst, self.tokens + 1)

    def forgive(self) -> None:
        """Take back the strike of a message that came past the limit and turned out to be an accepted move."""
        if self.strikes > 0:
            self.strikes -= 1

    def charge(self, tokens: float) -> None:
        """Spend ``tokens`` more for a request whose answer is large (it may run the bucket below zero: the
        messages after it are dropped until it has filled up again)."""
        self.tokens -= tokens

    def level(self, now: float) -> float:
        """The tokens there are at ``now``, the bucket filled up to then."""
        limit = self.limit
        self.tokens = min(limit.burst, self.tokens + (now - self.updated) * limit.rate)
        self.updated = now
        return self.tokens

    def spend(self, tokens: float) -> bool:
        """Spend ``tokens`` for a frame that is no message (a ping, a part of a fragmented message), the bucket
        filled up to now first; False once it is more than a burst in debt: the connection is to be closed."""
        self.tokens = self.level(time.monotonic()) - tokens
        return self.tokens > -self.limit.burst

    def take(self, now: float) -> bool:
        """Spend a token if there is one; count a strike if not.

        Strikes are forgotten after ``STRIKE_MEMORY`` quiet seconds, so an occasional burst
        never adds up to a disconnection over a long session, while a flood does."""
        limit = self.limit
        tokens = self.tokens + (now - self.updated) * limit.rate
        if tokens > limit.burst:
            tokens = limit.burst
        self.updated = now
        if tokens >= 1:
            self.tokens = tokens - 1
            return True
        self.tokens = tokens
        if now - self.last_strike > STRIKE_MEMORY:
            self.strikes = 0
        self.strikes += 1
        self.last_strike = now
        return False


class Connection:
    """One WebSocket connection: its codec and rate limit; messages are written to its socket at once.

    A message goes straight into the websockets protocol and the transport's buffer (no queue, task or
    coroutine per message): the transport sends what the socket takes and keeps the rest. A client that
    lets more than ``MAX_UNSENT_BYTES`` pile up is too slow and is disconnected.
    """

    __slots__ = ("id", "ws", "transport", "protocol", "codec", "codec_id", "bucket", "closing")

    def __init__(self, conn_id: int, ws: ServerConnection, codec: Codec, bucket: TokenBucket) -> None:
        self.id = conn_id
        self.ws = ws
        self.transport = ws.transport  # both made before this, and never replaced: a push reads them straight
        self.protocol = ws.protocol
        self.codec = codec
        self.codec_id = id(codec)  # half the key of a frame shared within a batch
        self.bucket = bucket
        self.closing = False

    def push(self, msg: dict[str, Any], frames: dict[tuple[int, int], bytes] | None = None) -> bool:
        """Send a message now; False when the client is too far behind (it will be closed).

        ``frames`` shares encoded frames between the connections one batch sends the same message
        object to (a move goes to both players and every spectator): it is encoded once per codec.
        """
        transport = self.transport
        if self.closing or self.protocol._state is not OPEN_STATE or transport.is_closing():  # _state: no property call
            return True  # it is going: what it misses now it could not read anyway
        if transport.get_write_buffer_size() > MAX_UNSENT_BYTES:
            return False
        if frames is None:
            frame = None
        else:
            key = (id(msg), self.codec_id)
            frame = frames.get(key)
        if frame is None:  # what _frame does, inline (calling it from here cost 1,100 instructions a move more)
            codec = self.codec
            try:
                encoded = codec.encode(msg)
            except (ValueError, TypeError, OverflowError):  # never let one bad value cost the connection
                log.exception("could not encode a %s message", msg.get("type"))
                return True
            payload = encoded if isinstance(encoded, bytes) else encoded.encode()
            frame = frame_header(codec.binary, len(payload)) + payload
            if frames is not None:
                frames[key] = frame
        transport.write(frame)
        return True

    def push_all(self, msgs: list[dict[str, Any]], frames: dict[tuple[int, int], bytes]) -> bool:
        """:meth:`push` of several messages, in order, in one write: one system call (and one segment for the
        client to read) instead of one a message."""
        transport = self.transport
        if self.closing or self.protocol._state is not OPEN_STATE or transport.is_closing():
            return True
        if transport.get_write_buffer_size() > MAX_UNSENT_BYTES:
            return False
        parts = []
        for msg in msgs:
            frame = frames.get((id(msg), self.codec_id)) or self._frame(msg, frames)
            if frame is not None:
                parts.append(frame)
        transport.write(b"".join(parts))
        return True

    def _frame(self, msg: dict[str, Any], frames: dict[tuple[int, int], bytes] | None) -> bytes | None:
        """``msg`` as a frame in this connection's codec (kept in ``frames`` for the batch's other connections);
        None when it cannot be encoded (logged: one bad value never costs the connection)."""
        codec = self.codec
        try:
            encoded = codec.encode(msg)
        except (ValueError, TypeError, OverflowError):
            log.exception("could not encode a %s message", msg.get("type"))
            return None
        payload = encoded if isinstance(encoded, bytes) else encoded.encode()
        frame = frame_header(codec.binary, len(payload)) + payload
        if frames is not None:
            frames[(id(msg), self.codec_id)] = frame
        return frame

    def refuse_while_stopping(self, data: bytes | str) -> None:
        """Answer a message that arrived while the server stops (with its id, when it has a usable one)."""
        decoded = self.codec.decode(data)
        msg_id = decoded.get("id") if isinstance(decoded, dict) else None
        error = m.error("server_shutdown", "the server is shutting down; log in again when it is back")
        if isinstance(msg_id, (str, int)) and not isinstance(msg_id, bool):
            error["id"] = msg_id
        self.push(error)

    async def drain(self, timeout: float) -> None:
        """Wait (briefly) until what was written has left for the network."""
        deadline = time.monotonic() + timeout
        transport = self.ws.transport
        while not transport.is_closing() and transport.get_write_buffer_size() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
