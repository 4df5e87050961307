"""The engine's words as the Ask row's choices: a question's route and ending, mapped once.

The engine names a route and an ending as Literals (:mod:`ask_mcp.server.question`); the Ask
row keeps the ``Ask.Route`` and ``Ask.Status`` choices. The records convert here and nowhere
else, and tests/records/test_choices.py holds the two vocabularies to the same values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ask_mcp.models import Ask
from ask_mcp.protocol.forms import Action
from ask_mcp.server.asking.table import STATUS_FOR_ACTION as ENDING_FOR_ACTION
from ask_mcp.server.question import Ending, Route

ROUTES: Final[Mapping[Route, Ask.Route]] = {
    "client": Ask.Route.CLIENT,
    "url": Ask.Route.URL,
    "browser": Ask.Route.BROWSER,
}
"""The Ask row's route for each route a question takes."""
CLOSED_AS: Final[Mapping[Ending, Ask.Status]] = {
    "accepted": Ask.Status.ACCEPTED,
    "declined": Ask.Status.DECLINED,
    "cancelled": Ask.Status.CANCELLED,
    "expired": Ask.Status.EXPIRED,
    "withdrawn": Ask.Status.WITHDRAWN,
}
"""The status each ending closes its ask with. The two endings not here, "detached" and
"stopped", leave it pending: its call left, but a person may still answer it."""
STATUS_FOR_ACTION: Final[Mapping[Action, Ask.Status]] = {
    action: CLOSED_AS[ending] for action, ending in ENDING_FOR_ACTION.items()
}
"""The status a reply's action decides an ask to (the status its question ends with)."""


def closed_as(ending: Ending) -> Ask.Status | None:
    """The status `ending` closes its ask with (None: the ask stays pending)."""
    return CLOSED_AS.get(ending)


__all__ = ["CLOSED_AS", "ROUTES", "STATUS_FOR_ACTION", "closed_as"]
