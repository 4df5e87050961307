"""The /mcp endpoint: the ASGI edge between HTTP and Server.

It checks what only HTTP can show (method, Host, Origin, content type, body size), reads the
body without buffering past the limit, hands one parsed message to the server, and writes the
reply as JSON, or as an SSE stream once the call has notifications to send or runs long. A
client that closes the connection cancels its call. No MCP logic lives here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any, Final

from ask_mcp import conf, runtime
from ask_mcp.protocol import mcp, sse
from ask_mcp.protocol.era import LEGACY, MODERN, declared_era, era_of
from ask_mcp.protocol.jsonrpc import (
    INVALID_REQUEST,
    JsonRpcError,
    MessageError,
    Request,
    RequestId,
    Response,
    encode,
    error_message,
    http_status,
    parse_message,
    result_message,
)
from ask_mcp.server.core import Server
from ask_mcp.server.eras.legacy import LegacySession
from ask_mcp.server.identity import Identity
from ask_mcp.team.auth import Unauthorized, authenticate
from ask_mcp.transports.access_log import SELF_LOGGED, Exchange
from ask_mcp.transports.admission import (
    HttpProblem,
    accepted,
    check_host,
    check_origin,
    own_origin,
    read_body,
    read_headers,
)

if TYPE_CHECKING:
    from ask_mcp.workers.sessions import LegacySessions

logger = logging.getLogger("ask_mcp.transports.http")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_JSON_HEADERS: Final = [(b"content-type", b"application/json")]
_SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]
WATCH_AFTER_SECONDS: Final = 0.05
"""A request still running after this long gets its connection watched (disconnect cancels)."""


class HttpStream:
    """The response of one request: JSON by default, switched to SSE on the first notification."""

    __slots__ = ("_send", "allows_sse", "closed", "exchange", "started")

    def __init__(self, send: Send, *, allows_sse: bool, exchange: Exchange | None = None) -> None:
        self._send = send
        self.allows_sse = allows_sse
        self.started = False
        self.closed = False
        self.exchange = exchange

    async def _start(self) -> None:
        self.started = True
        await self._send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})

    async def notify(self, message: dict[str, Any]) -> None:
        if not self.allows_sse or self.closed:
            return  # a client that cannot read a stream gets the final response only
        if not self.started:
            await self._start()
        await self._send(
            {"type": "http.response.body", "body": sse.event(encode(message)), "more_body": True}
        )

    async def keepalive(self) -> None:
        if not self.allows_sse or self.closed:
            return
        if not self.started:
            await self._start()
        await self._send({"type": "http.response.body", "body": sse.KEEPALIVE, "more_body": True})

    async def close(self) -> None:
        """End the response without a message (a cancelled legacy request, a GET stream)."""
        if self.closed and not self.started:
            return
        self.closed = True
        if not self.started:
            await self._start()
        await self._send({"type": "http.response.body", "body": b"", "more_body": False})

    async def finish(self, reply: dict[str, Any], status: int = 200) -> None:
        self.closed = True
        if self.exchange is not None:
            self.exchange.reply = reply
        body = encode(reply)
        if self.started:
            await self._send(
                {"type": "http.response.body", "body": sse.event(body), "more_body": False}
            )
            return
        await send_json(self._send, status, body)


async def send_json(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                *_JSON_HEADERS,
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def send_empty(send: Send, status: int) -> None:
    await send({"type": "http.response.start", "status": status, "headers": []})
    await send({"type": "http.response.body", "body": b""})


async def wait_for_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


STOPPING_TEXT: Final = (
    "Service Unavailable: this server process is shutting down (a deploy or a restart). Send "
    "the same request again: another worker, or this one once restarted, takes it, and every "
    "question still waiting is kept."
)
"""The 503 of a request that reaches a worker while it stops (runtime.stop_gracefully)."""


class McpEndpoint:
    """ASGI application for the MCP endpoint; route it at /mcp under Channels' URLRouter.

    Serves both eras on one URL: a request naming a 2026-07-28 (or unknown) version in its
    MCP-Protocol-Version header, or carrying modern `_meta` outside any session, is stateless;
    initialize, a session id or an initialize-era version header selects a legacy session.
    """

    def __init__(self, server: Server | None = None, sessions: LegacySessions | None = None):
        self._server = server
        self._sessions = sessions

    @property
    def server(self) -> Server:
        return self._server if self._server is not None else runtime.get_server()

    @property
    def sessions(self) -> LegacySessions:
        return self._sessions if self._sessions is not None else runtime.get_sessions()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            raise ValueError(f"McpEndpoint serves HTTP only, not {scope['type']!r}")
        exchange = scope["ask_mcp.exchange"] = Exchange(scope["method"])
        SELF_LOGGED.add(scope["path"])

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                exchange.status = message["status"]
            await send(message)

        try:
            await self._serve(scope, receive, sending, exchange)
        finally:
            exchange.finish()

    async def _serve(self, scope: Scope, receive: Receive, send: Send, exchange: Exchange) -> None:
        """One request, its method, tool and caller noted on `exchange` as they are read."""
        # long: the HTTP-level checks in the order of the validation ladder in
        # docs/reference/endpoint.md, in one try so each refusal is answered the same way;
        # splitting them would hide that order.
        headers, names = read_headers(scope)
        session_id = headers.get(mcp.HEADER_SESSION_ID)
        declared = declared_era(headers.get(mcp.HEADER_PROTOCOL_VERSION), session_id)
        method = scope["method"]
        try:
            if self.server.table.stopping:
                raise HttpProblem(503, STOPPING_TEXT, [(b"retry-after", b"1")])
            check_host(headers)
            check_origin(headers)
            try:
                who = await authenticate(
                    headers,
                    scope.get("client"),
                    anonymous_loopback=conf.values().allow_anonymous_loopback,
                )
            except Unauthorized as exc:
                raise HttpProblem(
                    401, f"Unauthorized: {exc}", [(b"www-authenticate", exc.challenge)]
                ) from exc
            if who.principal is not None:
                exchange.principal = who.principal
            if method in ("GET", "DELETE") and declared == LEGACY:
                await self._legacy_without_body(method, headers, session_id, who, receive, send)
                return
            if method != "POST":
                raise HttpProblem(
                    405,
                    f"Method Not Allowed: {method} is not part of MCP 2026-07-28; send each "
                    "message as a POST (GET and DELETE need an initialize-era Mcp-Session-Id)",
                    [(b"allow", b"POST")],
                )
            content_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if content_type != mcp.CONTENT_TYPE_JSON:
                raise HttpProblem(
                    415, "Unsupported Media Type: send Content-Type: application/json"
                )
            json_ok, sse_ok = accepted(headers)
            if not json_ok and not sse_ok:
                raise HttpProblem(
                    406, "Not Acceptable: accept application/json and text/event-stream"
                )
            body = await read_body(receive, headers, conf.values().max_body_bytes)
        except HttpProblem as problem:
            await send_problem(send, problem)
            return
        except asyncio.CancelledError:
            return  # the client left while sending its body
        try:
            message = parse_message(body)
        except MessageError as exc:
            await send_json(send, 400, encode(error_message(exc.request_id, exc.error)))
            return
        if isinstance(message, Request):
            exchange.read(message.method, message.params)
        else:
            exchange.method = "response"
        if era_of(message, declared) == MODERN:
            await self._modern(scope, message, headers, names, who, sse_ok, receive, send)
        else:
            await self._legacy(scope, message, headers, session_id, who, sse_ok, receive, send)

    # ------------------------------------------------------------------ 2026-07-28

    async def _modern(
        self,
        scope: Scope,
        message: Request | Response,
        headers: dict[str, str],
        names: list[str],
        who: Identity,
        sse_ok: bool,
        receive: Receive,
        send: Send,
    ) -> None:
        if isinstance(message, Response):
            error = JsonRpcError(
                INVALID_REQUEST,
                "Invalid request: a JSON-RPC response is only accepted inside an initialize-era "
                "session",
            )
            await send_json(send, 400, encode(error_message(message.id, error)))
            return
        if message.is_notification:
            await send_empty(send, 202)
            return
        stream = HttpStream(send, allows_sse=sse_ok, exchange=scope.get("ask_mcp.exchange"))
        # Started eagerly: the request runs at once, up to its first real wait, rather than on
        # the loop's next turn (a request that needs no wait never goes through the loop).
        handling = asyncio.Task(
            self.server.handle_modern(
                message,
                headers=headers,
                header_names=names,
                stream=stream,
                base_url=_base_url(scope, headers),
                who=who,
            ),
            loop=asyncio.get_running_loop(),
            eager_start=True,
        )
        reply = await supervise(handling, receive, stream, cancel_on_disconnect=True)
        if reply is not None:
            await stream.finish(
                reply, http_status(reply["error"]["code"]) if "error" in reply else 200
            )

    # ------------------------------------------------------------------ 2025-06-18 / 2025-11-25

    async def _legacy(
        self,
        scope: Scope,
        message: Request | Response,
        headers: dict[str, str],
        session_id: str | None,
        who: Identity,
        sse_ok: bool,
        receive: Receive,
        send: Send,
    ) -> None:
        sessions = self.sessions
        if session_id is None:
            if (
                isinstance(message, Request)
                and message.method == "initialize"
                and message.id is not None
            ):
                await self._initialize(message, who, send)
                return
            await send_problem(
                send,
                HttpProblem(
                    400,
                    "Bad Request: missing Mcp-Session-Id header; send initialize first, or "
                    "send MCP-Protocol-Version: 2026-07-28 with per-request _meta",
                ),
                message.id,
            )
            return
        try:
            session = await self._session(session_id, headers, who)
        except HttpProblem as problem:
            await send_problem(send, problem, message.id)
            return
        if isinstance(message, Response):
            await sessions.deliver(session.id, message)
            await send_empty(send, 202)
            return
        if message.is_notification:
            if message.method == "notifications/cancelled":
                await sessions.cancel(session.id, message.params.get("requestId"))
            await send_empty(send, 202)
            return
        stream = HttpStream(send, allows_sse=sse_ok, exchange=scope.get("ask_mcp.exchange"))
        await self._in_session(
            message,
            session,
            stream,
            _base_url(scope, headers),
            receive,
            who,
        )

    async def _in_session(
        self,
        message: Request,
        session: LegacySession,
        stream: HttpStream,
        base_url: str,
        receive: Receive,
        who: Identity,
    ) -> None:
        """Answer one request inside its session on `stream`, tracked so the session can cancel it."""
        sessions = self.sessions
        handling = asyncio.ensure_future(
            self.server.handle_legacy(
                message,
                session=session,
                stream=stream,
                control=sessions,
                responses=sessions.router(session.id),
                base_url=base_url,
                who=who,
            )
        )
        assert message.id is not None
        await sessions.track(session.id, message.id, handling)
        # In the initialize era a dropped stream is not a cancellation; notifications/cancelled is.
        try:
            reply = await supervise(handling, receive, stream, cancel_on_disconnect=False)
        except asyncio.CancelledError:
            await stream.close()
            return
        if reply is not None:
            await stream.finish(reply)

    async def _initialize(self, message: Request, who: Identity, send: Send) -> None:
        assert message.id is not None
        try:
            result, version, capabilities, client_info = self.server.initialize(message)
        except JsonRpcError as exc:
            await send_json(send, 400, encode(error_message(message.id, exc)))
            return
        session = await self.sessions.create(
            version,
            capabilities,
            client_info,
            principal=who.principal,
            credential=who.credential,
        )
        await send_json(
            send,
            200,
            encode(result_message(message.id, result)),
            [(b"mcp-session-id", session.id.encode("ascii"))],
        )

    async def _session(
        self, session_id: str, headers: dict[str, str], who: Identity
    ) -> LegacySession:
        session = await self.sessions.get(session_id)
        if session is None:
            raise HttpProblem(
                404, "Not Found: unknown or ended Mcp-Session-Id; initialize a new session"
            )
        if session.principal != who.principal:
            raise HttpProblem(403, "Forbidden: this session belongs to another user")
        version = headers.get(mcp.HEADER_PROTOCOL_VERSION)
        if version is not None and version != session.protocol_version:
            raise HttpProblem(
                400,
                f"Bad Request: MCP-Protocol-Version {version!r} does not match the session's "
                f"negotiated version {session.protocol_version!r}",
            )
        return session

    async def _legacy_without_body(
        self,
        method: str,
        headers: dict[str, str],
        session_id: str | None,
        who: Identity,
        receive: Receive,
        send: Send,
    ) -> None:
        if session_id is None:
            raise HttpProblem(400, f"Bad Request: {method} needs an Mcp-Session-Id header")
        session = await self._session(session_id, headers, who)
        if method == "DELETE":
            await self.sessions.end(session.id)
            await send_empty(send, 204)
            return
        _, sse_ok = accepted(headers)
        if not sse_ok:
            raise HttpProblem(406, "Not Acceptable: the GET stream is text/event-stream")
        # The standalone stream: the session's notifications (resources/updated), until the
        # session ends or the client leaves.
        stream = HttpStream(send, allows_sse=True)
        await stream.keepalive()
        messages = await self.sessions.open_stream(session.id)

        async def forward() -> None:
            while (message := await messages.next()) is not None:
                await stream.notify(message)

        try:
            await supervise(
                asyncio.ensure_future(forward()), receive, stream, cancel_on_disconnect=True
            )
        finally:
            await asyncio.shield(self.sessions.close_stream(session.id, messages))
        await stream.close()


async def supervise(
    handling: asyncio.Future[Any],
    receive: Receive,
    stream: HttpStream,
    *,
    cancel_on_disconnect: bool,
) -> Any:
    """Wait for `handling`, keeping the stream alive; a client disconnect cancels it (or, when
    `cancel_on_disconnect` is false, abandons the stream and lets it run on).

    Returns None when the client went away.
    """
    if not handling.done():
        # Most requests finish within a few turns of the loop (an MRTR round parks or resumes
        # without waiting on anything outside the process). Watching the connection costs a
        # task and a receive() per request, a quarter of the endpoint's CPU, so it starts only
        # once the request is seen to wait; a client that leaves sooner is noticed then.
        loop = asyncio.get_running_loop()
        woken = loop.create_future()

        def wake(_: object = None) -> None:
            if not woken.done():
                woken.set_result(None)

        handling.add_done_callback(wake)
        timer = loop.call_later(WATCH_AFTER_SECONDS, wake)
        try:
            await woken
        finally:
            timer.cancel()
            handling.remove_done_callback(wake)
    if handling.done():
        return handling.result()
    left = asyncio.ensure_future(wait_for_disconnect(receive))
    interval = conf.values().keepalive_seconds
    try:
        while True:
            done, _ = await asyncio.wait(
                (handling, left), timeout=interval, return_when=asyncio.FIRST_COMPLETED
            )
            if handling in done:
                return handling.result()
            if left in done:
                stream.closed = True
                if cancel_on_disconnect:
                    handling.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await handling
                return None
            await stream.keepalive()
    finally:
        left.cancel()


async def send_problem(
    send: Send, problem: HttpProblem, request_id: RequestId | None = None
) -> None:
    body = encode(error_message(request_id, problem.error))
    await send_json(send, problem.status, body, problem.headers)


def _base_url(scope: Scope, headers: dict[str, str]) -> str:
    return own_origin(scope, headers)
