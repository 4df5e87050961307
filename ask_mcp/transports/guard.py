"""daphne's connection guard: body size before the body is read, a deadline for headers, and connections per client address; knows nothing of MCP.

daphne (through Twisted's `http.HTTPChannel`) reads a whole request body before the
application sees it, and waits for headers for as long as bytes keep trickling in. Under
`make run` with no proxy in front, a 300 MB unauthenticated POST was read whole before its 401
(the worker went from 79 to 383 MB), and about a thousand connections with unfinished headers
used up the process's file descriptors. This module is the hook :func:`ask_mcp.transports.
daphne.tune_daphne` installs in daphne's factory, in three small parts:

- :class:`GuardedChannel` (the channel each connection gets): a declared `Content-Length` over
  the limit is answered `413` as soon as the headers end, before one byte of the body is read;
  a chunked body is cut with `413` as soon as it passes the limit (:func:`count_body`, called
  by daphne's request for every piece); headers that do not complete within
  `HEADER_TIMEOUT_SECONDS` of the connection opening (or of the previous response) are
  answered `408` and the connection dropped. The limit is `MAX_BODY_BYTES` for `/mcp`, and
  the larger of it and Django's `DATA_UPLOAD_MAX_MEMORY_SIZE` for the inbox and admin pages.
  A body must then arrive by :func:`~ask_mcp.transports.deadlines.body_deadline`
  (`BODY_TIMEOUT_SECONDS`, then at least `BODY_MIN_BYTES_PER_SECOND`), or gets `408`: one byte
  every 25 s no longer holds a connection.
- :class:`AddressCount`: at most `MAX_CONNECTIONS_PER_ADDRESS` connections from one client
  address at once. A request still being read is bound tighter than a response being held: one
  connection more cuts (`408`) that address's connection that has been sending its request
  longest, and only when every one holds a response is it answered `503` and closed. One local
  process holding every place with unfinished requests thus no longer locks out the other
  local clients (nginx on the same host included). Every loopback address counts as one (all
  of 127.0.0.0/8 reaches the server, so a local user could otherwise pick a new address per
  connection).

A refused body is not buffered: after the `413` the connection's write side is shut and what
the client still sends is discarded for at most `LINGER_SECONDS`, so it can read the answer.
"""

from __future__ import annotations

import ipaddress
import time
from typing import Any, Final

from twisted.internet import protocol as twisted_protocol
from twisted.protocols import policies
from twisted.web import http

from ask_mcp import conf
from ask_mcp.transports.deadlines import body_deadline, too_slow_text

# Twisted's classes are typed only in part (their transports are Optional, their callbacks
# untyped); the guard treats them as daphne's own tuning does, as untyped bases.
HTTPChannel: Any = http.HTTPChannel
ProtocolWrapper: Any = policies.ProtocolWrapper
Protocol: Any = twisted_protocol.Protocol

MCP_PATH: Final = b"/mcp"
"""The endpoint whose bodies MAX_BODY_BYTES bounds (other paths are Django's pages)."""
LINGER_SECONDS: Final = 5.0
"""How long a connection whose body was refused may go on sending before it is cut: long enough
for a client that writes its whole body before reading (httpx, requests) to read the 413 of a
10 MB body over loopback, short enough that a slow sender holds nothing for long."""
LOOPBACK: Final = "loopback"
"""The one key every loopback client address is counted under."""


def body_limit(path: bytes) -> tuple[int, str]:
    """The most body bytes a request to `path` may send, and the setting that says so."""
    max_body = conf.values().max_body_bytes
    if path.split(b"?", 1)[0] == MCP_PATH:
        return max_body, "ASK_MCP['MAX_BODY_BYTES']"
    from django.conf import settings

    pages = getattr(settings, "DATA_UPLOAD_MAX_MEMORY_SIZE", None)
    if pages is None or pages <= max_body:
        return max_body, "ASK_MCP['MAX_BODY_BYTES']"
    return pages, "DATA_UPLOAD_MAX_MEMORY_SIZE"


def too_large_response(path: bytes, limit: int, setting: str) -> bytes:
    """The whole `413` response: the endpoint's JSON-RPC error for /mcp, plain text elsewhere."""
    if path.split(b"?", 1)[0] == MCP_PATH:
        from ask_mcp.protocol.jsonrpc import encode, error_message
        from ask_mcp.transports.admission import _too_large

        body = encode(error_message(None, _too_large(limit).error))
        kind = b"application/json"
    else:
        body = f"Payload Too Large: the body exceeds {limit} bytes ({setting})\n".encode()
        kind = b"text/plain; charset=utf-8"
    return response(413, b"Payload Too Large", kind, body)


