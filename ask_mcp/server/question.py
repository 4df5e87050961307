"""The Question: one question put to a person, as observers see it; plain data, knows no route or wire.

Plain data: it knows nothing of how the question travels or who answers it. Pure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class Question:
    """One question put to a person, as observers (the recorder, the inbox) see it."""

    id: str
    message: str
    schema: Mapping[str, Any]
    tool: str
    principal: str | None
    route: str
    created_at: float
    expires_at: float
    client_name: str | None = None
    attempt: int = 1
    call_id: str | None = None
    """The parked call holding the question, when it travels to the client as MRTR."""
    worker: str | None = None
    """The table (worker process) that holds the question."""
    team: str | None = None
    """The team the caller's credentials route questions to, besides the caller."""
    toolkit: str | None = None
    """The name of the toolkit whose tool, prompt or resource asks (None when it has none)."""
    credential: str | None = None
    """The credential the asking client used, as people know it (a token's label)."""
    client_version: str | None = None
    session: str | None = None
    """The initialize-era session the asking call belongs to."""

    def shown_as(self, message: str) -> Question:
        """A copy with the message a person is shown this attempt (a re-ask says what went wrong)."""
        return dataclasses.replace(self, message=message)
