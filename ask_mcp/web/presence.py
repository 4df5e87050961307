"""Who is answering an ask right now: what an inbox says when a card is unfolded or folded, and the words the others' cards show; knows no socket.

A person unfolding a card tells everyone else who may answer it ("bob is answering"), so two
people stop racing to type the same answer. Nothing of it is stored: it lives in the inbox
sockets (ask_mcp.web.consumers), is said again every HEARTBEAT_SECONDS while the card stays
open, and is forgotten PRESENCE_SECONDS after it was last said, or at once when the card is
folded or its page's socket closes. A person never sees their own presence.
"""

from __future__ import annotations

import json
import re
from typing import Final, Literal

from django.utils.html import format_html

PresenceSaid = Literal["open", "closed"]
"""What an inbox says of one card: unfolded (being answered) or folded again."""
HEARTBEAT_SECONDS: Final = 20
"""How often an inbox says again that a card is still open (inbox.js PRESENCE_MS)."""
PRESENCE_SECONDS: Final = 45
"""How long a card's "is answering" lasts unless said again: two heartbeats and a margin, so a
phone that went to sleep without closing its socket stops showing within 45 s, and one late
heartbeat (a busy tab's timers slowed to once a second or worse) does not make it flicker."""
NAMED: Final = 3
"""People named before "and N more" (the line stays one line on a 390 px phone)."""
_HEX: Final = re.compile(r"[0-9a-f]{32}")


def read(text: str | None) -> tuple[str, PresenceSaid] | None:
    """The ask (its hex id) and what was said of it, from an inbox socket's message; None for
    anything else (the socket ignores it)."""
    try:
        data = json.loads(text or "")
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    ask, said = data.get("ask"), data.get("presence")
    if not isinstance(ask, str) or not _HEX.fullmatch(ask) or said not in ("open", "closed"):
        return None
    return ask, "open" if said == "open" else "closed"


def words(names: list[str]) -> str:
    """The card's words: "bob is answering", "bob and carol are answering", "bob, carol, dave
    and 2 more are answering"; empty for nobody."""
    unique = sorted(set(names))
    if not unique:
        return ""
    shown = unique[:NAMED]
    if len(unique) > NAMED:
        shown.append(f"{len(unique) - NAMED} more")
    listed = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
    return f"{listed} {'is' if len(unique) == 1 else 'are'} answering"


def fragment(ask_hex: str, names: list[str]) -> str:
    """The card's presence line (asks.html's `ask-presence` slot), swapped in by id."""
    return str(
        format_html(
            '<p id="presence-{}" class="presence" role="status" hx-swap-oob="true">{}</p>',
            ask_hex,
            words(names),
        )
    )
