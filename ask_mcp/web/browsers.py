"""A person's signed-in browsers: the session store that keeps whom each session signs in, listing them, and ending them; knows no page.

Django's database sessions keep the signed-in user only inside each row's encoded data, so
"which browsers is this person signed in on" needed every row decoded. This store (askserver's
`SESSION_ENGINE`) writes the user, the browser's User-Agent and the sign-in time into columns of
:class:`ask_mcp.models.BrowserSession` whenever a session is saved (a key cycled at sign-in or
by a password change included). A session whose password hash no longer matches its person's
(the password changed since) is already signed out by Django on its next request; it is not
listed, and ending the others deletes its row too. Ending a session also closes the inbox
sockets it opened (each joins its session's group), which would otherwise keep pushing new asks
to a browser that is signed out.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, cast

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.contrib.auth import HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.signals import user_logged_in
from django.contrib.sessions.backends.db import SessionStore as DatabaseStore
from django.dispatch import receiver
from django.http import HttpRequest
from django.utils import timezone
from django.utils.crypto import constant_time_compare

from ask_mcp.models import BrowserSession

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

AGENT_KEY: Final = "ask_mcp.agent"
"""The session data key holding the browser's User-Agent, as it signed in."""
SINCE_KEY: Final = "ask_mcp.since"
"""The session data key holding when the browser signed in (ISO 8601)."""
AGENT_CHARS: Final = 200
"""Characters of a User-Agent kept: enough to tell browsers apart (they run to about 150)."""


class SessionStore(DatabaseStore):
    """Django's database sessions, with the signed-in person, browser and time in columns."""

    @classmethod
    def get_model_class(cls) -> Any:
        return BrowserSession

    def create_model_instance(self, data: dict[str, Any]) -> BrowserSession:
        row = cast(BrowserSession, super().create_model_instance(data))
        try:
            row.user_id = int(data[SESSION_KEY])
        except (KeyError, TypeError, ValueError):
            row.user_id = None
        row.user_agent = str(data.get(AGENT_KEY, ""))[:AGENT_CHARS]
        since = data.get(SINCE_KEY)
        row.signed_in_at = dt.datetime.fromisoformat(since) if isinstance(since, str) else None
        return row


@receiver(user_logged_in)
def remember_browser(sender: Any, request: HttpRequest | None, **kwargs: Any) -> None:
    """At each sign-in, keep which browser it was and when, for the settings page's list."""
    if request is None or not hasattr(request, "session"):
        return
    request.session[AGENT_KEY] = request.headers.get("user-agent", "")[:AGENT_CHARS]
    request.session[SINCE_KEY] = timezone.now().isoformat()


@dataclass(frozen=True, slots=True)
class Browser:
    """One browser a person is signed in on."""

    user_agent: str
    signed_in_at: dt.datetime | None
    expires: dt.datetime
    current: bool
    """The browser looking at the list."""


def browsers_of(user: AbstractBaseUser, current_key: str | None) -> list[Browser]:
    """The browsers `user` is signed in on now, the one with `current_key` first."""
    rows = BrowserSession.objects.filter(user_id=user.pk, expire_date__gt=timezone.now())
    password = user.get_session_auth_hash()
    found = []
    for row in rows:
        kept = SessionStore().decode(row.session_data).get(HASH_SESSION_KEY, "")
        if not constant_time_compare(kept, password):
            continue  # signed in before the password changed: Django ends it on its next request
        current = row.session_key == current_key
        found.append(Browser(row.user_agent, row.signed_in_at, row.expire_date, current))
    far_past = dt.datetime.min.replace(tzinfo=dt.UTC)
    newest_first = sorted(found, key=lambda each: each.signed_in_at or far_past, reverse=True)
    return sorted(newest_first, key=lambda each: not each.current)


def session_group(session_key: str) -> str:
    """The channel-layer group of one session's inbox sockets (named by a digest of the key:
    group names travel through Redis)."""
    return "ask_mcp.session." + hashlib.sha256(session_key.encode()).hexdigest()[:40]


def end_others(user: AbstractBaseUser, current_key: str | None) -> int:
    """Sign `user` out of every browser but the one with `current_key`, closing their open inbox
    sockets on every worker too (a socket is signed in when it opens); how many were ended.

    Blocking (the database, then the channel layer): call it from a thread.
    """
    others = BrowserSession.objects.filter(user_id=user.pk).exclude(session_key=current_key or "")
    keys = list(others.values_list("session_key", flat=True))
    ended, _ = others.delete()
    layer = get_channel_layer()
    if layer is not None:
        for key in keys:
            async_to_sync(layer.group_send)(session_group(key), {"type": "session.ended"})
    return ended
