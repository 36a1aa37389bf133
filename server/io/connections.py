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
