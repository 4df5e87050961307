"""Signed answer links for mail: bound to one recipient and one ask, expiring with the ask; knows no view.

A link is a pointer, never a credential: opening it only leads its recipient, once signed in
as themself, to the ask's page, whose GET shows the form and whose POST (with the session and
its CSRF token) is the only thing that answers. The signature stops a forged or edited link
(another ask, another recipient, a later expiry) from leading anywhere.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Final

from django.core import signing
from django.urls import reverse

SALT: Final = "ask_mcp.reach.links"
"""Keeps these signatures apart from every other use of SECRET_KEY."""


class LinkInvalid(Exception):
    """The link was not signed by this server (forged, edited, cut short, or signed with a retired key)."""


class LinkExpired(Exception):
    """The link was ours, but the ask it points to has passed its expiry."""


@dataclass(frozen=True, slots=True)
class Link:
    """What a valid link names."""

    ask_id: uuid.UUID
    user_id: int


def token(ask_id: uuid.UUID, user_id: int, expires_at: float) -> str:
    """The signed part of a link for `user_id` to `ask_id`, valid until `expires_at` (Unix time)."""
    return signing.dumps({"a": ask_id.hex, "u": user_id, "e": int(expires_at) + 1}, salt=SALT)


def url(base: str, ask_id: uuid.UUID, user_id: int, expires_at: float) -> str:
    """The link to put in a mail: `base` (an origin) and the link's path."""
    path = reverse("ask_mcp:link", args=[token(ask_id, user_id, expires_at)])
    return base.rstrip("/") + path


def read(value: str, *, now: float | None = None) -> Link:
    """What the link `value` names.

    Raises:
        LinkInvalid: not signed by this server (SECRET_KEY or its fallbacks).
        LinkExpired: signed, but its ask's expiry has passed.
    """
    try:
        fields = signing.loads(value, salt=SALT)
        link = Link(uuid.UUID(hex=str(fields["a"])), int(fields["u"]))
        expires = float(fields["e"])
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise LinkInvalid(value) from None
    if (time.time() if now is None else now) > expires:
        raise LinkExpired(value)
    return link
