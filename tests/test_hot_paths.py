"""The shortcuts on a move's hot path answer exactly as the general code they stand in for (issue 44).

* Validation: the precompiled check of each request type (``protocol.messages``) against the generic walk of its
  schema, which a copy of the schemas dict always takes.
* Frames: ``server.io.transport.parse_frames`` (the server's frame parser, with its shortcut for whole small data
  frames) against websockets' own parser, fed the same bytes cut in every way TCP may cut them; and the server's
  connections' ``data_received`` (``DirectMessages``) against websockets' own, fed the same way.
* Encoding: the msgpack codec's kept packer against ``msgpack.packb``.
"""

from __future__ import annotations

import asyncio
import random
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import msgpack
import pytest
from websockets.asyncio.connection import Connection
from websockets.asyncio.server import ServerConnection
from websockets.client import ClientProtocol
from websockets.datastructures import Headers
from websockets.frames import Close, CloseCode, Frame, Opcode
from websockets.http11 import Request
from websockets.protocol import OPEN
from websockets.server import ServerProtocol
from websockets.uri import parse_uri

from protocol.codec import CODECS, MAX_MESSAGE_BYTES, MSGPACK
from protocol.messages import ANY, BOOL, CLIENT_MESSAGES, INT, LIST, MAP, NUM, OPT_INT, STR, ProtocolError, validate
from server.io import transport
from server.io.transport import DirectMessages, HttpAwareProtocol

# Validation -------------------------------------------------------------------------------------------------------


def _junk_requests(rng: random.Random, count: int) -> list[Any]:
    """Requests good and bad: every type with its fields of every kind, missing, extra, or of the wrong type."""
    atoms: list[Any] = [None, True, False, 0, -1, 7, 2**53 - 1, 2**53, -(2**53), 1.5, float("nan"), float("inf"), "",
                        "Lake", "x" * 65, b"b", [], {}, [1, "a"], {"k": 1}, {"k": float("nan")}, {1: 2}, (1,),
                        {"k": 2**53}, {"k": "a", "j": None, "b": True}, {"k": [1, float("inf")]}, {"k": {"j": [2]}},
                        {"k": b"b"}]
    kinds = [*CLIENT_MESSAGES, "welcome", ""]
    found = []
    for _ in range(count):
        kind = rng.choice(kinds)
        schema = CLIENT_MESSAGES.get(kind)
        fields = [*schema.required, *schema.optional] if schema else ["room"]
        msg: dict[Any, Any] = {"type": kind}
        for name in fields:
            if rng.random() < 0.7:
                msg[name] = rng.choice(atoms)
        if rng.random() < 0.3:
            msg["id"] = rng.choice(atoms)
        if rng.random() < 0.1:
            msg[rng.choice(["extra", 3])] = 1
        found.append(msg)
    return found


def test_precompiled_checks_give_the_answers_of_the_schema_walk():
    rng = random.Random(44)
    walked = dict(CLIENT_MESSAGES)  # not CLIENT_MESSAGES itself: every message takes the generic walk
    accepted = 0
    for msg in _junk_requests(rng, 4000):
        fast, slow = validate(msg), validate(msg, walked)
        if isinstance(slow, ProtocolError):
            assert fast == slow, msg
        else:
            assert fast is msg and slow is msg, msg
            accepted += 1
    assert accepted > 200  # the test reached both answers


_VALID = {STR: "Lake", INT: 1, NUM: 1.5, BOOL: True, MAP: {}, LIST: [], ANY: 1, OPT_INT: None}


