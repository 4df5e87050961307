"""The Question, one question put to a person as observers see it, and its Route and Ending.

Plain data: it names the route a question takes and how it ended, but knows nothing of how it
travels or who answers it. Pure.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ask_mcp.protocol.forms import ElicitResult
from ask_mcp.server.identity import Identity

Route = Literal["client", "url", "browser"]
"""How a question reaches a person: the client's form, a page the client opens (URL mode), or
the browser inbox (the server's `on_elicit`). The Ask row's ``Ask.Route`` has the same values."""

Ending = Literal["accepted", "declined", "cancelled", "expired", "withdrawn", "detached", "stopped"]
"""How a question ended, as its observers hear it (exactly once): the person's reply accepted,
declined or cancelled it; nobody answered in time (expired); its call went away (withdrawn).
Two endings leave its ask pending, to be answered still: the connection dropped (detached,
answerable for a grace period, when a call asking the same may attach to it) and the worker is
stopping (stopped, answerable until its expiry). The others are the Ask row's statuses."""


@dataclass(slots=True)
class Question:
    """One question put to a person, as observers (the recorder, the inbox) see it."""

    id: str
    message: str
    schema: Mapping[str, Any]
    tool: str
    who: Identity
    """Who asks: the asking call's identity, the same value its Context holds."""
    route: Route
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


def attach_key(principal: str | None, tool: str, same: str, *, people_only: bool = False) -> str:
    """The key an ask is found by when a call asks the same again: who, which tool, and what
    (the call's idempotency key, or its request's digest). 64 hex characters.

    A people-only call's key differs from any other call's of the same principal: another token
    of the same person (same principal) attached to a people-only ask in URL mode and declined
    it itself, which is what people-only forbids.
    """
    digest = hashlib.sha256()
    parts = (principal or "", tool, same, *(("people-only",) if people_only else ()))
    for part in parts:
        digest.update(part.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()
