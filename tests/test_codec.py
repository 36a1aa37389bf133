"""The two subprotocols: the same messages as JSON in text frames or msgpack in binary frames.

Decoding never raises: bad bytes, oversized frames and values JSON cannot hold come back as a
ProtocolError.
"""

from __future__ import annotations

import json
import random

import msgpack
import pytest

from protocol.codec import (
    CODECS,
    JSON,
    MAX_MESSAGE_BYTES,
    MSGPACK,
    SUBPROTOCOLS,
    JsonCodec,
    MsgpackCodec,
    codec_for,
)
from protocol.games import GAMES
from protocol.messages import ProtocolError, validate

JSON_CODEC = CODECS[JSON]
MSGPACK_CODEC = CODECS[MSGPACK]


def _messages() -> list[dict]:
    """Messages of every shape: requests, replies, boards in each convention, unicode, nulls, floats."""
    msgs: list[dict] = [
        {"type": "login", "name": "ann", "secret": "pässwörd ✓", "coords": "cosc322", "id": 1},
        {"type": "create_room", "game": "amazons", "options": {"first": "white"},
         "time_control": {"initial": 300.5, "increment": 2}, "grace": 0.25, "games": 3, "id": "req-7"},
        {"type": "move", "room": "Kalamalka Lake", "move": {"queen": [1, 4], "to": [5, 4], "arrow": [5, 8]}},
        {"type": "chat", "room": "Wood Lake", "text": "日本語 and emoji 🎲, quotes \" and \\ backslash\n"},
        {"type": "game_over", "room": "R", "winner": None, "reason": "draw agreed", "players": ["a", "b"],
         "record": "abc123", "clocks": {"left": [None, None], "running": None, "control": {"untimed": True}},
         "next_game": False, "game_no": 1},
        {"type": "moved", "room": "R", "seq": 2**53 - 1, "seat": 0, "move": "d1-d7/g7", "notation": "d1-d7/g7",
         "clocks": {"left": [-0.0, 1e-300], "running": 1, "control": {"per_move": 30.0}}, "to_move": 1},
        {"type": "pong"},
        {"type": "rooms", "rooms": []},
    ]
    for game in GAMES.values():
        state = game.initial_state()
        move = game.legal_moves(state)[-1]
        for coords in ("algebraic", "cosc322", "matrix"):
            msgs.append({"type": "game_start", "room": game.name, "game": game.id,
                         "state": game.encode_state(state, coords), "move": game.format_move(move, coords),
                         "moves": [game.notation(move)]})
    return msgs


@pytest.mark.parametrize("msg", _messages(), ids=lambda m: m["type"])
def test_both_codecs_give_the_same_meaning(msg):
    text = JSON_CODEC.encode(msg)
    packed = MSGPACK_CODEC.encode(msg)
    assert isinstance(text, str) and isinstance(packed, bytes)
    assert json.loads(text) == msg  # plain JSON any language reads
    assert msgpack.unpackb(packed, raw=False) == msg
    from_json = JSON_CODEC.decode(text)
    from_msgpack = MSGPACK_CODEC.decode(packed)
    assert from_json == msg and from_msgpack == msg
    assert type(from_json) is dict and type(from_msgpack) is dict
    # integers stay integers and floats stay floats on both paths
    assert repr(from_json) == repr(from_msgpack) == repr(msg)


def test_msgpack_from_other_threads_gives_what_packb_gives():
    """The codec packs on two paths: the thread that made it (the server's event loop) with its own packer, every
    other thread with a thread-local one (the tests' main thread takes the first; no other test runs the second).
    Both give msgpack's own ``packb``, also right after a pack that failed, with four threads packing at once."""
    import threading

    msgs = _messages()
    results: dict[str, list[bytes]] = {}

    def pack_all(name: str) -> None:
        got = []
        for msg in msgs * 20:
            with pytest.raises(TypeError):
                MSGPACK_CODEC.encode({"type": "bad", "value": object()})  # fails halfway: the packer starts afresh
            got.append(MSGPACK_CODEC.encode(msg))
        results[name] = got

    threads = [threading.Thread(target=pack_all, args=(f"t{i}",)) for i in range(3)]
    for thread in threads:
        thread.start()
    pack_all("owner")
    for thread in threads:
        thread.join()
    expected = [msgpack.packb(msg, use_bin_type=True) for msg in msgs * 20]
    assert sorted(results) == ["owner", "t0", "t1", "t2"]
    assert all(got == expected for got in results.values())


