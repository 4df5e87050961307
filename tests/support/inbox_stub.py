"""A stand-in for the browser inbox: an `on_elicit` that waits for a submission, its answer URLs, and
a toolkit through which a test submits over HTTP, as a person's browser would.

It keeps the contract the real inbox keeps: the question is registered in on_elicit's first
step, its page is `<base_url>/asks/<question id>/`, and a submission settles the waiting call.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from ask_mcp.server import Context, Question, Toolkit, tool


class StubInbox:
    def __init__(self) -> None:
        self.waiting: dict[str, asyncio.Future[Mapping[str, Any]]] = {}
        self.questions: list[Question] = []
        self.base_urls: list[str | None] = []
        self._changed = asyncio.Event()

    async def __call__(self, question: Question, ctx: Context) -> Mapping[str, Any]:
        future: asyncio.Future[Mapping[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[question.id] = future
        self.questions.append(question)
        self.base_urls.append(ctx.base_url)
        self._changed.set()
        try:
            return await future
        finally:
            self.waiting.pop(question.id, None)

    def answer_url(self, question: Question, ctx: Context) -> str:
        return f"{ctx.base_url or 'http://127.0.0.1:8000'}/asks/{question.id}/"

    async def submit(self, question_id: str | None, reply: Mapping[str, Any], bound: float) -> str:
        """Settle a waiting question (the only one when `question_id` is None); returns its id."""
        async with asyncio.timeout(bound):
            while True:
                if question_id is None and len(self.waiting) == 1:
                    question_id = next(iter(self.waiting))
                if question_id in self.waiting:
                    break
                self._changed.clear()
                await self._changed.wait()
        assert question_id is not None
        self.waiting[question_id].set_result(reply)
        return question_id


INBOX = StubInbox()


def on_elicit() -> StubInbox:
    """Factory for ASK_MCP["ON_ELICIT"]."""
    return INBOX


def answer_url() -> Any:
    """Factory for ASK_MCP["ANSWER_URL"]."""
    return INBOX.answer_url


class InboxProbe(Toolkit):
    """What a person's browser does, as a tool on the HTTP side: submit an answer."""

    default_prefix = "inbox"

    @tool(
        "submit",
        input_schema={
            "type": "object",
            "properties": {"id": {"type": "string"}, "content": {"type": "object"}},
            "required": ["content"],
        },
    )
    async def submit(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Answer the waiting question (waits up to 10 s for one); tells the stdio side's base URL."""
        reply = {"action": "accept", "content": arguments["content"]}
        question_id = await INBOX.submit(arguments.get("id"), reply, 10.0)
        return json.dumps({"id": question_id, "base_urls": INBOX.base_urls})
