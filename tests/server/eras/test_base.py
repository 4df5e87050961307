"""What both eras share: which methods exist, lists, completion/complete and its limit, the idempotency key."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ask_mcp.protocol import mcp
from ask_mcp.protocol.jsonrpc import INVALID_PARAMS, JsonRpcError, Request
from ask_mcp.server import Context, Server, Toolkit, completion, prompt, tool
from ask_mcp.server.eras.base import MAX_COMPLETIONS, idempotency_key
from ask_mcp.server.eras.legacy import LegacySession
from tests.support.wire import META, assert_valid

WAIT = 5.0
"""The longest a request here may take."""


class Letters(Toolkit):
    default_prefix = ""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, str], Any]] = []

    @tool("noop")
    async def noop(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Does nothing."""
        return ""

    @prompt("letter", arguments=["start", "lang"])
    async def letter(self, ctx: Context, arguments: dict[str, str]) -> str:
        """A letter."""
        return "Dear"

    @completion("start", prompt="letter")
    async def starts(self, ctx: Context, value: str, context: dict[str, str]) -> list[Any]:
        self.seen.append((value, context, ctx.progress_token))
        return [f"{value}{n}" for n in range(150)]


def session() -> LegacySession:
    return LegacySession(id="s1", protocol_version="2025-11-25", capabilities={})


async def both_eras(server: Server, method: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """The same request answered by the 2026-07-28 era and inside an initialize-era session."""
    meta = {**META, "progressToken": "p1"}
    async with asyncio.timeout(WAIT):
        modern = await server.handle_modern(Request(method, {**params, "_meta": meta}, id=1))
        legacy = await server.handle_legacy(Request(method, params, id=1), session=session())
    assert modern is not None and legacy is not None
    return [assert_valid(method, modern), assert_valid(method, legacy, "2025-11-25")]


async def test_completions_are_capped_at_a_hundred_and_the_completer_sees_no_progress_token() -> (
    None
):
    letters = Letters()
    server = Server("s").plug(letters)
    params = {
        "ref": {"type": "ref/prompt", "name": "letter"},
        "argument": {"name": "start", "value": "a"},
        "context": {"arguments": {"lang": "en"}},
    }
    for reply in await both_eras(server, "completion/complete", params):
        found = reply["result"]["completion"]
        assert len(found["values"]) == MAX_COMPLETIONS and found["values"][:2] == ["a0", "a1"]
        assert found["total"] == 150 and found["hasMore"] is True
    assert letters.seen == [("a", {"lang": "en"}, None)] * 2


async def test_lists_exist_only_for_what_is_offered_in_either_era() -> None:
    server = Server("s").plug(Letters())
    for reply in await both_eras(server, "prompts/list", {}):
        assert [p["name"] for p in reply["result"]["prompts"]] == ["letter"]
    bare = Server("s")
    async with asyncio.timeout(WAIT):
        modern = await bare.handle_modern(Request("prompts/list", {"_meta": META}, id=1))
        legacy = await bare.handle_legacy(Request("prompts/list", {}, id=1), session=session())
    assert modern is not None and modern["error"]["code"] == -32601
    assert legacy is not None and legacy["error"]["code"] == -32601


def test_the_idempotency_key_is_read_from_meta_or_refused_naming_the_key() -> None:
    key = mcp.META_IDEMPOTENCY_KEY
    assert idempotency_key({}) is None
    assert idempotency_key({"_meta": {"progressToken": 1}}) is None
    assert idempotency_key({"_meta": {key: "deploy-42"}}) == "deploy-42"
    for bad in ("", "   ", "x" * (mcp.IDEMPOTENCY_KEY_MAX + 1), 7):
        with pytest.raises(JsonRpcError) as refused:
            idempotency_key({"_meta": {key: bad}})
        assert refused.value.code == INVALID_PARAMS and key in refused.value.message
