"""Health endpoints in process, through Channels' communicator: live always answers, ready names each check that failed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from channels.testing import HttpCommunicator
from django.test import override_settings

from ask_mcp.transports import health
from ask_mcp.transports.health import LIVE, READY, HealthCheck

WAIT = 5.0
"""The longest a response may take to arrive."""


async def get(app: HealthCheck, method: str = "GET", host: str = "127.0.0.1") -> dict[str, Any]:
    talk = HttpCommunicator(app, method, "/health/ready", headers=[(b"host", host.encode())])
    reply = await talk.get_response(timeout=WAIT)
    return {
        "status": reply["status"],
        "headers": dict(reply["headers"]),
        "body": json.loads(reply["body"]) if reply["body"] else None,
    }


async def test_live_answers_ok_uncached_and_head_has_no_body() -> None:
    reply = await get(LIVE)
    assert (reply["status"], reply["body"]) == (200, {"status": "ok"})
    assert reply["headers"][b"cache-control"] == b"no-store"
    head = await get(LIVE, "HEAD")
    assert head["status"] == 200 and head["body"] is None


async def test_only_get_and_head_are_answered() -> None:
    reply = await get(LIVE, "POST")
    assert reply["status"] == 405 and reply["body"]["error"] == "use GET"


@override_settings(ALLOWED_HOSTS=["ask.example"])
async def test_a_probe_from_elsewhere_must_name_an_allowed_host() -> None:
    # HttpCommunicator's scope names no client: not loopback, so the Host is checked.
    refused = await get(LIVE, host="evil.example")
    assert refused["status"] == 403 and "not in ALLOWED_HOSTS" in refused["body"]["error"]
    assert (await get(LIVE, host="ask.example"))["status"] == 200


@override_settings(ALLOWED_HOSTS=["127.0.0.1"])
async def test_ready_names_each_check_that_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    async def fine() -> None:
        return None

    async def broken() -> None:
        raise ConnectionRefusedError

    monkeypatch.setattr(health, "CHECKS", {"database": fine, "channel_layer": fine})
    assert (await get(READY))["body"] == {
        "status": "ok",
        "checks": {"database": "ok", "channel_layer": "ok"},
    }
    monkeypatch.setattr(health, "CHECKS", {"database": broken, "channel_layer": fine})
    reply = await get(READY)
    assert reply["status"] == 503
    assert reply["body"] == {
        "status": "unavailable",
        "failed": ["database"],
        "checks": {"database": "unavailable: ConnectionRefusedError", "channel_layer": "ok"},
    }


@override_settings(ALLOWED_HOSTS=["127.0.0.1"])
async def test_the_channel_layer_check_sends_itself_a_message() -> None:
    await health.channel_layer()  # the test settings' in-memory layer: a round trip in process
