"""The web `on_elicit`: a question waits for a browser answer at the URL it reports; answering is the views'.

A question for a client that cannot show forms becomes a pending ask (recorded by the
recorder before this runs, or attached to the ask an earlier call asking the same left), is
announced to every open inbox over the channel layer, and the call waits in the worker holding
it until someone settles the ask through the relay (a browser answer, an admin's cancel). Meanwhile the call reports progress with the URL where
the person can answer.

Every link built here comes from PUBLIC_URL alone, never from the `Host` header of the
agent's request (the agent chooses it: a link to another port of the same host handed that
port the person's cookies). Without PUBLIC_URL the progress texts carry no link, and URL mode
refuses to start (ask_mcp.E034).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Mapping
from typing import Any, Final

from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse

from ask_mcp import conf
from ask_mcp.reach.background import REACHER
from ask_mcp.records.events import ASKED, announce
from ask_mcp.server.context import AnswerUrl, Context, OnElicit
from ask_mcp.server.question import Question
from ask_mcp.workers.relay import ChannelRelay

logger = logging.getLogger("ask_mcp.web.elicit")


def answer_url(ask_id: str) -> str | None:
    """Where a person answers `ask_id`: PUBLIC_URL plus the ask's page; None without PUBLIC_URL."""
    base = conf.values().public_url
    if not base:
        return None
    return base.rstrip("/") + reverse("ask_mcp:ask", args=[uuid.UUID(ask_id)])


async def ask_in_browser(question: Question, ctx: Context) -> Mapping[str, Any]:
    """The web on_elicit: announce the ask, report where to answer it, wait until it is settled."""
    relay = ctx.table.relay
    if not isinstance(relay, ChannelRelay):
        raise RuntimeError("the browser inbox needs CHANNEL_LAYERS['default'] (see ask_mcp.E010)")
    # Registered before anyone can see the ask, so no answer is missed.
    relay.expect(question.id, previous=question.attached_from)
    if question.attempt == 1 and not question.attached:  # an attached call's ask was announced
        await announce(ASKED, [question.id])
        try:  # mail and webhooks, planned and sent in the background (ask_mcp.reach)
            REACHER.start_soon(question.id, conf.values().public_url or "")
        except Exception:  # a notification problem must never cost the question
            logger.exception("could not start the notifications of ask %s", question.id)
    heartbeat = None
    seen: asyncio.Queue[str] = asyncio.Queue()
    if ctx.progress_token is not None:
        url = answer_url(question.id)
        relay.add_handler(SEEN_MESSAGE, _on_seen)
        _watching.setdefault(question.id, set()).add(seen)
        heartbeat = asyncio.ensure_future(_report_waiting(ctx, url, seen))
    try:
        return await relay.wait_settled(question.id)
    finally:
        if heartbeat is not None:
            heartbeat.cancel()
            watchers = _watching.get(question.id, set())
            watchers.discard(seen)
            if not watchers:
                _watching.pop(question.id, None)


SEEN_MESSAGE: Final = "ask.seen"
"""The relay message the inbox sends the worker holding an ask when someone has seen it."""
_watching: dict[str, set[asyncio.Queue[str]]] = {}
"""The progress reports of this worker's held calls, by ask: where "seen" words go."""


def _on_seen(message: dict[str, Any]) -> None:
    for watcher in _watching.get(str(message.get("ask", "")), ()):
        watcher.put_nowait(str(message.get("words", "")))


async def _report_waiting(ctx: Context, url: str | None, seen: asyncio.Queue[str]) -> None:
    """Progress now and every KEEPALIVE_SECONDS, so idle timers reset and the person sees the
    URL (without PUBLIC_URL, where: the inbox, with no link); at once when someone has seen the
    question, saying who ("Seen by alice at 14:02 UTC; not answered yet."), as the task's
    statusMessage does."""
    interval = conf.values().keepalive_seconds
    words = f"Waiting for an answer at {url}" if url else "Waiting for an answer in the inbox"
    beat = 0
    try:
        while True:
            beat += 1  # progress must increase with every notification
            await ctx.report_progress(beat, message=words)
            with contextlib.suppress(TimeoutError):
                said = await asyncio.wait_for(seen.get(), timeout=interval)
                words = f"{said} Answer at {url}" if url else f"{said} Answer in the inbox."
    except asyncio.CancelledError:
        raise
    except Exception:  # a broken stream ends the reports, never the wait
        logger.debug("progress report failed", exc_info=True)


def page_url() -> AnswerUrl:
    """Factory for ASK_MCP["ANSWER_URL"]: URL mode sends clients to the ask's page in the inbox."""

    def url(question: Question, ctx: Context) -> str:
        found = answer_url(question.id)
        if found is None:  # the checks stop a server started so (ask_mcp.E034)
            raise ImproperlyConfigured(conf.public_url_needed("URL mode"))
        return found

    return url


def on_elicit() -> OnElicit:
    """Factory for ASK_MCP["ON_ELICIT"]: questions go to the browser inbox."""
    return ask_in_browser
