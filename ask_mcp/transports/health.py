"""The health checks at /health/live and /health/ready: ASGI apps a load balancer probes; knows no ask and no MCP.

`/health/live` answers 200 as soon as the process serves, touching nothing else: restart the
process when it stops answering. `/health/ready` answers 200 when the database and the channel
layer both answer within CHECK_SECONDS, and 503 naming the one that did not: take the worker
out of rotation meanwhile. Neither needs a sign-in or a token, and neither says anything
secret: a failure is named by the part and the exception's class, never its message (which can
hold a host name, a user or a password). A probe from a loopback address is answered whatever
its Host header (a container's health check or a sidecar rarely sends a name in
ALLOWED_HOSTS); any other peer's Host is checked like every request's.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

from ask_mcp.team.auth import is_loopback
from ask_mcp.transports.admission import HttpProblem, check_host, read_headers
from ask_mcp.transports.http import Receive, Scope, Send

logger = logging.getLogger("ask_mcp.transports.health")

CHECK_SECONDS: Final = 2.0
"""How long each readiness check may take. Load balancers give a probe 2 to 5 s (AWS's target
groups 5 s, a Kubernetes probe 1 s unless set): configure at least 3 s for /health/ready."""
_HEADERS: Final = [
    (b"content-type", b"application/json"),
    (b"cache-control", b"no-store"),
]


async def _respond(send: Send, status: int, body: dict[str, Any], head: bool) -> None:
    payload = json.dumps(body, separators=(",", ":")).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*_HEADERS, (b"content-length", str(len(payload)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": b"" if head else payload})


class HealthCheck:
    """One health endpoint: GET (or HEAD) only, the Host checked unless the peer is loopback."""

    def __init__(self, check: Callable[[], Awaitable[tuple[int, dict[str, Any]]]]) -> None:
        self._check = check

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            raise ValueError(f"health checks serve HTTP only, not {scope['type']!r}")
        method = scope["method"]
        if method not in ("GET", "HEAD"):
            await _respond(send, 405, {"status": "error", "error": "use GET"}, False)
            return
        if not is_loopback(scope.get("client")):
            headers, _ = read_headers(scope)
            try:
                check_host(headers)
            except HttpProblem as problem:
                await _respond(send, 403, {"status": "error", "error": str(problem)}, False)
                return
        status, body = await self._check()
        await _respond(send, status, body, method == "HEAD")


async def live() -> tuple[int, dict[str, Any]]:
    """The process serves: nothing else is touched."""
    return 200, {"status": "ok"}


def _ping_database() -> None:
    """One `SELECT 1` on a connection of its own (run on a worker thread), closed after."""
    from django.db import connection

    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    finally:
        connection.close()


async def database() -> None:
    await asyncio.to_thread(_ping_database)


async def channel_layer() -> None:
    """A message sent to a fresh channel of this worker's layer and received back."""
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    if layer is None:
        raise LookupError("CHANNEL_LAYERS has no default layer")
    channel = await layer.new_channel("health.")
    await layer.send(channel, {"type": "health.ping"})
    await layer.receive(channel)


CHECKS: Final[dict[str, Callable[[], Awaitable[None]]]] = {
    "database": database,
    "channel_layer": channel_layer,
}
"""What readiness needs, by the name a failure is reported under."""


async def _outcome(name: str, check: Callable[[], Awaitable[None]]) -> str:
    try:
        async with asyncio.timeout(CHECK_SECONDS):
            await check()
    except TimeoutError:
        logger.warning("readiness: %s did not answer within %s s", name, CHECK_SECONDS)
        return f"unavailable: no answer within {CHECK_SECONDS:g} s"
    except Exception as exc:
        logger.warning("readiness: %s unavailable (%s)", name, type(exc).__name__)
        return f"unavailable: {type(exc).__name__}"
    return "ok"


async def ready() -> tuple[int, dict[str, Any]]:
    """The database and the channel layer, checked at once; 503 naming each that failed."""
    names = list(CHECKS)
    outcomes = await asyncio.gather(*(_outcome(name, CHECKS[name]) for name in names))
    checks = dict(zip(names, outcomes, strict=True))
    failed = [name for name, outcome in checks.items() if outcome != "ok"]
    if failed:
        return 503, {"status": "unavailable", "failed": failed, "checks": checks}
    return 200, {"status": "ok", "checks": checks}


LIVE: Final = HealthCheck(live)
"""The ASGI app at /health/live."""
READY: Final = HealthCheck(ready)
"""The ASGI app at /health/ready."""