def test_precompiled_checks_answer_as_the_walk_field_by_field():
    """Each field of each request type, its id, and a field no type has, in an otherwise valid request, set to each
    atom (a move's map with values out of range, nested, or not JSON at all among them): the precompiled check answers
    as the schema walk."""
    walked = dict(CLIENT_MESSAGES)
    atoms: list[Any] = [None, True, 0, 2**53, -(2**53) + 1, 1.5, float("inf"), "", "x" * 64, "x" * 65, b"b", [], {},
                        (1,), [1, "a"], [2**53], {"column": 4}, {"column": 2**53}, {"column": -(2**53)},
                        {"k": float("nan")}, {1: 2}, {"k": "a", "j": None, "b": True}, {"k": [1, float("inf")]},
                        {"k": {"j": [2]}}, {"k": b"b"}, {"k": (1,)}, {"queen": [0, 3], "to": [5, 3], "arrow": [5, 9]}]
    accepted = refused = 0
    for kind, schema in CLIENT_MESSAGES.items():
        fields = {**schema.required, **schema.optional}
        base = {"type": kind, **{name: _VALID.get(field, "Lake") for name, field in fields.items()}}
        for name in [*fields, "id", "extra"]:  # the id every type may carry, and a field no type has
            for atom in atoms:
                msg = {**base, name: atom}
                fast, slow = validate(msg), validate(msg, walked)
                if isinstance(slow, ProtocolError):
                    assert fast == slow, msg
                    refused += 1
                else:
                    assert fast is msg and slow is msg, msg
                    accepted += 1
    assert accepted > 100 and refused > 100  # the test reached both answers


# Frames -----------------------------------------------------------------------------------------------------------


def _opened(protocol: ServerProtocol) -> ServerProtocol:
    """``protocol`` after a msgpack client's opening handshake."""
    protocol.parser = protocol.parse()
    next(protocol.parser)
    client = ClientProtocol(parse_uri("ws://127.0.0.1/ws"), subprotocols=[MSGPACK])
    protocol.receive_data(client.connect().serialize())
    protocol.send_response(protocol.accept(protocol.events_received()[0]))
    protocol.data_to_send()
    assert protocol.state is OPEN
    return protocol


def _servers() -> tuple[ServerProtocol, ServerProtocol]:
    """The server's protocol (as ``DirectConnection`` makes it) and websockets' own, both open."""
    ours = ServerProtocol(subprotocols=[MSGPACK], max_size=MAX_MESSAGE_BYTES)
    ours.__class__ = HttpAwareProtocol
    return _opened(ours), _opened(ServerProtocol(subprotocols=[MSGPACK], max_size=MAX_MESSAGE_BYTES))


def _feed(protocol: ServerProtocol, chunks: list[bytes]) -> tuple[list[Frame], list[bytes], Any]:
    """What a protocol made of ``chunks``: the frames received, the bytes it answered, and how it ended."""
    events: list[Frame] = []
    sent: list[bytes] = []
    for chunk in chunks:
        if protocol.parser_exc is not None or protocol.state is not OPEN:
            break
        protocol.receive_data(chunk)
        events.extend(protocol.events_received())
        sent.extend(protocol.data_to_send())
    closed = (protocol.state, protocol.close_rcvd, protocol.close_sent, type(protocol.parser_exc))
    return events, sent, closed


def _frames(rng: random.Random) -> bytes:
    """A client's stream: moves (binary), text, empty and 125/126-byte payloads, a ping, a fragmented message."""
    parts = [Frame(Opcode.BINARY, b"\x83\xa4type\xa4move"), Frame(Opcode.TEXT, b'{"type":"ping"}'),
             Frame(Opcode.BINARY, b""), Frame(Opcode.BINARY, bytes(125)), Frame(Opcode.BINARY, bytes(126)),
             Frame(Opcode.PING, b"hi"), Frame(Opcode.TEXT, "é".encode() * 40)]
    stream = [rng.choice(parts) for _ in range(30)]
    stream[10:10] = [Frame(Opcode.TEXT, b"par", fin=False), Frame(Opcode.CONT, b"ts")]
    return b"".join(frame.serialize(mask=True) for frame in stream)


def _cuts(data: bytes, rng: random.Random) -> list[list[bytes]]:
    """``data`` whole, a byte at a time, and cut at random places."""
    cuts = [[data], [data[i:i + 1] for i in range(len(data))]]
    for _ in range(5):
        points = sorted(rng.sample(range(1, len(data)), 25))
        cuts.append([data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)])
    return cuts


