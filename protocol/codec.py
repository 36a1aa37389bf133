"""The two subprotocols: the same messages as msgpack (binary frames) or JSON (text frames).

Decoding never raises: bad bytes come back as a :class:`ProtocolError`.
"""

from __future__ import annotations

import json
import math
import re
import threading
from typing import Any, Final

import msgpack

from .messages import ProtocolError, request_id

_get_ident: Final = threading.get_ident
_unpackb: Final = msgpack.unpackb  # compiled, a Final is a C static: no look-up of msgpack and its attribute a message

MSGPACK = "plyhall.v1.msgpack"
JSON = "plyhall.v1.json"
SUBPROTOCOLS = (MSGPACK, JSON)
"""Subprotocols in order of preference (the server picks the first the client offers)."""

MAX_MESSAGE_BYTES: Final = 64 * 1024
"""The largest incoming message the server accepts."""
SERVER_MESSAGE_BYTES = 4 * 1024 * 1024
"""The largest message a client accepts from the server: a tournament's state (every game of a class's round
robin) outgrows the 64 KiB a client may send."""


class Codec:
    """Encode messages to frames and decode frames to messages for one subprotocol."""

    subprotocol: str = ""
    binary: bool = False

    def encode(self, msg: dict[str, Any]) -> bytes | str:
        """One frame's payload for ``msg``."""
        raise NotImplementedError

    def decode(self, data: bytes | str, limit: int = MAX_MESSAGE_BYTES) -> Any | ProtocolError:
        """The value in a frame, or a ProtocolError (bad encoding, larger than ``limit`` bytes)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<codec {self.subprotocol}>"


def _too_large(size: int, limit: int) -> ProtocolError:
    return ProtocolError("too_large", f"message of {size} bytes; the limit is {limit} bytes")


class JsonCodec(Codec):
    """``plyhall.v1.json``: UTF-8 JSON in text frames."""

    subprotocol = JSON
    binary = False

    def encode(self, msg: dict[str, Any]) -> str:
        """Compact JSON text."""
        return json.dumps(msg, separators=(",", ":"), ensure_ascii=False, allow_nan=False)

    def decode(self, data: bytes | str, limit: int = MAX_MESSAGE_BYTES) -> Any | ProtocolError:
        """Parse JSON text (a binary frame holding UTF-8 JSON is accepted too)."""
        if len(data) > limit:  # a quick answer before encoding: a character is at least a byte
            return _too_large(len(data), limit)
        try:
            if isinstance(data, str):
                size = len(data.encode("utf-8"))
                if size > limit:
                    return _too_large(size, limit)
            else:
                data = data.decode("utf-8")
            value = json.loads(data, parse_constant=_reject_constant, parse_float=_finite_float)
        except (ValueError, RecursionError) as exc:  # UnicodeError is a ValueError
            return ProtocolError("bad_encoding", f"not valid JSON: {str(exc)[:120]}", _lenient_id(data))
        if _SURROGATE_ESCAPE.search(data) and _has_lone_surrogate(value):
            # "\ud800" is valid JSON syntax but no character: it could never be sent on as UTF-8
            return ProtocolError("bad_encoding", "not valid JSON: a \\u escape names half a surrogate pair")
        return value


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _lenient_id(data: bytes | str) -> str | int | None:
    """The request id of JSON text refused for a NaN, an infinity or a number too large (valid JSON otherwise), so
    that the refusal answers the request that is waiting for it; None for text that is not JSON at all."""
    if not isinstance(data, str):
        return None
    try:
        return request_id(json.loads(data, parse_constant=lambda _: None, parse_float=lambda _: 0.0))
    except (ValueError, RecursionError):
        return None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is too large for a number")
    return value


def _has_lone_surrogate(value: Any, depth: int = 0) -> bool:
    if depth > 64:
        return False
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, list):
        return any(_has_lone_surrogate(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k, depth) or _has_lone_surrogate(v, depth + 1) for k, v in value.items())
    return False


class MsgpackCodec(Codec):
    """``plyhall.v1.msgpack``: msgpack in binary frames."""

    subprotocol = MSGPACK
    binary = True

    def __init__(self) -> None:
        # a Packer is not thread-safe: one a thread, kept (packb makes one a call). The thread that made the codec
        # (the import's: the server's event loop) has its own, found by comparing an integer, where a thread-local
        # attribute is a look-up in a dictionary of the thread's (a few hundred instructions a message)
        self._packers = threading.local()
        self._owner: int = _get_ident()
        self._packer: Any = msgpack.Packer(use_bin_type=True)

    def encode(self, msg: dict[str, Any]) -> bytes:
        """Packed bytes (what ``msgpack.packb(msg, use_bin_type=True)`` gives)."""
        if _get_ident() == self._owner:
            return self._packer.pack(msg)
        try:
            packer = self._packers.packer
        except AttributeError:
            packer = self._packers.packer = msgpack.Packer(use_bin_type=True)
        return packer.pack(msg)  # a failed pack leaves the packer empty for the next message

    def decode(self, data: bytes | str, limit: int = MAX_MESSAGE_BYTES) -> Any | ProtocolError:
        """Unpack bytes; strings, extension types and trailing bytes are refused."""
        if isinstance(data, str):
            return ProtocolError("bad_encoding", "plyhall.v1.msgpack takes binary frames, not text")
        if len(data) > limit:
            return _too_large(len(data), limit)
        try:
            value = _unpackb(
                data,
                raw=False,
                strict_map_key=True,
                max_bin_len=0,
                max_ext_len=0,
            )
        except (ValueError, TypeError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError) as exc:
            return ProtocolError("bad_encoding", f"not valid msgpack: {(str(exc) or type(exc).__name__)[:120]}")
        except Exception as exc:  # msgpack raises assorted errors on hostile input
            return ProtocolError("bad_encoding", f"not valid msgpack: {type(exc).__name__}")
        if data.translate(_MARKED) is not data and _has_bad_value(value):  # the same bytes back: none was marked
            return ProtocolError("bad_encoding", "NaN, infinity, bin and ext values are not allowed", request_id(value))
        return value


_MAYBE_BAD = bytes(range(0xC4, 0xCC)) + bytes(range(0xD4, 0xD9))
"""The first bytes of msgpack's floats (0xca, 0xcb), bins (0xc4-0xc6) and exts (0xc7-0xc9, 0xd4-0xd8): a message in
which no byte is one of these holds no float, bin or ext value, so :func:`_has_bad_value` need not walk it (most
moves: a scan in C instead of a walk in Python). A byte inside a string or an integer may match too: then it walks."""
_MARKED: Final = bytes(0 if byte in _MAYBE_BAD else byte for byte in range(256))
"""A translation table that changes the bytes of :data:`_MAYBE_BAD` (to 0) and no other: ``data.translate(_MARKED)``
gives ``data`` itself back, not a copy, when none is in it (a table look-up a byte, several times cheaper than a
regular expression's search for them)."""


def _has_bad_value(value: Any, depth: int = 0) -> bool:
    """True for NaN or infinity, and for the empty bin or ext values that slip past the length limits."""
    # exact type checks, and no call for a string, integer, boolean or null inside a map or list: this runs on
    # every incoming message, most of whose values are such scalars
    if depth > 64:
        return False  # validation rejects deep nesting with a clearer message
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str and _has_bad_value(key, depth):
                return True
            kind = type(item)
            if kind is not str and kind is not int and kind is not bool and item is not None \
                    and _has_bad_value(item, depth + 1):
                return True
        return False
    if kind is list:
        for item in value:
            kind = type(item)
            if kind is not str and kind is not int and kind is not bool and item is not None \
                    and _has_bad_value(item, depth + 1):
                return True
        return False
    if kind is float:
        return not math.isfinite(value)
    if kind is str or kind is int or kind is bool or value is None:
        return False
    return isinstance(value, (bytes, msgpack.ExtType))


CODECS: dict[str, Codec] = {MSGPACK: MsgpackCodec(), JSON: JsonCodec()}


def codec_for(subprotocol: str | None) -> Codec:
    """The codec of a negotiated subprotocol; JSON when the client offered none."""
    if subprotocol is None:
        return CODECS[JSON]
    try:
        return CODECS[subprotocol]
    except KeyError:
        raise ValueError(f"unknown subprotocol {subprotocol!r}; accepted: {', '.join(SUBPROTOCOLS)}") from None
