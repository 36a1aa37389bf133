"""The WebSocket frames a move's messages cross, made and read without websockets' objects (RFC 6455, section 5.2).

Part of the compiled core (``plyhall.compiled``): every message a move sends gets its header here, and every move
that arrives is read here when its read is one whole small frame. ``server.io.transport`` says why the server goes
around websockets for these, and :class:`~server.io.transport.DirectMessages` is where they are used.
"""

from __future__ import annotations

from typing import Any, Final

from websockets.frames import apply_mask
from websockets.protocol import OPEN

# Names a compiled module reads as `Final` are C statics (or inlined constants); any other global is a look-up in
# the module's dictionary each time it is read. A frame reads these (and every push of ``server.io.connections``
# the first, websockets' state of an open connection).
OPEN_STATE: Final = OPEN
_apply_mask: Final = apply_mask

PING_HEADER: Final = b"\x89\x04"
"""The header of the server's keepalive pings (``server.io.keepalive``): FIN + ping, a 4-byte payload, not masked (RFC
6455, 5.2), the frame websockets' ``send_ping`` makes for a server. Written straight to the transport, as
:func:`frame_header`'s frames are."""
SHARED_HEADERS: Final = 1024
"""Frames shorter than this get a header made once, at import (a move's ``moved`` is 130-odd bytes: past the 125 a
one-byte length holds)."""


def _header(opcode: int, length: int) -> bytes:
    if length < 126:
        return bytes((opcode, length))
    if length < 65536:
        return bytes((opcode, 126)) + length.to_bytes(2, "big")
    return bytes((opcode, 127)) + length.to_bytes(8, "big")


_BINARY_HEADERS: Final = tuple(_header(0x82, length) for length in range(SHARED_HEADERS))
_TEXT_HEADERS: Final = tuple(_header(0x81, length) for length in range(SHARED_HEADERS))


def frame_header(binary: bool, length: int) -> bytes:
    """The header of an unfragmented, unmasked WebSocket data frame (RFC 6455, section 5.2).

    Messages are written as whole frames straight to the transport: building them through the
    websockets protocol object costs several Python calls a message, and a server's frames are
    never masked or fragmented here. Control frames (pings, close) stay websockets' own; both
    kinds are whole writes on the event loop, so they never interleave."""
    if length < SHARED_HEADERS:
        return (_BINARY_HEADERS if binary else _TEXT_HEADERS)[length]
    return _header(0x82 if binary else 0x81, length)  # FIN + binary or text


def whole_frame(connection: Any, data: bytes) -> bool:  # bytes, as the event loop's transports hand a read on
    """Take a read that is one whole masked binary frame (a move) or pong with a one-byte length, as websockets'
    parser and ``recv_frame`` would: its payload unmasked, to ``connection.on_message`` or to its
    ``acknowledge_pings``; True when taken, False (nothing done) for anything else, which websockets' way reads.
    ``connection`` is a :class:`~server.io.transport.DirectMessages` connection; ``direct_max`` is what its parser
    allows read whole (-1 while none, see ``server.io.transport.parse_frames``)."""
    length = len(data) - 6  # 2 + 4 bytes (the mask) before the payload
    if length < 0 or data[1] - 0x80 != length:
        return False
    protocol = connection.protocol
    if length > getattr(protocol, "direct_max", -1) or protocol._state is not OPEN_STATE:
        return False
    head = data[0]
    if head == 0x82:
        on_message = connection.on_message
        if on_message is None:
            return False
        on_message(_apply_mask(data[6:], data[2:6]))
        return True
    if head == 0x8A:  # a whole pong (a keepalive ping's answer): all websockets does with it
        connection.acknowledge_pings(_apply_mask(data[6:], data[2:6]))
        return True
    return False
