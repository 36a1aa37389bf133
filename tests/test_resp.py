"""Redis's wire format as a cluster node's raw connections write and read it (server/io/resp.py), without a Redis:
the fast tier's check of what the cluster tests exercise against a real one."""

from __future__ import annotations

import asyncio

import pytest

from server.io.resp import RespError, encode, read_reply


def test_commands_are_arrays_of_bulk_strings() -> None:
    assert encode(["PUBLISH", "node:n2", b"\x00\xffmsg"]) == \
        b"*3\r\n$7\r\nPUBLISH\r\n$7\r\nnode:n2\r\n$5\r\n\x00\xffmsg\r\n"
    assert encode(["EXPIRE", "lease", 30]) == b"*3\r\n$6\r\nEXPIRE\r\n$5\r\nlease\r\n$2\r\n30\r\n"
    assert encode(["SET", "name", "Ånn"]) == b"*3\r\n$3\r\nSET\r\n$4\r\nname\r\n$4\r\n\xc3\x85nn\r\n"  # in bytes


async def replies(data: bytes, count: int) -> list[object]:
    """The first ``count`` replies read off ``data``."""
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    reader.feed_eof()
    return [await read_reply(reader) for _ in range(count)]


async def test_every_kind_of_reply_is_read() -> None:
    got = await replies(b"+OK\r\n:42\r\n$5\r\nhe\r\no\r\n$-1\r\n*2\r\n$7\r\nmessage\r\n:-3\r\n*-1\r\n*0\r\n", 6)
    assert got == [b"OK", 42, b"he\r\no", None, [b"message", -3], None] and await replies(b"*0\r\n", 1) == [[]]


async def test_an_error_reply_is_returned_not_raised_and_garbage_is_a_lost_connection() -> None:
    error, after = await replies(b"-WRONGTYPE Operation against a key\r\n+OK\r\n", 2)
    assert isinstance(error, RespError) and str(error) == "WRONGTYPE Operation against a key" and after == b"OK"
    with pytest.raises(ConnectionError, match="not a RESP reply from Redis: b'HTTP/1.1 400"):
        await replies(b"HTTP/1.1 400 Bad Request\r\n", 1)
    with pytest.raises(asyncio.IncompleteReadError):
        await replies(b"$10\r\nshort\r\n", 1)  # the connection ended inside a reply