def response(status: int, reason: bytes, kind: bytes, body: bytes) -> bytes:
    head = (
        b"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
        % (status, reason, kind, len(body))
    )
    return head + body


class GuardedChannel(HTTPChannel):  # type: ignore[misc]
    """Twisted's HTTP channel with a body limit and a deadline for every request's headers."""

    _refused = False
    _header_timer: Any = None
    _body_timer: Any = None
    _body_started = 0.0
    _body_limit: tuple[int, str] = (0, "")
    _body_seen = 0
    counted: Any = None
    """The :class:`AddressCount` and key this connection is counted under (set when admitted)."""

    def connectionMade(self) -> None:
        super().connectionMade()
        self._reading(True)
        self._arm_header_timer()

    def allHeadersReceived(self) -> None:
        self._disarm_header_timer()
        path: bytes = getattr(self, "_path", b"")
        limit, setting = self._body_limit = body_limit(path)
        self._body_seen = 0
        if self.length is not None and self.length > limit:
            # Refused before Twisted opens a buffer for it (or says 100 Continue).
            self.refuse(too_large_response(path, limit, setting))
            return
        if self.length != 0:  # a body follows (None: chunked)
            self._body_started = time.monotonic()
            self._arm_body_timer()
        super().allHeadersReceived()

    def allContentReceived(self) -> None:
        self._disarm_body_timer()
        self._reading(False)  # now a response being made or held: never cut for room
        super().allContentReceived()

    def count_body(self, size: int) -> bool:
        """A piece of this request's body arrived: False (and 413 sent) once past the limit."""
        self._body_seen += size
        limit, setting = self._body_limit
        if self._body_seen <= limit:
            return True
        self.refuse(too_large_response(getattr(self, "_path", b""), limit, setting))
        return False

    def refuse(self, answer: bytes) -> None:
        """Answer `answer` and end the connection; what the client still sends is discarded."""
        if self._refused:
            return
        self._refused = True
        self._disarm_header_timer()
        self._disarm_body_timer()
        self._reading(False)
        self.persistent = False
        self.transport.write(answer)
        half_close = getattr(self.transport, "loseWriteConnection", None)
        if half_close is None:
            self.transport.loseConnection()
            return
        half_close()
        self._header_timer = self.callLater(LINGER_SECONDS, self.transport.abortConnection)

    def dataReceived(self, data: bytes) -> None:
        if not self._refused:
            super().dataReceived(data)

    def rawDataReceived(self, data: bytes) -> None:
        if not self._refused:
            super().rawDataReceived(data)

    def requestDone(self, request: Any) -> None:
        # Armed before Twisted replays pipelined bytes, whose headers may end (and disarm) at once.
        if self.persistent and not self._refused:
            self._reading(True)
            self._arm_header_timer()
        super().requestDone(request)

    def connectionLost(self, reason: Any) -> None:
        self._disarm_header_timer()
        self._disarm_body_timer()
        self._reading(False)
        super().connectionLost(reason)

    def _reading(self, reading: bool) -> None:
        """Tell the address's count whether this connection is still sending its request."""
        if self.counted is not None:
            count, key = self.counted
            count.reading_now(key, self, reading)

    def cut_for_room(self) -> None:
        """`408` and closed: another connection from this address needs the place it holds
        while still sending its request (MAX_CONNECTIONS_PER_ADDRESS)."""
        limit = conf.values().max_connections_per_address
        body = (
            f"Request Timeout: this connection was still sending its request when another from "
            f"the same address needed its place ({limit} open, "
            "ASK_MCP['MAX_CONNECTIONS_PER_ADDRESS'])\n"
        ).encode()
        self._refused = True
        self._disarm_header_timer()
        self._disarm_body_timer()
        self._reading(False)
        self.persistent = False
        self.transport.write(response(408, b"Request Timeout", b"text/plain", body))
        self.transport.loseConnection()  # its place now, not after a linger

    def _arm_body_timer(self) -> None:
        self._disarm_body_timer()
        delay = body_deadline(self._body_started, self._body_seen) - time.monotonic()
        self._body_timer = self.callLater(max(0.0, delay), self._body_due)

    def _disarm_body_timer(self) -> None:
        if self._body_timer is not None and self._body_timer.active():
            self._body_timer.cancel()
        self._body_timer = None

    def _body_due(self) -> None:
        """The deadline as it stood when armed: re-armed if bytes since moved it, else 408."""
        self._body_timer = None
        if body_deadline(self._body_started, self._body_seen) > time.monotonic():
            self._arm_body_timer()
            return
        self.refuse(response(408, b"Request Timeout", b"text/plain", too_slow_text()))

    def _arm_header_timer(self) -> None:
        self._disarm_header_timer()
        seconds = conf.values().header_timeout_seconds
        self._header_timer = self.callLater(seconds, self._headers_too_slow)

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None and self._header_timer.active():
            self._header_timer.cancel()
        self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        seconds = conf.values().header_timeout_seconds
        body = (
            f"Request Timeout: the request's headers did not arrive within {seconds:g} s "
            "(ASK_MCP['HEADER_TIMEOUT_SECONDS'])\n"
        ).encode()
        self._refused = True
        self.transport.write(response(408, b"Request Timeout", b"text/plain", body))
        self.transport.loseConnection()