def test_frames_read_as_websockets_reads_them_however_the_stream_is_cut():
    rng = random.Random(7)
    data = _frames(rng)
    for chunks in _cuts(data, rng):
        ours, theirs = _servers()
        got, expected = _feed(ours, chunks), _feed(theirs, chunks)
        assert got == expected
        assert len(got[0]) == 32 and got[1]  # every frame arrived; the ping was answered with a pong


@pytest.mark.parametrize(("frames", "code"), [
    ([bytes((0xC2, 0x80 | 20)) + bytes(4) + b"x" * 20], CloseCode.PROTOCOL_ERROR),  # a reserved bit, no extension
    ([Frame(Opcode.TEXT, b"a", fin=False), Frame(Opcode.BINARY, b"b")], CloseCode.PROTOCOL_ERROR),  # not a CONT
    ([Frame(Opcode.BINARY, bytes(MAX_MESSAGE_BYTES + 1))], CloseCode.MESSAGE_TOO_BIG),
    ([Frame(Opcode.BINARY, b"ok"), Frame(Opcode.CLOSE, Close(CloseCode.NORMAL_CLOSURE, "bye").serialize()),
      Frame(Opcode.BINARY, b"after the close")], CloseCode.NORMAL_CLOSURE),
])
def test_bad_or_closing_streams_end_as_websockets_ends_them(frames, code):
    data = b"".join(frame if isinstance(frame, bytes) else frame.serialize(mask=True) for frame in frames)
    for chunks in ([data], [data[i:i + 7] for i in range(0, len(data), 7)]):
        ours, theirs = _servers()
        got, expected = _feed(ours, chunks), _feed(theirs, chunks)
        assert got == expected
        assert got[2][2] is not None and got[2][2].code == code  # the close the server sent


def test_an_unmasked_frame_is_refused_as_websockets_refuses_it():
    data = Frame(Opcode.BINARY, b"unmasked").serialize(mask=False)
    ours, theirs = _servers()
    got, expected = _feed(ours, [data]), _feed(theirs, [data])
    assert got == expected and got[2][2].code == CloseCode.PROTOCOL_ERROR


class _Recorded(asyncio.Transport):
    """A transport that keeps what is written to it (``None`` for the end of the stream written)."""

    def __init__(self) -> None:
        super().__init__()
        self.written: list[bytes | None] = []

    def write(self, data: Any) -> None:
        self.written.append(bytes(data))

    def write_eof(self) -> None:
        self.written.append(None)

    def can_write_eof(self) -> bool:
        return True

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0

    def set_write_buffer_limits(self, high: Any = None, low: Any = None) -> None:
        pass

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


class _WebsocketsWay(DirectMessages, ServerConnection):
    """The server's connection class with websockets' own ``data_received`` (every event through ``process_event``)."""

    data_received = Connection.data_received


class _OurWay(DirectMessages, ServerConnection):
    """The server's connection class (``DirectConnection`` less its handshake parser's set-up)."""


async def _received_by(cls: type, chunks: list[bytes], max_size: int = MAX_MESSAGE_BYTES, recv: bool = True
                       ) -> tuple[list[Any], list[Any], Any, Any, bool]:
    """What a connection of ``cls`` did with ``chunks``: messages handed on (straight, then through ``recv`` unless
    ``recv`` is false: a fragmented message left unfinished is never whole), bytes written, its state, and whether it
    set a close deadline."""
    protocol = ServerProtocol(subprotocols=[MSGPACK], max_size=max_size)
    protocol.__class__ = HttpAwareProtocol
    ws = cls.__new__(cls)
    ServerConnection.__init__(ws, _opened(protocol), None, ping_interval=None, ping_timeout=None)
    transport = _Recorded()
    Connection.connection_made(ws, transport)  # without the server's handler task: the handshake is done
    ws.request = Request("/ws", Headers())
    handed: list[Any] = []
    ws.on_message = handed.append
    for chunk in chunks:
        ws.data_received(chunk)
    queued = []
    while recv and ws.recv_messages.frames:
        queued.append(await asyncio.wait_for(ws.recv(), 5))
    return handed, queued, transport.written, ws.protocol.state, ws.close_deadline is not None


