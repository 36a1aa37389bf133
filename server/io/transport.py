"""Every detail of websockets' internals the server relies on, in one file.

Plyhall uses websockets' public API for everything but four things, each here and each for a
measured or a correctness reason. They touch attributes websockets does not promise to keep, which
is why ``pyproject.toml`` pins websockets below 18: a new major version must be checked against
this file (``tests/test_http_edges.py`` and ``tests/test_server_memory.py`` fail if one breaks).

* **Direct delivery** (:class:`DirectMessages`): whole incoming messages go to a callback as soon
  as websockets has parsed them, instead of through a queue and a ``recv()`` coroutine; and whole
  frames are written straight to the transport (``server.io.frames.frame_header``). Together they took the
  saturation throughput from 6,000 to 14,200 moves a second (docs/SCALING.md). The frames that
  arrive are parsed by websockets' own parser with one shortcut for whole small data frames
  (:func:`parse_frames`), and a connection's ``data_received`` skips websockets' steps that have nothing to do, the
  parser itself for a read that is one whole small binary frame or pong (``tests/test_hot_paths.py`` holds both to
  websockets' answers).
* **Releasing** a closed connection (:func:`release`): breaking the reference cycles websockets and
  asyncio leave, so that closed connections are freed at once instead of by the cyclic collector.
* **Keepalive** (``server.io.keepalive`` sends, :class:`DirectConnection` and :func:`fail_keepalive` here): pings
  written straight to the transport (``server.io.frames.PING_HEADER``), their pongs taken by ``acknowledge_pings``
  (a read that is one whole pong without the parser), and a connection whose pong is late failed in websockets' own send
  context, as websockets' keepalive task does; one task for every connection instead of websockets' task each
  (docs/SCALING.md, "Fifth round: the keepalive sweep").
* **Plain HTTP that always answers** (:class:`HttpAwareProtocol`): websockets' handshake parser
  drops a connection without a word when a request has a body, a transfer coding, or a request
  line it cannot read, and it reads pipelined requests as WebSocket frames. This parser answers
  each with a status line (405 or 413 for a body, 501 for a transfer coding, 400 for garbage)
  and leaves pipelined requests for :func:`answer_pipelined` to answer in order.

The module is long because it keeps every one of these details in one place, as said above.
"""

from __future__ import annotations

import asyncio
import ipaddress
import time
from collections.abc import Awaitable, Callable, Generator, Sequence
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed, InvalidMessage, PayloadTooBig, ProtocolError, SecurityError
from websockets.frames import CloseCode, Frame, Opcode, apply_mask
from websockets.http11 import Request, Response, parse_headers, parse_line
from websockets.protocol import CONNECTING, OPEN, Protocol
from websockets.server import ServerProtocol
from websockets.streams import StreamReader

from protocol.codec import MSGPACK, SUBPROTOCOLS

from .connections import MAX_UNSENT_BYTES, OpeningQuota
from .frames import whole_frame
from .http import json_response, text_response

MAX_BODY_BYTES = 64 * 1024  # a request body this server reads (and drops) before answering 405; more gets 413
PIPELINED_BYTES = 64 * 1024  # bytes of pipelined requests kept to be answered after the first
MAX_PIPELINED = 16  # requests answered on one connection; the one after gets 429 and the connection closes


