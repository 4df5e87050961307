"""The Prometheus metrics: every instrument askserver counts with, counted only once metrics are enabled; no exposition, no database.

Through the official prometheus-client. With one worker the instruments live in this process's
registry. With several worker processes on one host, set prometheus-client's own
`PROMETHEUS_MULTIPROC_DIR` to a folder all of them share (emptied before they start): every
worker then writes its counters there and a scrape of any one worker reports the sum over all
of them (prometheus-client's multiprocess mode); per-worker gauges are summed over the live
workers. The gauges read from the database are not kept here: the endpoint that serves
`/metrics` reads them at scrape time, in the one worker scraped, so they are exported once.

When metrics are off (the default) every function here returns at its first line, so the
request path pays one boolean test.
"""

from __future__ import annotations

import atexit
import os
from collections.abc import Callable
from typing import Any, Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics

disable_created_metrics()  # type: ignore[no-untyped-call]  # the *_created series double the scrape and no dashboard reads them

MULTIPROCESS: Final = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))
"""Whether prometheus-client keeps the values in files shared by several worker processes."""

REGISTRY: Final = CollectorRegistry(auto_describe=True)
"""This process's instruments (the multiprocess collector replaces it when MULTIPROCESS)."""

ANSWER_BUCKETS: Final = (1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
"""Seconds from asking to an answer: a person answers in seconds to an hour (ELICITATION_TTL is
600 s by default, a toolkit timeout may be longer)."""

METHOD_LABELS_MAX: Final = 64
"""Distinct `method` labels kept; further unknown methods count as "other" (a client sending
made-up method names must not grow the scrape without bound)."""

ASKS: Final = Counter(
    "askserver_asks",
    "Asks that ended, by route (client, url, browser) and outcome (accepted, declined, "
    "cancelled, expired, withdrawn).",
    ["route", "outcome"],
    registry=REGISTRY,
)
TIME_TO_ANSWER: Final = Histogram(
    "askserver_time_to_answer_seconds",
    "Seconds from asking to the person's reply (accepted, declined or cancelled), by route.",
    ["route"],
    buckets=ANSWER_BUCKETS,
    registry=REGISTRY,
)
REQUESTS: Final = Counter(
    "askserver_mcp_requests",
    "MCP requests answered, by JSON-RPC method and result (ok, input_required, tool_error, "
    "error, or http_<status> when refused before JSON-RPC).",
    ["method", "result"],
    registry=REGISTRY,
)
TABLE_WAITING: Final = Gauge(
    "askserver_elicitation_waiting",
    "Questions holding a place in the elicitation table (summed over the live workers).",
    registry=REGISTRY,
    multiprocess_mode="livesum",
)
TABLE_CAPACITY: Final = Gauge(
    "askserver_elicitation_capacity",
    "Slots in the elicitation table (ELICITATION_CAPACITY, summed over the live workers).",
    registry=REGISTRY,
    multiprocess_mode="livesum",
)
RECORDER_QUEUE: Final = Gauge(
    "askserver_recorder_queue_depth",
    "Ask changes waiting to be written to the database (summed over the live workers).",
    registry=REGISTRY,
    multiprocess_mode="livesum",
)
RECORDER_FAILURES: Final = Counter(
    "askserver_recorder_write_failures",
    "Failed attempts to write a batch of ask changes (kept and retried, or dropped when the "
    "database refuses a row for good).",
    registry=REGISTRY,
)
NOTIFY_FAILURES: Final = Counter(
    "askserver_notification_failures",
    "Notifications about new asks that could not be delivered, by channel.",
    ["channel"],
    registry=REGISTRY,
)

_enabled = False
_methods: set[str] = set()
_sources: dict[str, Callable[[], float]] = {}
_children: dict[tuple[Any, ...], Any] = {}
"""Each labelled instrument's child by (instrument, labels): `labels()` validates and locks on
every call, three times the cost of the increment itself."""


def _child(metric: Any, *labels: str) -> Any:
    key = (id(metric), *labels)
    child = _children.get(key)
    if child is None:
        child = _children[key] = metric.labels(*labels)
    return child


def enable() -> None:
    """Start counting (the app does so when ASK_MCP['METRICS'] is on)."""
    global _enabled
    if _enabled:
        return
    _enabled = True
    if MULTIPROCESS:
        atexit.register(_mark_dead, os.getpid())


def enabled() -> bool:
    return _enabled


def ask_ended(route: str, outcome: str, seconds: float | None) -> None:
    """An ask ended; `seconds` from asking to the person's reply times it, when one ended it
    (None for an expiry or a withdrawal)."""
    if not _enabled:
        return
    _child(ASKS, route, outcome).inc()
    if seconds is not None:
        _child(TIME_TO_ANSWER, route).observe(max(0.0, seconds))


def request_done(method: str, result: str) -> None:
    if not _enabled:
        return
    if method not in _methods:
        if len(_methods) >= METHOD_LABELS_MAX:
            method = "other"
        else:
            _methods.add(method)
    _child(REQUESTS, method, result).inc()


def recorder_failed() -> None:
    if _enabled:
        RECORDER_FAILURES.inc()


def notification_failed(channel: str) -> None:
    if _enabled:
        _child(NOTIFY_FAILURES, channel).inc()


def watch(name: str, read: Callable[[], float]) -> None:
    """Have :func:`sample` set the gauge `name` ("waiting", "capacity", "queue") from `read`."""
    _sources[name] = read


_GAUGES: Final = {"waiting": TABLE_WAITING, "capacity": TABLE_CAPACITY, "queue": RECORDER_QUEUE}


def sample() -> None:
    """Set this worker's gauges from what they watch (before a scrape, and periodically)."""
    for name, read in list(_sources.items()):
        try:
            value = float(read())
        except Exception:  # a source whose owner is gone (a test's server) reads as zero
            value = 0.0
        _GAUGES[name].set(value)


def _mark_dead(pid: int) -> None:
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]
