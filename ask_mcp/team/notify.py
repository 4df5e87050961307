"""Announcing new questions on webhooks (who is told, the body, retried delivery); knows no inbox or call.

Delivery runs in background tasks and never delays the tool call that asked. Every attempt's
outcome is kept on a WebhookDelivery row, so failures show in the admin.
"""

from __future__ import annotations

import asyncio
import json
import logging
import urllib.error
import urllib.request
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final
from urllib.parse import urlsplit

from django.db.models import Q

from ask_mcp.models import Webhook, WebhookDelivery
from ask_mcp.ops import metrics
from ask_mcp.server.question import Question
from ask_mcp.team.auth import team_id_of, user_id_of

logger = logging.getLogger("ask_mcp.team.notify")

ATTEMPTS: Final = 3
"""Tries per delivery before it is marked failed."""
BACKOFF: Final = (1.0, 4.0)
"""Pauses between tries, in seconds."""
TIMEOUT: Final = 5.0
"""Seconds one try may take."""

_pending: set[asyncio.Task[None]] = set()
"""Deliveries in flight (strong references, and what :func:`drain` waits for)."""


def slack_escape(text: str) -> str:
    """Text a Slack-compatible receiver shows as written: no `<!channel>` pings, no disguised links."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def announcement(question: Question, link: str) -> dict[str, Any]:
    """The JSON body: `text` for Slack-compatible receivers, `ask` for everything else.

    The model's words are escaped in `text` (receivers read it as markup) and left as they are
    in `ask`.
    """
    asker = slack_escape(question.client_name or "An agent")
    said = slack_escape(question.message)
    expires = datetime.fromtimestamp(question.expires_at, UTC).isoformat(timespec="seconds")
    return {
        "text": f"{asker} asks (via {slack_escape(question.tool)}): {said}\nAnswer: {link}",
        "ask": {
            "id": question.id,
            "url": link,
            "message": question.message,
            "tool": question.tool,
            "client": question.client_name,
            "expires_at": expires,
        },
    }


async def announce(question: Question, link: str) -> int:
    """Start delivering `question` to every active webhook of its asker and team.

    Returns how many deliveries were started; they finish in the background.
    """
    user_id, team_id = user_id_of(question.principal), team_id_of(question.team)
    if user_id is None and team_id is None:
        return 0
    match = Q(user_id=user_id) if user_id is not None else Q(pk__in=[])
    if team_id is not None:
        match |= Q(team_id=team_id)
    body = json.dumps(announcement(question, link)).encode("utf-8")
    started = 0
    async for webhook in Webhook.objects.filter(match, active=True):
        delivery = await WebhookDelivery.objects.acreate(webhook=webhook, ask_id=question.id)
        task = asyncio.get_running_loop().create_task(deliver(delivery, webhook.url, body))
        _pending.add(task)
        task.add_done_callback(_pending.discard)
        started += 1
    return started


async def deliver(delivery: WebhookDelivery, url: str, body: bytes) -> None:
    """POST `body` to `url`, retrying on failure, and record the outcome on `delivery`."""
    error, status = "", None
    for attempt in range(1, ATTEMPTS + 1):
        try:
            status = await asyncio.to_thread(_post, url, body)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            status = getattr(exc, "code", None)
            error = f"attempt {attempt}: {exc}"
            # Only the host: a chat webhook's path is its secret (hooks.slack.com/services/…).
            where = urlsplit(url).netloc.rpartition("@")[2]
            logger.warning("webhook delivery %s to %s failed: %s", delivery.pk, where, error)
        else:
            await _record(delivery, WebhookDelivery.Status.DELIVERED, attempt, status, "")
            return
        if attempt < ATTEMPTS:
            await asyncio.sleep(BACKOFF[min(attempt - 1, len(BACKOFF) - 1)])
    metrics.notification_failed("webhook")
    await _record(delivery, WebhookDelivery.Status.FAILED, ATTEMPTS, status, error)


def _post(url: str, body: bytes) -> int:
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"not an http(s) URL: {url!r}")
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:  # scheme checked above
        status: int = response.status
        return status


async def _record(
    delivery: WebhookDelivery, status: str, attempts: int, code: int | None, error: str
) -> None:
    fields: Mapping[str, Any] = {
        "status": status,
        "attempts": attempts,
        "response_status": code,
        "last_error": error[:2000],
        "finished_at": datetime.now(UTC),
    }
    await WebhookDelivery.objects.filter(pk=delivery.pk).aupdate(**fields)


async def drain() -> None:
    """Wait for deliveries in flight (shutdown, tests)."""
    while _pending:
        await asyncio.gather(*list(_pending), return_exceptions=True)
