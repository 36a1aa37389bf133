"""Two raw connections to Redis for a cluster node's hot path: one that writes commands without waiting for
their replies (publishes and register writes, in order), and one subscribed to the node's channels.

Every move forwarded between nodes crosses Redis twice. redis-py's pipelines wait for each batch's replies
and its pub/sub reader arms a timeout per message: about 200 µs of a node's CPU a message. Here a batch is
written into the socket at once (its replies are read and dropped by a task of their own, errors logged),
and published messages are read straight off the subscribed socket. The requests that need an answer
(leases, look-ups) keep using redis-py.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import AsyncIterator, Sequence
from typing import Any

log = logging.getLogger("plyhall.cluster")

Command = Sequence[bytes | str | int]


def encode(command: Command) -> bytes:
    """``command`` in RESP, Redis's wire format."""
    parts = [b"*%d\r\n" % len(command)]
    for arg in command:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        parts += [b"$%d\r\n" % len(data), data, b"\r\n"]
    return b"".join(parts)


class RespError(Exception):
    """Redis answered a command with an error."""


async def read_reply(reader: asyncio.StreamReader) -> Any:
    """One RESP2 reply: bytes, an int, a list, None; an error reply comes back as a RespError (not raised)."""
    line = await reader.readuntil(b"\r\n")
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest
    if kind == b":":
        return int(rest)
    if kind == b"-":
        return RespError(rest.decode(errors="replace"))
    if kind == b"$":
        size = int(rest)
        return None if size < 0 else (await reader.readexactly(size + 2))[:-2]
    if kind == b"*":
        size = int(rest)
        return None if size < 0 else [await read_reply(reader) for _ in range(size)]
    raise ConnectionError(f"not a RESP reply from Redis: {line[:40]!r}")


async def connect(url: str, timeout: float = 2.0) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to the Redis of ``url`` (redis://, rediss://, unix://), authenticated and on its database."""
    from redis.asyncio.connection import parse_url  # the cluster extra: a server without --cluster needs no redis

    options = parse_url(url)
    if "path" in options:
        opened = asyncio.open_unix_connection(options["path"])
    else:
        tls = ssl.create_default_context() if url.startswith("rediss://") else None
        opened = asyncio.open_connection(options.get("host", "localhost"), options.get("port", 6379), ssl=tls)
    async with asyncio.timeout(timeout):
        reader, writer = await opened
    setup: list[Command] = []
    if options.get("password"):
        setup.append(["AUTH", *([options["username"]] if options.get("username") else []), options["password"]])
    if options.get("db"):
        setup.append(["SELECT", options["db"]])
    for command in setup:
        writer.write(encode(command))
        async with asyncio.timeout(timeout):
            reply = await read_reply(reader)
        if isinstance(reply, RespError):
            writer.close()
            raise ConnectionError(f"Redis refused {command[0]}: {reply}")
    return reader, writer


class Writer:
    """Commands written in order without waiting for their replies (a task reads and drops them)."""

    def __init__(self) -> None:
        self._writer: asyncio.StreamWriter | None = None
        self._replies: asyncio.Task | None = None
        self.errors = 0

    @property
    def open(self) -> bool:
        """True while the connection stands."""
        return self._writer is not None and not self._writer.is_closing()

    async def connect(self, url: str) -> None:
        """(Re)open the connection."""
        self.close()
        reader, self._writer = await connect(url)
        self._replies = asyncio.create_task(self._drop_replies(reader))

    def write(self, commands: list[Command]) -> bool:
        """Write ``commands`` now; False when the connection is down (they are dropped)."""
        if not self.open:
            return False
        assert self._writer is not None
        self._writer.write(b"".join(encode(command) for command in commands))
        return True

    async def _drop_replies(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                reply = await read_reply(reader)
                if isinstance(reply, RespError):
                    self.errors += 1
                    log.warning("Redis refused a command of the cluster link: %s", reply)
        except (ConnectionError, asyncio.IncompleteReadError, OSError):
            self.close()

    def close(self) -> None:
        """Drop the connection (a reconnect opens a new one)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if self._replies is not None and self._replies is not asyncio.current_task():
            self._replies.cancel()
        self._replies = None


async def subscribed(url: str, channels: Sequence[str]) -> AsyncIterator[bytes | None]:
    """The payloads published on ``channels``; ``None`` once, right after the subscription is in place.
    Ends with ConnectionError (or another OSError) when the connection breaks."""
    reader, writer = await connect(url)
    try:
        writer.write(encode(["SUBSCRIBE", *channels]))
        for _ in channels:
            async with asyncio.timeout(5.0):
                reply = await read_reply(reader)
            if isinstance(reply, RespError) or not isinstance(reply, list) or reply[0] != b"subscribe":
                raise ConnectionError(f"Redis refused the subscription: {reply}")
        yield None
        while True:
            reply = await read_reply(reader)
            if isinstance(reply, list) and len(reply) == 3 and reply[0] == b"message":
                yield reply[2]
    except asyncio.IncompleteReadError as exc:
        raise ConnectionError("Redis closed the connection") from exc
    finally:
        writer.close()