async def test_a_connection_hands_on_what_websockets_own_data_received_would():
    rng = random.Random(11)
    close = Frame(Opcode.CLOSE, Close(CloseCode.NORMAL_CLOSURE, "bye").serialize()).serialize(mask=True)
    data = _frames(rng)
    for stream in (data, data + close):
        for chunks in _cuts(stream, rng):
            ours = await _received_by(_OurWay, chunks)
            assert ours == await _received_by(_WebsocketsWay, chunks)
            handed, queued, written, _, deadline = ours
            # every message straight, the fragmented one too, in its place (websockets' queue gave it to a reader after
            # the whole messages behind it)
            assert len(handed) > 20 and queued == [] and handed.count("parts") == 1
            assert written and deadline == (stream is not data)  # a pong; after a close, its answer and a deadline


@pytest.mark.parametrize("max_size", [MAX_MESSAGE_BYTES, 30])
async def test_a_connection_fed_a_frame_a_read_hands_on_what_websockets_own_data_received_would(max_size):
    # a read that is one whole small binary frame skips the parser: every kind of frame alone, a frame over a small
    # message limit, data frames inside a fragmented message (refused), a reserved bit, and frames after a close
    rng = random.Random(12)
    parts = [Frame(Opcode.BINARY, b"\x83\xa4type\xa4move"), Frame(Opcode.BINARY, b""), Frame(Opcode.BINARY, bytes(40)),
             Frame(Opcode.BINARY, bytes(125)), Frame(Opcode.BINARY, bytes(126)), Frame(Opcode.TEXT, b'{"type":"ping"}'),
             Frame(Opcode.PING, b"hi"), Frame(Opcode.PONG, b"\x00\x00\x00\x07")]
    tails = [[], [Frame(Opcode.TEXT, b"par", fin=False), Frame(Opcode.CONT, b"ts"), Frame(Opcode.BINARY, b"x")],
             [Frame(Opcode.TEXT, b"par", fin=False), Frame(Opcode.BINARY, b"x"), Frame(Opcode.CONT, b"ts")],
             [Frame(Opcode.CLOSE, Close(CloseCode.NORMAL_CLOSURE, "bye").serialize()), Frame(Opcode.BINARY, b"late")]]
    handed = 0
    for index, tail in enumerate(tails):
        picked = [parts[0], parts[0], parts[2], *rng.choices(parts, k=30), *tail]  # under the limit of 30 first
        frames = [frame.serialize(mask=True) for frame in picked]
        for chunks in (frames, frames[:5] + [bytes((0xC2, 0x81)) + bytes(5)] + frames[5:]):
            ours = await _received_by(_OurWay, chunks, max_size, recv=index != 2)
            assert ours == await _received_by(_WebsocketsWay, chunks, max_size, recv=index != 2)
            handed += len(ours[0])
    assert handed > (100 if max_size == MAX_MESSAGE_BYTES else 3)  # messages were handed on


async def test_a_whole_small_binary_frame_a_read_is_read_without_the_parser(monkeypatch):
    parsed = []
    whole = transport._whole_data_frame
    monkeypatch.setattr(transport, "_whole_data_frame", lambda protocol, buffer: parsed.append(1) or whole(protocol,
                                                                                                            buffer))
    chunks = [Frame(Opcode.BINARY, bytes([n]) * n).serialize(mask=True) for n in range(126)]
    handed = (await _received_by(_OurWay, chunks))[0]
    assert handed == [bytes([n]) * n for n in range(126)] and len(parsed) == 1  # the first: the handshake's parser
    parsed.clear()
    assert (await _received_by(_WebsocketsWay, chunks))[0] == handed and len(parsed) == 126