class _Counted(ProtocolWrapper):  # type: ignore[misc]
    """A connection counted under its client address until it closes (even after a WebSocket
    upgrade, which daphne does by swapping this wrapper's `wrappedProtocol`)."""

    def __init__(self, count: AddressCount, key: str, wrapped: Any) -> None:
        super().__init__(count, wrapped)
        self.key = key


class _TooMany(Protocol):  # type: ignore[misc]
    def __init__(self, limit: int) -> None:
        self.limit = limit

    def connectionMade(self) -> None:
        body = (
            f"Service Unavailable: {self.limit} connections from this address are already open "
            "(ASK_MCP['MAX_CONNECTIONS_PER_ADDRESS'])\n"
        ).encode()
        self.transport.write(response(503, b"Service Unavailable", b"text/plain", body))
        self.transport.loseConnection()


class AddressCount:
    """Open connections per client address, for the factory that builds them."""

    def __init__(self) -> None:
        self.open: dict[str, int] = {}
        self.reading: dict[str, dict[Any, None]] = {}
        """Per address, its connections still sending their request, longest first."""

    def admit(self, address: Any, protocol: Any) -> Any:
        """`protocol` wrapped to be counted; when the address is full, its connection sending
        its request longest is cut to make room, or (none is) a protocol answering 503."""
        key = address_key(getattr(address, "host", ""))
        limit = conf.values().max_connections_per_address
        held = self.open.get(key, 0)
        if held >= limit:
            slowest = next(iter(self.reading.get(key, ())), None)
            if slowest is None:
                return _TooMany(limit)
            slowest.cut_for_room()  # aborted: its count goes when Twisted reports it closed
        self.open[key] = held + 1
        channel = getattr(protocol, "_channel", None)
        if isinstance(channel, GuardedChannel):
            channel.counted = (self, key)
        return _Counted(self, key, protocol)

    def reading_now(self, key: str, channel: Any, reading: bool) -> None:
        """Note `channel` (of `key`) as sending its request from now (last in line), or not."""
        mine = self.reading.get(key)
        if mine is not None:
            mine.pop(channel, None)
        if reading:
            self.reading.setdefault(key, {})[channel] = None
        elif mine is not None and not mine:
            del self.reading[key]

    def registerProtocol(self, protocol: _Counted) -> None:
        return None  # counted in admit: before the connection is made, so none slips past

    def unregisterProtocol(self, protocol: _Counted) -> None:
        held = self.open.get(protocol.key, 0)
        if held <= 1:
            self.open.pop(protocol.key, None)
        else:
            self.open[protocol.key] = held - 1


def address_key(host: str) -> str:
    """The key a client address is counted under: itself, or one key for every loopback one."""
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    mapped = getattr(address, "ipv4_mapped", None)
    if address.is_loopback or (mapped is not None and mapped.is_loopback):
        return LOOPBACK
    return str(address)


def guarded_channel_protocol() -> Any:
    """What Twisted's factory builds per connection: its generic wrapper (HTTP/1.1 or, when
    negotiated, HTTP/2) around a :class:`GuardedChannel`."""
    generic: Any = http._GenericHTTPChannelProtocol
    return generic(GuardedChannel())
