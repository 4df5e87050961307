"""The Question: one question put to a person, as observers see it; plain data, knows no route or wire.

Plain data: it knows nothing of how the question travels or who answers it. Pure.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ask_mcp.protocol.forms import ElicitResult
from ask_mcp.server.identity import Identity


@dataclass(slots=True)
class Question:
    """One question put to a person, as observers (the recorder, the inbox) see it."""

    id: str
    message: str
    schema: Mapping[str, Any]
    tool: str
    who: Identity
    """Who asks: the asking call's identity, the same value its Context holds."""
    route: str
    created_at: float
    expires_at: float
    client_name: str | None = None
    attempt: int = 1
    call_id: str | None = None
    """The parked call holding the question, when it travels to the client as MRTR."""
    worker: str | None = None
    """The table (worker process) that holds the question."""
    toolkit: str | None = None
    """The name of the toolkit whose tool, prompt or resource asks (None when it has none)."""
    attach_key: str | None = None
    """For a question a person answers in the browser: principal, tool and arguments (or the
    call's idempotency key) digested. A call asking the same while an earlier ask waits, or
    holds an answer no call collected, attaches to that ask instead of making another."""
    collector: str = ""
    """The call asking, as the ask's history names the call its decision was delivered to."""
    settled: ElicitResult | None = None
    """Set by the observer when the question attached to an ask already decided and not yet
    collected: the call takes that decision instead of waiting."""
    attached: bool = False
    """Set by the observer when the question attached to an earlier call's pending ask."""
    attached_from: str = ""
    """The worker that held the ask before this call attached to it."""
    client_version: str | None = None
    session: str | None = None
    """The initialize-era session the asking call belongs to."""
    in_task: bool = False
    """Asked by a task (server.tasks): no call holds it; the client polls for its answer."""

    def shown_as(self, message: str) -> Question:
        """A copy with the message a person is shown this attempt (a re-ask says what went wrong)."""
        return dataclasses.replace(self, message=message)


def attach_key(principal: str | None, tool: str, same: str) -> str:
    """The key an ask is found by when a call asks the same again: who, which tool, and what
    (the call's idempotency key, or its request's digest). 64 hex characters."""
    digest = hashlib.sha256()
    for part in (principal or "", tool, same):
        digest.update(part.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()