def test_frames_and_subprotocols():
    assert SUBPROTOCOLS == (MSGPACK, JSON) == ("plyhall.v1.msgpack", "plyhall.v1.json")  # msgpack preferred
    assert codec_for(None) is JSON_CODEC  # a client that offers no subprotocol gets JSON
    assert isinstance(codec_for(MSGPACK), MsgpackCodec) and MSGPACK_CODEC.binary
    assert isinstance(codec_for(JSON), JsonCodec) and not JSON_CODEC.binary
    with pytest.raises(ValueError, match="plyhall.v1.json"):
        codec_for("plyhall.v2")
    # JSON takes text frames, and binary frames holding UTF-8 JSON too; msgpack takes only binary frames
    assert JSON_CODEC.decode(b'{"type":"ping"}') == {"type": "ping"}
    error = MSGPACK_CODEC.decode('{"type":"ping"}')
    assert isinstance(error, ProtocolError) and error.code == "bad_encoding" and "binary" in error.message


def test_compact_json_keeps_unicode():
    assert JSON_CODEC.encode({"type": "chat", "text": "é"}) == '{"type":"chat","text":"é"}'


def _padded(size: int) -> dict:
    """A message whose encoding in either codec is about ``size`` bytes."""
    return {"type": "chat", "room": "R", "text": "x" * size}


@pytest.mark.parametrize("codec", [JSON_CODEC, MSGPACK_CODEC], ids=["json", "msgpack"])
def test_size_limit(codec):
    small = codec.encode(_padded(MAX_MESSAGE_BYTES - 100))
    assert len(small) <= MAX_MESSAGE_BYTES and codec.decode(small) == _padded(MAX_MESSAGE_BYTES - 100)
    big = codec.encode(_padded(MAX_MESSAGE_BYTES))
    error = codec.decode(big)
    assert isinstance(error, ProtocolError) and error.code == "too_large"
    assert str(MAX_MESSAGE_BYTES) in error.message


def test_size_limit_counts_bytes_not_characters():
    text = JSON_CODEC.encode({"type": "chat", "room": "R", "text": "é" * (MAX_MESSAGE_BYTES // 2)})
    assert len(text) < MAX_MESSAGE_BYTES < len(text.encode())
    error = JSON_CODEC.decode(text)
    assert isinstance(error, ProtocolError) and error.code == "too_large"


@pytest.mark.parametrize(
    "text",
    [
        "", " ", "{", '{"type": "ping"', '{"type": "ping"} x', '{"type": "ping"}{}', "{'type': 'ping'}",
        '{"type": ping}', "[1,]", '{"a":1,}', "NaN", "Infinity", "-Infinity", '{"x": NaN}', '{"x": [Infinity]}',
        '{"x": 1e999}', '{"x": -1e400}', "1" * 5000, '"\\ud800"', '{"\\udc00": 1}', '"\\x41"', "\x00",
        "[" * 100_000, '{"type":"ping"}\x00',
    ],
)
def test_malformed_json_is_a_protocol_error(text):
    for frame in (text, text.encode("utf-8", "surrogatepass")):
        error = JSON_CODEC.decode(frame)
        assert isinstance(error, ProtocolError), (text[:40], error)
        assert error.code in ("bad_encoding", "too_large")


def test_json_text_must_be_valid_utf8():
    for frame in (b"\xff\xfe", b'{"type": "\xc3"}', b'"\xed\xa0\x80"'):
        error = JSON_CODEC.decode(frame)
        assert isinstance(error, ProtocolError) and error.code == "bad_encoding"
    assert isinstance(JSON_CODEC.decode('"\ud800"'), ProtocolError)  # a str with a lone surrogate


def test_json_surrogate_pairs_are_fine():
    assert JSON_CODEC.decode('{"text": "\\ud83c\\udfb2"}') == {"text": "🎲"}


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"", "empty"),
        (b"\xc1", "never-used byte"),
        (b"\x81\xa4type", "map cut short"),
        (b"\x92\x01", "array cut short"),
        (msgpack.packb({"type": "ping"}) + b"\x00", "trailing bytes"),
        (msgpack.packb({"type": "ping"}) * 2, "two messages"),
        (msgpack.packb({"type": "ping", "b": b"bytes"}, use_bin_type=True), "bin value"),
        (msgpack.packb({"type": "ping", "b": b""}, use_bin_type=True), "empty bin value"),
        (msgpack.packb({b"type": "ping"}, use_bin_type=True), "bin key"),
        (msgpack.packb({b"": 1}, use_bin_type=True), "empty bin key"),
        (msgpack.packb({"x": msgpack.ExtType(5, b"abcd")}), "ext value"),
        (msgpack.packb({"x": msgpack.ExtType(5, b"")}), "empty ext value"),
        (msgpack.packb({"x": msgpack.Timestamp(1, 0)}), "timestamp ext"),
        (msgpack.packb({1: "int key"}), "int key"),
        (msgpack.packb({"x": float("nan")}), "NaN"),
        (msgpack.packb([float("inf")]), "infinity"),
        (msgpack.packb({"x": [float("-inf")]}, use_single_float=True), "single float infinity"),
        (b"\xa2\xff\xfe", "bad UTF-8 in str"),
        (b"\xa3\xed\xa0\x80", "surrogate in str"),
        (b"\xdd\xff\xff\xff\xff", "array claiming 4 billion items"),
        (b"\xdf\xff\xff\xff\xff", "map claiming 4 billion pairs"),
        (b"\x91" * 5000 + b"\xc0", "nested too deep"),
    ],
)
def test_malformed_msgpack_is_a_protocol_error(data, why):
    error = MSGPACK_CODEC.decode(data)
    assert isinstance(error, ProtocolError), why
    assert error.code == "bad_encoding", why


