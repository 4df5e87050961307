"""A person's own address and sign-ins on the settings page: an email change confirmed by a mailed link, and signing out elsewhere.

A person's address (`User.email`) is the only one mail goes to, so it changes only through a
link mailed to the new address: before, `/settings/` changed it with no password and no
confirmation, which turned one stolen session into a permanent takeover (the thief's address
got every mail) and let anyone make the server mail any address (issue 28). Asking for a change
needs the current password; the link (built from PUBLIC_URL alone, signed, bound to the
request's nonce, for :data:`CONFIRM_SECONDS`) only leads to a page whose POST, by the same
person signed in, makes the change and signs out every other browser. An address an
administrator sets (the admin, `createsuperuser`) is `User.email` at once: it counts as
confirmed. Changing the password (:class:`PasswordChange`) ends every other browser too.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Final

from asgiref.sync import sync_to_async
from django.contrib.auth import authenticate
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.contrib.auth.views import PasswordChangeView
from django.core import signing
from django.core.mail import EmailMessage
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods

from ask_mcp import conf
from ask_mcp.models import EmailChange
from ask_mcp.web import browsers

SALT: Final = "ask_mcp.web.account.email"
"""Keeps these signatures apart from every other use of SECRET_KEY."""
CONFIRM_SECONDS: Final = 86_400
"""How long a confirmation link works: a day, time to reach a mailbox read once a day."""
RESEND_SECONDS: Final = 60
"""Least time between two confirmation mails for one person: a person retyping a mistyped
address waits a minute at most, a stolen session mails a stranger at most once a minute."""


class ChangeRefused(Exception):
    """An email change that cannot be asked for; the message says why, to the person."""


def link_for(change: EmailChange) -> str:
    """The confirmation link of `change`, on PUBLIC_URL.

    Raises:
        ChangeRefused: PUBLIC_URL is unset (no link can be built).
    """
    base = conf.values().public_url
    if not base:
        raise ChangeRefused(
            "This server cannot mail a confirmation link (its PUBLIC_URL is not set); ask an "
            "administrator to change your address."
        )
    token = signing.dumps({"u": change.user_id, "n": change.nonce}, salt=SALT)
    return base.rstrip("/") + reverse("ask_mcp:confirm-email", args=[token])


def ask_for_change(request: HttpRequest, user: User, address: str, password: str) -> EmailChange:
    """Record `user`'s wish for `address` and mail it the link that confirms it (blocking).

    The password is checked as a sign-in checks it (:func:`django.contrib.auth.authenticate`),
    so wrong ones count towards the same lockout: a stolen session cannot guess it here.

    Raises:
        ChangeRefused: a wrong password, mail off, or a link mailed less than a minute ago.
    """
    if not conf.values().email:
        raise ChangeRefused(
            "This server sends no mail, so it cannot confirm a new address; ask an "
            "administrator to change it."
        )
    if (
        not password
        or authenticate(request, username=user.get_username(), password=password) != user
    ):
        raise ChangeRefused(
            "Your current password is needed to change your address, and this was not it."
        )
    change = EmailChange.objects.filter(user=user).first()
    now = timezone.now()
    if change is not None and now - change.requested_at < dt.timedelta(seconds=RESEND_SECONDS):
        raise ChangeRefused("A confirmation link was mailed less than a minute ago; wait a moment.")
    if change is None:
        change = EmailChange(user=user)
    change.address = address
    change.nonce = EmailChange._meta.get_field("nonce").get_default()
    change.save()
    link = link_for(change)
    EmailMessage(
        subject="Confirm your new address for askserver",
        body=render_to_string(
            "ask_mcp/mail/confirm_email.txt",
            {"username": user.get_username(), "address": address, "link": link},
        ),
        to=[address],
        headers={"Auto-Submitted": "auto-generated"},  # RFC 3834: no out-of-office replies
    ).send()
    return change


def pending_for(user: User) -> EmailChange | None:
    return EmailChange.objects.filter(user=user).first()


def _confirm(user: User, token: str, session_key: str | None) -> tuple[int, str]:
    """Apply the change `token` confirms: (status, what the page says)."""
    try:
        signed = signing.loads(token, salt=SALT, max_age=CONFIRM_SECONDS)
    except signing.SignatureExpired:
        return 410, "This link has expired. Ask for the change again on your settings page."
    except signing.BadSignature:
        return 400, "This link is not valid. Open it exactly as it was mailed."
    if signed.get("u") != user.pk:
        return 403, "This link was sent for someone else. Sign in as them to follow it."
    change = EmailChange.objects.filter(user=user, nonce=signed.get("n")).first()
    if change is None:
        return 410, "This link was replaced by a newer one, or already followed."
    user.email = change.address
    user.save(update_fields=["email"])
    change.delete()
    browsers.end_others(user, session_key)  # a thief's session does not outlive the change
    return 200, f"Your address is now {user.email}. Every other browser was signed out."


@login_required
@require_http_methods(["GET", "POST"])
async def confirm_email(request: HttpRequest, token: str) -> HttpResponse:
    """A confirmation link: its GET shows what it would do (link scanners open every link); the
    POST of its button, by the person it was sent for, makes the change."""
    user = await request.auser()
    request.user = user
    assert isinstance(user, User)  # login_required
    status, said = 200, ""
    if request.method == "POST":
        status, said = await sync_to_async(_confirm)(user, token, request.session.session_key)
    pending = await sync_to_async(pending_for)(user)
    context = {"said": said, "done": request.method == "POST" and status == 200, "pending": pending}
    return render(request, "ask_mcp/confirm_email.html", context, status=status)


class PasswordChange(PasswordChangeView):
    """Django's password change, which also ends every other browser at once: Django alone
    signs them out at their next request, while their open inbox sockets kept pushing asks."""

    def form_valid(self, form: Any) -> HttpResponse:
        response = super().form_valid(form)
        user = self.request.user
        assert isinstance(user, User)  # the view is login_required
        browsers.end_others(user, self.request.session.session_key)
        return response
