"""Webhook announcements of new questions, delivered to a real HTTP server on loopback."""

from __future__ import annotations

import asyncio
import http.server
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from django.contrib.auth.models import Group, User

from ask_mcp.models import Webhook, WebhookDelivery
from ask_mcp.server import Question
from ask_mcp.team import notify

pytestmark = pytest.mark.django_db(transaction=True)


class Receiver:
    """A loopback HTTP server that records the JSON it is sent and answers with scripted statuses."""

    def __init__(self, statuses: list[int]) -> None:
        self.statuses = statuses
        self.bodies: list[dict[str, Any]] = []
        self.got = threading.Event()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers["content-length"])
                receiver.bodies.append(json.loads(self.rfile.read(length)))
                receiver.got.set()
                status = (
                    receiver.statuses.pop(0) if len(receiver.statuses) > 1 else receiver.statuses[0]
                )
                self.send_response(status)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver([200])
    yield server
    server.close()


def question(principal: str | None, team: str | None) -> Question:
    now = time.time()
    return Question(
        id="a" * 32,
        message="Deploy to prod?",
        schema={},
        tool="user_ask",
        principal=principal,
        route="browser",
        created_at=now,
        expires_at=now + 600,
        client_name="Claude",
        team=team,
    )


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        notify, "BACKOFF", (0.01, 0.01)
    )  # the retry policy, not its pauses, is under test


async def test_a_new_question_is_announced_to_the_askers_and_the_teams_webhooks(
    receiver: Receiver,
) -> None:
    user = await User.objects.acreate(username="dana")
    team = await Group.objects.acreate(name="oncall")
    other = await User.objects.acreate(username="eve")
    await Webhook.objects.acreate(user=user, url=receiver.url)
    await Webhook.objects.acreate(team=team, url=receiver.url)
    await Webhook.objects.acreate(user=other, url=receiver.url)
    await Webhook.objects.acreate(user=user, url=receiver.url, active=False)
    async with asyncio.timeout(10):
        started = await notify.announce(
            question(f"user:{user.pk}", f"group:{team.pk}"), "http://x/asks/a/"
        )
        await notify.drain()
    assert started == 2
    assert len(receiver.bodies) == 2
    body = receiver.bodies[0]
    assert body["text"] == "Claude asks (via user_ask): Deploy to prod?\nAnswer: http://x/asks/a/"
    assert body["ask"]["url"] == "http://x/asks/a/" and body["ask"]["id"] == "a" * 32
    statuses = [d.status async for d in WebhookDelivery.objects.all()]
    assert statuses == ["delivered", "delivered"]


async def test_a_failing_receiver_is_retried_then_recorded_as_failed() -> None:
    failing = Receiver([500])
    try:
        user = await User.objects.acreate(username="fay")
        await Webhook.objects.acreate(user=user, url=failing.url)
        async with asyncio.timeout(10):
            await notify.announce(question(f"user:{user.pk}", None), "http://x/asks/a/")
            await notify.drain()
    finally:
        failing.close()
    delivery = await WebhookDelivery.objects.aget()
    assert delivery.status == "failed" and delivery.attempts == notify.ATTEMPTS
    assert delivery.response_status == 500 and "HTTP Error 500" in delivery.last_error
    assert len(failing.bodies) == notify.ATTEMPTS


async def test_a_receiver_that_recovers_gets_the_question_on_a_retry() -> None:
    flaky = Receiver([503, 200])
    try:
        user = await User.objects.acreate(username="gus")
        await Webhook.objects.acreate(user=user, url=flaky.url)
        async with asyncio.timeout(10):
            await notify.announce(question(f"user:{user.pk}", None), "http://x/asks/a/")
            await notify.drain()
    finally:
        flaky.close()
    delivery = await WebhookDelivery.objects.aget()
    assert delivery.status == "delivered" and delivery.attempts == 2


async def test_an_anonymous_question_announces_nothing(receiver: Receiver) -> None:
    assert await notify.announce(question(None, None), "http://x/") == 0


def test_the_slack_text_escapes_what_the_model_wrote_and_the_ask_keeps_it() -> None:
    asked = replace(question(None, None), message="<!channel> see <http://evil|docs> & reply")
    body = notify.announcement(asked, "http://x/asks/a/")
    assert body["text"] == (
        "Claude asks (via user_ask): &lt;!channel&gt; see &lt;http://evil|docs&gt; &amp; reply"
        "\nAnswer: http://x/asks/a/"
    )
    assert body["ask"]["message"] == "<!channel> see <http://evil|docs> & reply"