@pytest.mark.parametrize("codec", [JSON_CODEC, MSGPACK_CODEC], ids=["json", "msgpack"])
def test_random_bytes_never_raise(codec):
    rng = random.Random(f"plyhall-{codec.subprotocol}")
    seeds = [codec.encode(m) for m in _messages()]
    seeds = [s.encode() if isinstance(s, str) else s for s in seeds]
    for i in range(3000):
        if i % 2:
            data = bytes(rng.randrange(256) for _ in range(rng.randrange(40)))
        else:  # a valid message with a few bytes flipped, cut or added: deeper into the decoder
            data = bytearray(rng.choice(seeds))
            for _ in range(rng.randrange(1, 4)):
                pos = rng.randrange(len(data))
                action = rng.random()
                if action < 0.6:
                    data[pos] = rng.randrange(256)
                elif action < 0.8:
                    del data[pos:]
                    if not data:
                        break
                else:
                    data.insert(pos, rng.randrange(256))
            data = bytes(data)
        frame: bytes | str = data
        if not codec.binary and rng.random() < 0.5:
            frame = data.decode("utf-8", "replace")
        value = codec.decode(frame)
        if isinstance(value, ProtocolError):
            assert value.code in ("bad_encoding", "too_large") and value.message
        else:  # whatever decodes is plain data that validation can judge without raising
            assert validate(value) is value or isinstance(validate(value), ProtocolError)
            json.dumps(value, allow_nan=False)
            msgpack.packb(value)


@pytest.mark.parametrize("codec", [JSON_CODEC, MSGPACK_CODEC], ids=["json", "msgpack"])
def test_a_request_refused_for_a_nan_answers_its_id(codec):
    """A request holding a NaN or an infinity (``plyhall tournament create --grace nan``) was refused without its
    ``id``, so the program waiting for the answer waited its whole timeout and ended in a traceback."""
    request = {"type": "tournament_create", "game": "connect4", "format": "round-robin", "grace": float("nan"),
               "sprt": {"elo1": float("inf")}}
    for msg_id, answered in ((7, 7), ("a-1", "a-1"), ("x" * 65, None), (True, None), (None, None)):
        sent = {**request, "id": msg_id}
        data = json.dumps(sent) if codec is JSON_CODEC else msgpack.packb(sent)
        error = codec.decode(data)
        assert isinstance(error, ProtocolError) and error.code == "bad_encoding" and error.id == answered, msg_id
        assert error.to_message().get("id") == answered
    assert JSON_CODEC.decode('{"id": 3, "x": NaN').id is None  # not JSON at all: no id to answer