_ACKS: list[bytes] = []  # the pongs' payloads acknowledged (by the two classes below)


class _OurWayAcks(_OurWay):
    """``_OurWay``, keeping the pongs' payloads it acknowledges in ``_ACKS``."""

    def acknowledge_pings(self, data: bytes) -> None:
        _ACKS.append(data)
        ServerConnection.acknowledge_pings(self, data)


class _WebsocketsWayAcks(_WebsocketsWay):
    """``_WebsocketsWay``, keeping the pongs' payloads it acknowledges in ``_ACKS``."""

    acknowledge_pings = _OurWayAcks.acknowledge_pings


async def test_pongs_are_acknowledged_as_websockets_acknowledges_them(monkeypatch):
    # a pong alone a read skips the parser (the keepalive sweep's pings are answered so); a pong cut in two, after a
    # message in one read, inside a fragmented message, unmasked, too long, cut short or after a close does not
    pong = Frame(Opcode.PONG, b"\x00\x00\x00\x09").serialize(mask=True)
    fragment = Frame(Opcode.TEXT, b"par", fin=False).serialize(mask=True)
    close = Frame(Opcode.CLOSE, Close(CloseCode.NORMAL_CLOSURE, "bye").serialize()).serialize(mask=True)
    move = Frame(Opcode.BINARY, b"\x83\xa4type\xa4move").serialize(mask=True)
    streams = [[pong, pong], [pong[:3], pong[3:]], [move + pong, pong], [fragment, pong, pong],
               [Frame(Opcode.PONG, b"abcd").serialize(mask=False), pong], [bytes((0x8A, 0x80 | 126)) + bytes(130)],
               [Frame(Opcode.PONG, bytes(125)).serialize(mask=True)], [close, pong], [bytes((0x8A, 0x84)) + bytes(3)]]
    acks: dict[type, tuple[Any, list[bytes]]] = {}
    for stream in streams:
        for cls in (_OurWayAcks, _WebsocketsWayAcks):
            _ACKS.clear()
            acks[cls] = (await _received_by(cls, stream, recv=stream[0] is not fragment), list(_ACKS))
        assert acks[_OurWayAcks] == acks[_WebsocketsWayAcks], stream
        assert stream[0] is not pong or acks[_OurWayAcks][1] == [b"\x00\x00\x00\x09"] * 2
        assert stream[0] is not close or acks[_OurWayAcks][1] == []  # after a close: none
    parsed = []
    parse = Frame.parse
    monkeypatch.setattr(Frame, "parse", lambda *a, **k: parsed.append(1) or parse(*a, **k))
    assert (await _received_by(_OurWay, [pong] * 5))[1:] == ([], [], OPEN, False)
    assert len(parsed) == 1  # the first frame after the handshake only: the handshake's parser
    parsed.clear()
    assert (await _received_by(_WebsocketsWay, [pong] * 5))[1:] == ([], [], OPEN, False) and len(parsed) == 5


# Encoding ---------------------------------------------------------------------------------------------------------


def test_the_kept_packer_gives_packb_s_bytes_after_a_failure_and_in_every_thread():
    codec = CODECS[MSGPACK]
    moved = {"type": "moved", "room": "Lake", "seq": 3, "move": {"column": 4}, "clocks": {"left": [1.5, None]}}
    with pytest.raises(TypeError):
        codec.encode({"type": "chat", "text": {"a set"}})  # a bug's message: refused whole...
    assert codec.encode(moved) == msgpack.packb(moved, use_bin_type=True)  # ...and nothing of it in the next one

    def encode_many(seed: int) -> bool:
        rng = random.Random(seed)
        for _ in range(300):
            msg = {"type": "moved", "seq": rng.randrange(10**6), "notation": "x" * rng.randrange(300)}
            if codec.encode(msg) != msgpack.packb(msg, use_bin_type=True):
                return False
        return True

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(encode_many, range(8)))


