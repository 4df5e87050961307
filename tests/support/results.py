"""The text of a tools/call result, whichever way a test holds the result.

Suites see a result three ways: the official client's `CallToolResult`, a result's JSON (an
in-process call's `reply["result"]`), or a whole JSON-RPC reply (raw HTTP, the in-process
eras). One function reads all three, so a change in how results carry text changes here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.types import CallToolResult


def text_of(result: CallToolResult | Mapping[str, Any], *, joined: bool = False) -> str:
    """The result's one text block; with `joined`, its text blocks joined in order.

    One block is what user_ask and the probe tools answer, and what most tests check, so more
    than one fails the unpacking; a FileSystem read may answer in several (a truncated read
    has two), which `joined` allows. A JSON-RPC error reply has no result and fails on the
    missing `result` key.
    """
    if isinstance(result, CallToolResult):
        texts = [block.text for block in result.content]  # type: ignore[union-attr]
    else:
        content = result["content"] if "content" in result else result["result"]["content"]
        texts = [block["text"] for block in content]
    if joined:
        return "".join(texts)
    (text,) = texts
    return str(text)
