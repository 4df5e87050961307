"""The /metrics endpoint: Prometheus text from the instruments of :mod:`ask_mcp.ops.metrics`, plus the gauges read from the database.

Served on the same port as everything else, behind a bearer token of its own
(ASK_MCP['METRICS_TOKEN']): Prometheus sends one (`authorization: {credentials: ...}` in its
scrape config), a load balancer or proxy needs no second port opened, and an MCP token does
not open it (the metrics name principals' activity, not who may ask). A separate loopback port
would need a second listener in daphne and uvicorn alike, and a sidecar to reach it from
another host. Off unless ASK_MCP['METRICS'] is on: then 404.

The database gauges (asks pending, by route) are read here, at scrape time, by the worker
scraped: with several workers and prometheus-client's multiprocess mode they are exported once,
beside the counters summed over all workers.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from collections.abc import Iterator
from typing import Any, Final, get_args

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from ask_mcp import conf
from ask_mcp.ops import metrics
from ask_mcp.server.question import Route
from ask_mcp.team.auth import Unauthorized, bearer_token
from ask_mcp.transports.admission import read_headers
from ask_mcp.transports.http import Receive, Scope, Send

logger = logging.getLogger("ask_mcp.transports.metrics")

ROUTES: Final[tuple[Route, ...]] = get_args(Route)
"""The routes an ask travels by: the pending gauge has a sample for each, zeros included."""


class PendingAsks(Collector):
    """askserver_asks_pending by route, counted in the database when scraped."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        from django.db import connection
        from django.db.models import Count

        from ask_mcp.models import Ask

        family = GaugeMetricFamily(
            "askserver_asks_pending",
            "Asks waiting for an answer, counted in the database (every worker's), by route.",
            labels=["route"],
        )
        up = GaugeMetricFamily(
            "askserver_database_up", "1 when the scrape could count asks in the database."
        )
        try:
            counts = dict(
                Ask.objects.filter(status=Ask.Status.PENDING)
                .values_list("route")
                .annotate(n=Count("id"))
                .values_list("route", "n")
            )
        except Exception as exc:
            logger.warning("metrics: could not count pending asks (%s)", type(exc).__name__)
            up.add_metric([], 0)
            yield up
            return
        finally:
            connection.close()
        for route in sorted({*ROUTES, *counts}):
            family.add_metric([route], counts.get(route, 0))
        up.add_metric([], 1)
        yield family
        yield up


def exposition() -> bytes:
    """The scrape's text (run on a worker thread: the database gauges query)."""
    metrics.sample()
    registry = CollectorRegistry(auto_describe=False)
    if metrics.MULTIPROCESS:
        from prometheus_client import multiprocess

        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    else:
        registry.register(_Forward())
    registry.register(PendingAsks())
    return generate_latest(registry)


class _Forward(Collector):
    """This process's instruments (one worker: no files to merge)."""

    def collect(self) -> Iterator[Any]:
        yield from metrics.REGISTRY.collect()


async def _plain(send: Send, status: int, message: str, headers: list[Any] | None = None) -> None:
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), *(headers or [])],
        }
    )
    await send({"type": "http.response.body", "body": body})


class MetricsEndpoint:
    """The ASGI app at /metrics."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        settings = conf.values()
        if not settings.metrics:
            await _plain(send, 404, "metrics are off; set ASKSERVER_METRICS=1 to serve them")
            return
        headers, _ = read_headers(scope)
        challenge = [(b"www-authenticate", b'Bearer realm="askserver metrics"')]
        try:
            token = bearer_token(headers)
        except Unauthorized:
            token = None
        expected = settings.metrics_token or ""
        # Bytes, not text: compare_digest refuses a str with non-ASCII characters (a TypeError,
        # answered 500), and a header's bytes arrive as latin-1 text, any of the 256.
        if not token or not expected or not hmac.compare_digest(token.encode(), expected.encode()):
            await _plain(
                send, 401, "/metrics needs 'Authorization: Bearer <METRICS_TOKEN>'", challenge
            )
            return
        body = await asyncio.to_thread(exposition)
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", CONTENT_TYPE_LATEST.encode()),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