# Delivery ---------------------------------------------------------------------------------------------------------


class _Recorder:
    """A transport that keeps each write."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0


def _messages_in(data: bytes) -> list[Any]:
    """The msgpack messages of the unmasked binary frames one after another in ``data``."""
    found = []
    while data:
        assert data[0] == 0x82 and data[1] < 126
        found.append(msgpack.unpackb(data[2:2 + data[1]]))
        data = data[2 + data[1]:]
    return found


def _recording_server(tmp_path: Path) -> tuple[Any, dict[int, _Recorder]]:
    """A :class:`PlyhallServer` (not serving) with connections 1 and 2 on msgpack, each writing to a
    :class:`_Recorder`; :func:`_stop_recording` closes it."""
    from types import SimpleNamespace

    from server.io.connections import Connection as Client
    from server.io.connections import RateLimit, TokenBucket
    from server.io.server import PlyhallServer
    from server.storage.sqlite import SQLiteStorage

    server = PlyhallServer(SQLiteStorage(tmp_path / "d.db"), port=0)
    transports = {}
    for conn in (1, 2):
        transports[conn] = _Recorder()
        ws = SimpleNamespace(transport=transports[conn], protocol=SimpleNamespace(_state=OPEN))
        server.connections[conn] = Client(conn, ws, CODECS[MSGPACK], TokenBucket(RateLimit(), 0.0))  # type: ignore
    return server, transports


def _stop_recording(server: Any) -> None:
    server.storage.close()
    server.reads.shutdown(wait=False)


async def test_a_game_s_end_reaches_each_member_in_one_write_in_the_hall_s_order(tmp_path):
    from server.core.hall import HallOutbox

    server, transports = _recording_server(tmp_path)
    try:
        server._ended = lambda out: HallOutbox()  # type: ignore[method-assign]  # no hall behind these games
        moved, over = {"type": "moved", "seq": 41}, {"type": "game_over", "winner": 0}
        start, turn = {"type": "game_start", "seq": 0}, {"type": "legal_moves", "moves": [1, 2]}

        ending = HallOutbox()
        ending.messages = [(1, moved), (2, moved), (1, over), (2, over), (1, start), (2, start), (1, turn)]
        ending.ended = [object()]  # type: ignore[list-item]
        server._deliver(ending)
        assert [_messages_in(w) for w in transports[1].writes] == [[moved, over, start, turn]]
        assert [_messages_in(w) for w in transports[2].writes] == [[moved, over, start]]

        playing = HallOutbox()  # a move's outbox: one message a member, written at once
        playing.messages = [(1, moved), (2, moved)]
        server._deliver(playing)
        assert [_messages_in(w) for w in transports[2].writes[1:]] == [[moved]]
    finally:
        _stop_recording(server)


async def test_an_error_found_before_the_hall_is_sent_behind_the_answers_waiting_for_their_commit(tmp_path):
    """A client sends a move, then a message that does not decode: the move's answer waits for its commit, and the
    error comes after it (it used to overtake it, written at once)."""
    from server.core.hall import HallOutbox

    server, transports = _recording_server(tmp_path)
    try:
        moved = {"type": "moved", "seq": 7}
        answers = HallOutbox()
        answers.messages = [(1, moved), (2, moved)]
        server._held.append((3, answers, time.monotonic()))  # as dispatch holds a move's outbox for commit 3
        server._refuse(server.connections[1], ProtocolError("bad_message", "not a msgpack message"))
        assert transports[1].writes == []
        server._committed(3)
        said = [msg for w in transports[1].writes for msg in _messages_in(w)]
        assert [msg["type"] for msg in said] == ["moved", "error"] and said[1]["code"] == "bad_message"
        server._refuse(server.connections[2], ProtocolError("bad_message", "not a msgpack message"))
        assert [msg["type"] for w in transports[2].writes for msg in _messages_in(w)] == ["moved", "error"]
    finally:
        _stop_recording(server)
