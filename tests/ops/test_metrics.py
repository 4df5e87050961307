"""The instruments: nothing counted until enabled, then each ask, request and failure by its labels, and gauges sampled."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ask_mcp.ops import metrics


def value(name: str, **labels: str) -> float:
    return metrics.REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.fixture
def enabled(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(metrics, "_enabled", True)
    yield


def test_nothing_is_counted_while_metrics_are_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metrics, "_enabled", False)
    before = value("askserver_mcp_requests_total", method="tools/list", result="ok")
    metrics.request_done("tools/list", "ok")
    assert value("askserver_mcp_requests_total", method="tools/list", result="ok") == before
    assert metrics.enabled() is False


def test_asks_are_counted_by_route_and_outcome_and_answers_timed(enabled: None) -> None:
    counted = value("askserver_asks_total", route="url", outcome="accepted")
    timed = value("askserver_time_to_answer_seconds_count", route="url")
    metrics.ask_ended("url", "accepted", 12.0)
    metrics.ask_ended("url", "accepted", -1.0)  # a clock step back reads as no time at all
    metrics.ask_ended("url", "expired", None)
    assert value("askserver_asks_total", route="url", outcome="accepted") == counted + 2
    assert value("askserver_time_to_answer_seconds_count", route="url") == timed + 2
    assert value("askserver_time_to_answer_seconds_bucket", route="url", le="1.0") >= 1


def test_past_the_method_label_limit_new_methods_count_as_other(
    enabled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(metrics, "_methods", {f"m{n}" for n in range(metrics.METHOD_LABELS_MAX)})
    other = value("askserver_mcp_requests_total", method="other", result="ok")
    metrics.request_done("made/up", "ok")
    assert value("askserver_mcp_requests_total", method="other", result="ok") == other + 1
    assert value("askserver_mcp_requests_total", method="made/up", result="ok") == 0


def test_failures_are_counted_and_gauges_read_their_sources(
    enabled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    failures = value("askserver_recorder_write_failures_total")
    metrics.recorder_failed()
    metrics.notification_failed("mail")
    assert value("askserver_recorder_write_failures_total") == failures + 1
    assert value("askserver_notification_failures_total", channel="mail") >= 1

    def gone() -> float:
        raise RuntimeError("its server was closed")

    monkeypatch.setattr(metrics, "_sources", {})
    metrics.watch("waiting", lambda: 3)
    metrics.watch("queue", gone)
    metrics.sample()
    assert value("askserver_elicitation_waiting") == 3
    assert value("askserver_recorder_queue_depth") == 0  # a gone source reads as zero
