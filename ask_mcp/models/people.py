"""A person's sign-ins and address: each signed-in browser's session row, and an email change waiting for its confirmation.

:class:`BrowserSession` is Django's database session with the person it signs in kept in a
column (Django's own keeps them only inside the encoded data), so the settings page can list a
person's browsers and end them all; askserver makes it the session store
(`SESSION_ENGINE = "ask_mcp.web.browsers"`). :class:`EmailChange` is a new address a person
asked for: their address (`User.email`, the only one mail goes to) changes only when the link
mailed to the new one is followed. An address an administrator sets (the admin,
`createsuperuser`) is `User.email` at once: it counts as confirmed.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.contrib.sessions.base_session import AbstractBaseSession
from django.db import models


def new_nonce() -> str:
    """What a confirmation link is bound to: a newer request for the same person voids it."""
    return secrets.token_urlsafe(16)


class BrowserSession(AbstractBaseSession):
    """One browser's session, with who it signs in, which browser, and since when."""

    user_id = models.IntegerField(null=True, db_index=True)
    """The signed-in person's id (None for a session without a sign-in)."""
    user_agent = models.CharField(max_length=200, blank=True)
    signed_in_at = models.DateTimeField(null=True)
    # The store is ask_mcp.web.browsers.SessionStore (the records never import the web, so
    # get_session_store_class is not given and get_decoded() is not used).

    class Meta(AbstractBaseSession.Meta):
        verbose_name = "browser session"
        verbose_name_plural = "browser sessions"


class EmailChange(models.Model):
    """A new address one person asked for; it replaces theirs once the mailed link is followed."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="email_change",
    )
    address = models.EmailField()
    nonce = models.CharField(max_length=32, default=new_nonce)
    requested_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.user} → {self.address} (not confirmed)"
