"""Who has seen an ask: the "seen" event of each person once, and the words that tell the agent; knows no view.

An ask is **seen** by a person when its card is unfolded in their inbox, or its page is shown in
a visible tab (the Page Visibility API), or when they answer it (the answer says so itself). It
differs from the history's **shown**, which the server records when it draws an ask's form for
someone (a page load, a card pushed to an open inbox), whether or not anyone looked; **reached**
is a push that got to one of the person's devices. Each person's first look is kept once.
"""

from __future__ import annotations

import uuid
from typing import Final

from django.contrib.auth.models import User
from django.utils import timezone

from ask_mcp.models import Ask, AskEvent
from ask_mcp.records import tasks

NAMED: Final = 3
"""People the words name before "and N more" (a status line stays one line)."""


def seen_words(looks: list[tuple[str, str]]) -> str:
    """What the agent is told: "Seen by alice at 14:02 UTC; not answered yet." (never a refusal)."""
    named = [f"{who} at {when}" for who, when in looks[:NAMED]]
    if len(looks) > NAMED:
        named.append(f"{len(looks) - NAMED} more")
    listed = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
    return f"Seen by {listed}; not answered yet."


def mark_seen(ask_id: uuid.UUID, person: User) -> str | None:
    """Keep that `person` has seen the waiting ask `ask_id`; the words for the agent when this
    was their first look, None otherwise (seen before, or the ask no longer waits).

    The open tasks of the ask say the words as their statusMessage (through the task store's one
    update path, :func:`ask_mcp.records.tasks.note_status`).
    """
    ask = Ask.objects.filter(pk=ask_id, status=Ask.Status.PENDING).first()
    if ask is None:
        return None
    if AskEvent.objects.filter(ask_id=ask_id, kind=AskEvent.Kind.SEEN, actor=person).exists():
        return None
    AskEvent.objects.create(
        ask_id=ask_id, kind=AskEvent.Kind.SEEN, at=timezone.now(), actor=person, route=ask.route
    )
    looks = [
        (event.actor.get_username() if event.actor else "someone", f"{event.at:%H:%M} UTC")
        for event in AskEvent.objects.filter(ask_id=ask_id, kind=AskEvent.Kind.SEEN)
        .select_related("actor")
        .order_by("at", "pk")
    ]
    words = seen_words(looks)
    tasks.note_status(ask_id, words)
    return words