class HttpRefusal(Exception):
    """A request that gets an error status at once, before any route sees it."""

    def __init__(self, status: int, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.text = text


def read_request(read_line: Callable[..., Generator[None, None, bytes | bytearray]],
                 read_exact: Callable[[int], Generator[None, None, bytearray]]) -> Generator[None, None, Request]:
    """Read one HTTP request head (and a short body, which is dropped: nothing here takes one).

    Raises :class:`HttpRefusal` for what must be answered with an error at once, EOFError when the
    connection ends first."""
    try:
        line = yield from parse_line(read_line, SecurityError)
    except SecurityError:
        raise HttpRefusal(414, "the request line is too long\n") from None
    except EOFError as exc:
        raise _bare_newline(exc) from None
    method, path, version = _request_line(line)
    try:
        headers = yield from parse_headers(read_line)
    except SecurityError:  # a header line too long, or too many of them
        raise HttpRefusal(431, "the request headers are too large\n") from None
    except ValueError:
        raise HttpRefusal(400, "the request headers are malformed\n") from None
    except EOFError as exc:
        raise _bare_newline(exc) from None
    length = _body_length(headers)
    if length:
        yield from read_exact(length)  # dropped: the request is answered 405 by the routes
    return Request(path, headers, method, version)


def _bare_newline(exc: EOFError) -> Exception:
    """A line ended by a bare LF is a request owed an answer; anything else is the connection ending."""
    return HttpRefusal(400, "HTTP lines end with CRLF\n") if "CRLF" in str(exc.__cause__ or exc) else exc


def _request_line(line: bytes | bytearray) -> tuple[str, str, str]:
    """Method, path and version of a request line, or :class:`HttpRefusal` (400)."""
    try:
        method, path, version = line.decode("ascii").split(" ", 2)
    except (UnicodeDecodeError, ValueError):
        raise HttpRefusal(400, "this is not an HTTP request\n") from None
    if version not in ("HTTP/1.1", "HTTP/1.0") or not method.isalpha() or not path.startswith("/"):
        raise HttpRefusal(400, "this is not an HTTP/1.1 request\n")
    return method, path, version


def _body_length(headers: Headers) -> int:
    """The length of a body this server reads and drops, or :class:`HttpRefusal` for one it will not read."""
    if "Transfer-Encoding" in headers:
        raise HttpRefusal(501, "request bodies with a transfer coding (chunked) are not accepted: the HTTP side of "
                               "this server is read-only (GET, HEAD); writes go over the WebSocket at /ws\n")
    lengths = {value.strip() for value in headers.get_all("Content-Length")}
    if len(lengths) > 1 or not all(value.isascii() and value.isdigit() and len(value) <= 18 for value in lengths):
        raise HttpRefusal(400, "the Content-Length header is malformed\n")
    length = int(next(iter(lengths))) if lengths else 0
    if length > MAX_BODY_BYTES:
        raise HttpRefusal(413, "the request has a body, and a large one: the HTTP side of this server is read-only "
                               "(GET, HEAD); writes go over the WebSocket at /ws\n")
    return length


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(text: str) -> list[Network]:
    """``--trusted-proxies`` as networks: addresses or CIDR networks, comma-separated (ValueError naming a bad one)."""
    networks = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        try:
            networks.append(ipaddress.ip_network(part, strict=False))
        except ValueError:
            raise ValueError(f"{part[:60]!r} is not an IP address or network (e.g. 127.0.0.1 or 10.0.0.0/8)") from None
    return networks


def client_address(peer: str, headers: Headers, trusted: Sequence[Network]) -> str:
    """The address a connection counts as, for quotas and back-off: its peer's, or, when the peer is a trusted
    proxy, the last address in ``X-Forwarded-For`` that is not one of the trusted proxies. IPv6 addresses count
    by their /64 network, which one host usually has whole."""
    address = peer
    if trusted and within(peer, trusted):
        hops = [hop.strip() for value in headers.get_all("X-Forwarded-For") for hop in value.split(",")]
        for hop in reversed([h for h in hops if h]):
            if not within(hop, trusted):
                address = hop
                break
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address[:64]
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def within(address: str, networks: Sequence[Network]) -> bool:
    """True when ``address`` (an IP address) is in one of ``networks``."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)


WEBSOCKET_PATH = "/ws"
"""The WebSocket endpoint (``/ws/`` too, as a URL is often written): every other path is plain HTTP."""


def _at_endpoint(request: Request) -> bool:
    return request.path.split("?", 1)[0] in (WEBSOCKET_PATH, WEBSOCKET_PATH + "/")


def is_upgrade(request: Request) -> bool:
    """True for a WebSocket opening handshake to the endpoint (as opposed to a plain HTTP request, even one that
    asks for an upgrade elsewhere)."""
    return _at_endpoint(request) and "websocket" in request.headers.get("Upgrade", "").lower()


def select_subprotocol(connection: ServerConnection, offered: Sequence[str]) -> str | None:
    """The subprotocol of ours the client prefers, in our order of preference; None when it offered none: JSON (an
    offer of only unknown ones is refused at the handshake, :func:`subprotocol_refusal`)."""
    return next((candidate for candidate in SUBPROTOCOLS if candidate in offered), None)


def subprotocol_refusal(request: Request) -> Response | None:
    """400 for a handshake that offers subprotocols, none of them this server's; None for one it can take."""
    offered = [p.strip() for value in request.headers.get_all("Sec-WebSocket-Protocol") for p in value.split(",")
               if p.strip()]
    if offered and not set(offered) & set(SUBPROTOCOLS):
        return text_response(400, f"none of the offered subprotocols ({', '.join(offered)[:200]}) is supported; "
                             f"offer {' or '.join(SUBPROTOCOLS)} (or none, for JSON)\n")
    return None


def endpoint_misuse(request: Request) -> Response | None:
    """The answer to a plain HTTP request that misses the WebSocket endpoint: an upgrade asked for elsewhere (404),
    or the endpoint without one (426); None for any other request."""
    if "websocket" in request.headers.get("Upgrade", "").lower():
        return json_response(404, {"error": "the WebSocket endpoint is /ws"})
    if _at_endpoint(request):
        return text_response(426, "this is the WebSocket endpoint: connect with a WebSocket client (ws://HOST:PORT/ws);"
                             " the web page is at /\n")
    return None


class HttpAwareProtocol(ServerProtocol):
    """websockets' server protocol, with a first parse that answers every plain HTTP request (see the top)."""

    direct_max = -1
    """While the frames' parser waits for data with nothing read of a frame, no fragmented message under way and no
    extension: the largest payload of a frame that ``DirectMessages.data_received`` may read without it; -1 otherwise
    (:func:`parse_frames` sets it)."""

    def parse(self) -> Generator[None]:
        """Read the opening request; then frames (a WebSocket) or nothing more (plain HTTP: what follows is a
        pipelined request, kept for :func:`answer_pipelined`)."""
        if self.state is not CONNECTING:  # pragma: no cover - a parser starts before the handshake
            yield from super().parse()
            return
        try:
            request = yield from read_request(self.reader.read_line, self.reader.read_exact)
        except HttpRefusal as refusal:
            self.handshake_exc = InvalidMessage(refusal.text.strip())
            self.send_response(self.reject(refusal.status, refusal.text))
            yield
            return
        except Exception as exc:  # the connection ended before a whole request: nobody to answer
            self.handshake_exc = InvalidMessage("did not receive a valid HTTP request")
            self.handshake_exc.__cause__ = exc
            self.send_eof()
            self.parser = self.discard()
            next(self.parser)
            yield
            return
        self.events.append(request)
        if is_upgrade(request):
            while self.state is CONNECTING and not self.reader.eof:  # what comes before the answer is read once
                yield  # the handshake succeeds
            # frames, as websockets reads them after its own handshake parse; the end of the stream before the
            # answer (the client gave up waiting) fails the connection there, CLOSED and never answered. The frames'
            # parser becomes the protocol's parser itself: every read resumes it without this generator in between
            frames = parse_frames(self)
            self.parser = frames  # set first: an error in the first step replaces it by websockets' discard()
            next(frames)
            yield
            return
        while not self.reader.eof:  # plain HTTP: keep (a bounded amount of) what follows, for the pipelined answers
            if len(self.reader.buffer) > PIPELINED_BYTES:
                del self.reader.buffer[PIPELINED_BYTES:]
            yield
        # The client ended its side before the answer was sent (say it gave up while this process was stopped):
        # the connection is failed, CLOSED and never answered, as websockets' own parser does (websockets asserts
        # that a lost connection is CLOSED: a parser that waited on here raised AssertionError when it was lost).
        self.fail(CloseCode.ABNORMAL_CLOSURE)
        yield


def parse_frames(protocol: Protocol) -> Generator[None]:
    """websockets' own frame parser (``Protocol.parse`` of websockets 17), with one shortcut: a whole, small, masked,
    unfragmented data frame at the start of the buffer (every message of a game) is read straight from the buffer,
    without the parser's chain of generators (``at_eof``, ``Frame.parse`` and its four ``read_exact``) and the
    struct and enum calls it makes a frame. Everything else (control frames, fragments, large or unmasked frames,
    extensions, a frame not yet whole, the end of the stream) takes websockets' own way, errors included."""
    reader = protocol.reader
    small = _direct_max(protocol)  # what limits a frame read whole outside a fragmented message: set at the handshake
    try:
        while True:
            buffer = reader.buffer
            if not buffer:  # websockets' reader.at_eof(), without a generator a frame
                if reader.eof:
                    if protocol.debug:
                        protocol.logger.debug("< EOF")
                    raise EOFError("unexpected end of stream")
                protocol.direct_max = small if protocol.current_size is None else -1  # a whole small frame: no parser
                yield
                protocol.direct_max = -1  # resumed: the parser reads what came
                continue
            frame = _whole_data_frame(protocol, buffer)
            if frame is None:
                frame = yield from Frame.parse(reader.read_exact, mask=True, max_size=_frame_limit(protocol),
                                               extensions=protocol.extensions)
                _received(protocol, frame)
                continue
            protocol.events.append(frame)  # all recv_frame does with a whole data frame outside a fragmented one
    except ProtocolError as exc:
        protocol.fail(CloseCode.PROTOCOL_ERROR, str(exc))
        protocol.parser_exc = exc
    except EOFError as exc:
        protocol.fail(CloseCode.ABNORMAL_CLOSURE, str(exc))
        protocol.parser_exc = exc
    except UnicodeDecodeError as exc:
        protocol.fail(CloseCode.INVALID_DATA, f"{exc.reason} at position {exc.start}")
        protocol.parser_exc = exc
    except PayloadTooBig as exc:
        exc.set_current_size(protocol.current_size)
        protocol.fail(CloseCode.MESSAGE_TOO_BIG, str(exc))
        protocol.parser_exc = exc
    except Exception as exc:
        protocol.logger.error("parser failed", exc_info=True)
        protocol.fail(CloseCode.INTERNAL_ERROR)  # no details: they may be security-sensitive
        protocol.parser_exc = exc
    # after an error, fail() replaced this parser by discard()
    yield
    raise AssertionError("parse() shouldn't step after error")


def _received(protocol: Protocol, frame: Frame) -> None:
    if protocol.debug:
        protocol.logger.debug("< %s", frame)
    protocol.recv_frame(frame)


def _direct_max(protocol: Protocol) -> int:
    """The largest payload (at most 125 bytes: a one-byte length) of a data frame outside a fragmented message that
    may be read whole without the parser; -1 for none (an extension, debug logging). What it depends on is settled
    once the opening handshake is done."""
    if protocol.extensions or protocol.debug:
        return -1
    limit = _frame_limit(protocol)
    return 125 if limit is None else min(125, limit)


def _frame_limit(protocol: Protocol) -> int | None:
    """The largest payload the next frame may carry (websockets' rule: the message and fragment limits)."""
    max_size = None
    if protocol.max_message_size is not None:
        if protocol.current_size is None:
            max_size = protocol.max_message_size
        else:
            max_size = protocol.max_message_size - protocol.current_size
    if protocol.max_fragment_size is not None:
        max_size = protocol.max_fragment_size if max_size is None else min(max_size, protocol.max_fragment_size)
    return max_size


def _whole_data_frame(protocol: Protocol, buffer: bytearray) -> Frame | None:
    """The frame at the start of ``buffer`` (taken out of it) when it is a whole masked data frame with FIN set, no
    reserved bit, a payload under 126 bytes within the limits, and no fragmented message or extension is under way;
    None (the buffer untouched) otherwise."""
    if len(buffer) < 6:
        return None
    head1 = buffer[0]
    length = buffer[1] - 0x80  # the mask bit set (a client's frames are masked), the length under 126
    if (head1 != 0x82 and head1 != 0x81) or not 0 <= length < 126 or len(buffer) < 6 + length:
        return None
    if protocol.current_size is not None or protocol.extensions:
        return None
    limit = protocol.max_message_size  # _frame_limit's answer outside a fragmented message, without the call
    if limit is not None and length > limit or protocol.max_fragment_size is not None and \
            length > protocol.max_fragment_size:
        return None
    data = apply_mask(buffer[6:6 + length], buffer[2:6])
    del buffer[:6 + length]
    frame = Frame(Opcode.BINARY if head1 == 0x82 else Opcode.TEXT, data)
    if protocol.debug:
        protocol.logger.debug("< %s", frame)
    return frame


def pipelined(connection: ServerConnection) -> list[Request | HttpRefusal]:
    """The whole requests that followed the first on ``connection`` (a client pipelining), in order."""
    buffer = bytes(connection.protocol.reader.buffer)
    del connection.protocol.reader.buffer[:]
    found: list[Request | HttpRefusal] = []
    reader = StreamReader()
    reader.feed_data(buffer)
    reader.feed_eof()
    while reader.buffer and len(found) <= MAX_PIPELINED:
        parse = read_request(reader.read_line, reader.read_exact)
        try:
            next(parse)
        except StopIteration as done:
            found.append(done.value)
            continue
        except HttpRefusal as refusal:
            found.append(refusal)
            break  # what follows a refused request cannot be told apart
        except Exception:  # an incomplete request at the end: the connection closes before it is whole
            break
        break  # pragma: no cover - with all data fed, a parse never waits
    return found


async def answer_pipelined(connection: ServerConnection, first: Response,
                           respond: Callable[[Request], Awaitable[Response]]) -> Response:
    """``first`` (the answer to a plain HTTP request) followed by the answers to the requests the client sent
    after it without waiting, in order, as one response to send; the last one closes the connection."""
    more = pipelined(connection)
    if not more:
        return first
    answers = [first]
    for request in more[:MAX_PIPELINED]:
        if isinstance(request, HttpRefusal):
            answers.append(connection.protocol.reject(request.status, request.text))
        else:
            answers.append(await respond(request))
    if len(more) > MAX_PIPELINED:
        answers.append(connection.protocol.reject(429, f"at most {MAX_PIPELINED} pipelined requests are answered "
                                                       "on one connection\n"))
    return Pipelined(answers)


class Pipelined(Response):
    """Several responses sent back to back (HTTP pipelining): all but the last keep the connection open."""

    def __init__(self, answers: list[Response]) -> None:
        last = answers[-1]
        super().__init__(last.status_code, last.reason_phrase, last.headers, last.body)
        self.answers = answers

    def serialize(self) -> bytes:
        """Every response, in order."""
        parts = []
        for index, answer in enumerate(self.answers):
            if index < len(self.answers) - 1:
                headers = Headers([(k, v) for k, v in answer.headers.raw_items() if k.lower() != "connection"])
                answer = Response(answer.status_code, answer.reason_phrase, headers, answer.body)
            parts.append(answer.serialize())
        return b"".join(parts)


MAX_FRAGMENTS = 64
"""Parts a fragmented message may come in (a 64 KB message in 1 KB pieces): more, even empty ones, close the
connection (1009). Four million empty continuation frames held every room for 17 s, and their parts grew memory."""


class DirectMessages:
    """Mixed into a websockets connection class: each whole incoming message goes to ``on_message`` as
    soon as it is parsed, instead of being queued for a ``recv()`` coroutine to pick up (a future, a
    task step and a queue a message). Fragmented messages, pings and closes take websockets' usual
    way, as does everything while ``on_message`` is None."""

    on_message: Callable[[bytes | str], None] | None = None
    charge: Callable[[float], bool] | None = None
    """Spends the rate limit's tokens for frames that are no message (a ping; each part of a fragmented message):
    False once the connection is too deep in debt, and it is closed (1008)."""

    def read_buffered(self) -> None:
        """Read the frames a client sent in the same packets as its opening request, once ``on_message`` is set:
        RFC 6455 tells a client to wait for the server's answer first, but some do not, and websockets' parser reads
        on only when more data comes, so they waited for the client's next bytes (a login that waits for nothing
        else was never answered)."""
        if self.protocol.reader.buffer:  # type: ignore[attr-defined]
            self.data_received(b"")

    def data_received(self, data: bytes) -> None:
        """websockets' own ``data_received`` (``asyncio.Connection``, websockets 17) without its per-message steps
        that have nothing to do: the protocol's writes are sent only when there are some (a pong, a close), the
        close deadline is looked at only once the connection is no longer open, a whole binary message goes
        straight to ``on_message``, and a whole pong straight to ``acknowledge_pings`` (websockets' parser and
        ``recv_frame`` do nothing else with one). ``tests/test_hot_paths.py`` holds it to websockets' answers."""
        if whole_frame(self, data):  # a whole small move or pong: what parse_frames and recv_frame would do
            return
        protocol = self.protocol  # type: ignore[attr-defined]
        reader = protocol.reader
        if reader.eof:
            protocol.receive_data(data)  # websockets' error: data after the end of the stream
        else:  # receive_data and the reader's feed_data, without their two calls
            reader.buffer += data
            next(protocol.parser)
        events = protocol.events
        if events:
            protocol.events = []
        if protocol.writes:
            try:
                self.send_data()  # type: ignore[attr-defined]
            except Exception as exc:
                if self.debug:  # type: ignore[attr-defined]
                    self.logger.debug("! error while sending data", exc_info=True)  # type: ignore[attr-defined]
                self.set_connection_exc(exc)  # type: ignore[attr-defined]
            transport = self.transport  # type: ignore[attr-defined]
            if transport.get_write_buffer_size() > MAX_UNSENT_BYTES:  # pongs to pings a client never reads on:
                transport.abort()  # dropped as any client that far behind (websockets answers every ping)
                return
        if protocol._state is not OPEN and protocol.close_expected() and self.close_deadline is None and \
                self.close_timeout is not None:  # type: ignore[attr-defined]
            self.close_deadline = self.loop.time() + self.close_timeout  # type: ignore[attr-defined]
        for event in events:
            on_message = self.on_message
            if on_message is not None and type(event) is Frame and event.fin and event.opcode is Opcode.BINARY:
                on_message(bytes(event.data))
            else:
                self.process_event(event)

    frames_refused = False
    """The connection was closed over frames it may not send (:meth:`_refuse_frames`)."""
    fragments: tuple[Opcode, list[bytes]] | None = None
    """A fragmented message being received: its opcode and its parts so far (websockets' parser has checked their
    order and their total size)."""

    def process_event(self, event: Any) -> None:
        """A data frame goes to ``on_message``: a whole message at once, a fragmented one once its last part has
        come (in its place among the messages: through websockets' own queue it came after the whole messages
        sent behind it); everything else to websockets."""
        if self.on_message is not None and type(event) is Frame:
            opcode = event.opcode
            if self.frames_refused:  # closed below over a flood of frames: the rest of the read is dropped
                return
            charge = self.charge
            if (opcode is Opcode.PING or opcode is Opcode.CONT or not event.fin) and charge is not None \
                    and not charge(1.0):  # a frame that is no message costs as one: floods of them are closed
                self._refuse_frames(CloseCode.POLICY_VIOLATION, "rate limit exceeded")
                return
            if opcode is Opcode.BINARY or opcode is Opcode.TEXT:
                if event.fin:
                    self._deliver(opcode, bytes(event.data))
                else:
                    self.fragments = (opcode, [bytes(event.data)])
                return
            if opcode is Opcode.CONT and self.fragments is not None:
                parts = self.fragments[1]
                if len(parts) >= MAX_FRAGMENTS:
                    self._refuse_frames(CloseCode.MESSAGE_TOO_BIG, f"a message in more than {MAX_FRAGMENTS} "
                                                                   "fragments")
                    return
                parts.append(bytes(event.data))
                if event.fin:
                    kind = self.fragments[0]
                    self.fragments = None
                    self._deliver(kind, b"".join(parts))
                return
        super().process_event(event)  # type: ignore[misc]

    def _refuse_frames(self, code: CloseCode, reason: str) -> None:
        """Close the connection (``code``, ``reason``) over frames it may not send, dropping what was received."""
        self.fragments = None
        self.frames_refused = True
        self.protocol.fail(code, reason)  # type: ignore[attr-defined]
        try:
            self.send_data()  # type: ignore[attr-defined]
        except Exception as exc:
            self.set_connection_exc(exc)  # type: ignore[attr-defined]

    def _deliver(self, opcode: Opcode, data: bytes) -> None:
        """One whole message to ``on_message``: a text message as text. Text that is not UTF-8 is refused as any
        bad message is, the connection kept: the JSON codec is handed its bytes (it says they are not UTF-8), the
        msgpack codec a text (it takes binary frames only)."""
        assert self.on_message is not None
        if opcode is Opcode.BINARY:
            self.on_message(data)
            return
        try:
            text = data.decode()
        except UnicodeDecodeError:
            self.on_message("" if self.subprotocol == MSGPACK else data)  # type: ignore[attr-defined]
            return
        self.on_message(text)


class DirectConnection(DirectMessages, ServerConnection):
    """The server's connections: whole messages straight to the hall (:class:`DirectMessages`), and an opening
    handshake that answers any plain HTTP request (:class:`HttpAwareProtocol`)."""

    keepalive_payload: bytes | None = None
    """The payload of the server's keepalive ping that waits for its pong (``server.io.keepalive``); None for none."""
    keepalive_since = 0.0
    """When that ping was sent (the last one, once answered), or when the keepalive sweep took the connection."""
    keepalive_unsent = 0
    """The bytes waiting in the transport, unsent, when that ping was written behind them."""

    opening_address: str | None = None
    """The address this connection counts as in the server's :class:`OpeningQuota` until its opening request is
    answered (None once it is; "" when it is not counted)."""

    def __init__(self, protocol: ServerProtocol, *args: Any, opening: OpeningQuota | None = None,
                 **kwargs: Any) -> None:
        protocol.__class__ = HttpAwareProtocol  # made by websockets' serve(); nothing was parsed yet
        protocol.parser = protocol.parse()
        next(protocol.parser)
        super().__init__(protocol, *args, **kwargs)
        self.opening = opening

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Count the new connection against its address's opening quota; past it, answer 429 and close at once."""
        peer = transport.get_extra_info("peername")
        if self.opening is not None and peer:
            address, admitted = self.opening.admit(str(peer[0]))
            if not admitted:  # answered and ended by the quota; websockets never sees it
                self.opening.refuse(address, transport)  # type: ignore[arg-type]  # uvloop's is no asyncio.Transport
                return
            self.opening_address = address
        super().connection_made(transport)

    async def handshake(self, *args: Any, **kwargs: Any) -> None:
        """websockets' opening handshake; the connection leaves the opening quota when it ends, however."""
        try:
            await super().handshake(*args, **kwargs)
        finally:
            if self.opening_address is not None and self.opening is not None:
                self.opening.done(self.opening_address)
                self.opening_address = None

    def acknowledge_pings(self, data: bytes) -> None:
        """A pong: the keepalive sweep's ping answered (its latency kept, as websockets keeps its own pings'),
        or websockets' own ``ping()``'s."""
        if data == self.keepalive_payload:
            self.keepalive_payload = None
            self.latency = time.monotonic() - self.keepalive_since
        else:
            super().acknowledge_pings(data)


async def fail_keepalive(ws: DirectConnection) -> None:
    """Fail ``ws`` as websockets' ``keepalive()`` does on a ping timeout: in its send context, which sends the close
    frame, waits ``close_timeout`` for the peer to end the connection and then aborts it. That context first waits
    for the socket to drain, which a peer that stopped reading never lets happen: a second past ``close_timeout``
    the connection is aborted all the same."""
    try:
        async with asyncio.timeout(None if ws.close_timeout is None else ws.close_timeout + 1.0):  # websockets' first
            async with ws.send_context():
                ws.protocol.fail(CloseCode.INTERNAL_ERROR, "keepalive ping timeout")
    except ConnectionClosed:
        pass
    except TimeoutError:
        ws.transport.abort()


def release(ws: DirectConnection) -> None:
    """Break the reference cycles a closed connection leaves in websockets and asyncio, so that reference
    counting frees it at once, without waiting for (or pausing in) the cyclic garbage collector.

    Each is an attribute of a finished object: our message callback (which holds our connection, which
    holds this one), the protocol's parser (a generator that holds the protocol),
    the subprotocol selector (a closure that holds the connection) and the transport's read callback (a
    bound method of the transport itself). ``tests/test_server_memory.py`` checks that nothing is left.
    """
    ws.on_message = None  # a closure holding our Connection, which holds ws
    ws.charge = None  # a bound method of its rate limit, which it holds too
    protocol = ws.protocol
    parser = getattr(protocol, "parser", None)
    if parser is not None:
        protocol.parser = None  # type: ignore[assignment]
        parser.close()
    if getattr(protocol, "select_subprotocol", None) is not None:
        protocol.select_subprotocol = None  # type: ignore[assignment,method-assign]
    transport = ws.transport
    if transport is not None and transport.is_closing() and hasattr(transport, "_read_ready_cb"):
        transport._read_ready_cb = None  # type: ignore[attr-defined]


