"""The protocol eras a live suite runs in, and a client or one tools/call in either; what era-parametrized suites share.

A suite that covers both eras asks for an `era` fixture parametrized over ERAS (each module
declares it, two lines) and narrows a test to the era(s) it applies to with :func:`only`. The
era is named by the protocol version the official client speaks: 2026-07-28 (stateless, MRTR)
or an initialize-era one (a session; questions pushed on the call's stream).
"""

from __future__ import annotations

import asyncio
from typing import Any, Final, Literal

import pytest
from mcp import Client, MCPError
from mcp.types import CallToolResult

from tests.support.clients import legacy_call

type Era = Literal["2026-07-28", "2025-11-25", "2025-06-18"]
"""An era, as the protocol version a client speaks in it."""
MODERN: Final[Era] = "2026-07-28"
"""The stateless revision: questions travel as input_required rounds."""
LEGACY: Final[Era] = "2025-11-25"
"""The newest initialize-era revision: a session, questions pushed on the call's stream."""
OLDEST: Final[Era] = "2025-06-18"
"""The oldest initialize-era revision served: its pushed form has no `mode`."""
ERAS: Final[tuple[Era, ...]] = (MODERN, LEGACY)
"""What an era-parametrized suite runs every test in unless :func:`only` narrows it."""


def only(*eras: Era) -> pytest.MarkDecorator:
    """Run the test in `eras` only: what it checks exists in no other era."""
    return pytest.mark.parametrize("era", eras, indirect=True)


def connect(era: Era, url: str, **kwargs: Any) -> Client:
    """The official client speaking `era` (MODERN or LEGACY) to `url`."""
    return Client(url, mode=MODERN if era == MODERN else "legacy", **kwargs)


async def call(
    era: Era, url: str, callback: Any, name: str, arguments: dict[str, Any]
) -> CallToolResult:
    """One tools/call through a fresh client speaking `era`; an MCPError is raised as itself."""
    if era != MODERN:
        return (await legacy_call(url, callback, name, arguments, version=era))[1]
    failure: MCPError | None = None
    async with asyncio.timeout(15), connect(era, url, elicitation_callback=callback) as modern:
        try:
            return await modern.call_tool(name, arguments)
        except MCPError as exc:
            failure = exc
    raise failure
