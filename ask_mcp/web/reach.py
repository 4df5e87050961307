"""The inbox's reach pages: where a mailed link leads, and each person's notification settings; sending is reach's.

A mailed link (see :mod:`ask_mcp.reach.links`) never answers anything: link scanners and
previews open every link in a mail, so its GET only checks the signature, asks the person to
sign in if they are not, and leads its own recipient to the ask's page, whose form (a POST with
the session and its CSRF token) is the only way to answer.
"""

from __future__ import annotations

from typing import Final

from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from ask_mcp import conf
from ask_mcp.models import ReachPreference
from ask_mcp.reach import links, push
from ask_mcp.web import account, browsers, phone

LINK_PROBLEMS: Final = {
    "invalid": (
        400,
        "This link is not valid",
        "It was not sent by this server, or it was changed or cut short on the way. Open the question from your inbox instead.",
    ),
    "expired": (
        410,
        "This link has expired",
        "The question it pointed to is no longer waiting for an answer. Your inbox lists the questions that are.",
    ),
    "someone-else": (
        403,
        "This link was sent to someone else",
        "It only opens for the person it was mailed to. Sign out and sign in as them, or open your own inbox.",
    ),
}
"""Each way a link can fail: the status, the page's title and what to do instead."""


@require_GET
async def mail_link(request: HttpRequest, token: str) -> HttpResponse:
    """Lead a mailed link's recipient to the ask's page; sign in first if need be."""
    user = await request.auser()
    request.user = (
        user  # resolved here: the page's header reads it, and no query may run in a template
    )
    try:
        link = links.read(token)
    except links.LinkInvalid:
        return _problem(request, "invalid")
    except links.LinkExpired:
        return _problem(request, "expired")
    if not user.is_authenticated:
        return redirect_to_login(request.get_full_path())  # and back here once signed in
    if user.pk != link.user_id:
        return _problem(request, "someone-else")
    return redirect("ask_mcp:ask", ask_id=link.ask_id)


def _problem(request: HttpRequest, problem: str) -> HttpResponse:
    status, title, advice = LINK_PROBLEMS[problem]
    context = {"title": title, "advice": advice, "problem": problem}
    return render(request, "ask_mcp/link.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
async def reach_settings(request: HttpRequest) -> HttpResponse:
    """The signed-in person's settings: whether to be mailed or pushed, away, their address
    (changed only through a mailed link, :mod:`ask_mcp.web.account`), their devices and the
    browsers they are signed in on."""
    user = await request.auser()
    request.user = user
    assert isinstance(user, User)  # login_required
    choice = await ReachPreference.objects.filter(user=user).afirst()
    if choice is None:
        choice = ReachPreference(user=user)
    said, error = "", ""
    if request.method == "POST" and request.POST.get("action") == "sign-out-others":
        ended = await sync_to_async(browsers.end_others)(user, request.session.session_key)
        said = f"Signed out of {ended} other browser{'s' if ended != 1 else ''}."
    elif request.method == "POST":
        said, error = await _save(request, user, choice)
    context = {
        "away_until": request.POST.get("away_until", "") if error else phone.away_value(choice),
        "choice": choice,
        "email": request.POST.get("email", user.email) if error else user.email,
        "pending": await sync_to_async(account.pending_for)(user),
        "browsers": await sync_to_async(browsers.browsers_of)(user, request.session.session_key),
        "email_configured": conf.values().email,
        "password_change": _url_of("password_change"),
        "said": said,
        "error": error,
        **await database_sync_to_async(phone.settings_context)(user, request),
    }
    return render(request, "ask_mcp/settings.html", context, status=400 if error else 200)


@login_required
@require_POST
async def set_away(request: HttpRequest) -> HttpResponse:
    """The inbox's Away form: away until a time, or back now ("back"); then the inbox again."""
    user = await request.auser()
    assert isinstance(user, User)  # login_required
    until, refused = (None, "")
    if request.POST.get("action") != "back":
        until, refused = phone.read_away(request.POST.get("away_until", ""))
        if until is None and not refused:
            refused = "Choose when you are back: a time in the future (UTC)."
    if refused:
        return HttpResponseBadRequest(refused, content_type="text/plain; charset=utf-8")
    await ReachPreference.objects.aupdate_or_create(user=user, defaults={"away_until": until})
    return redirect("ask_mcp:inbox")


def _url_of(name: str) -> str | None:
    """The URL named `name`, or None in a project that does not mount it."""
    try:
        return reverse(name)
    except NoReverseMatch:
        return None


async def _save(request: HttpRequest, user: User, choice: ReachPreference) -> tuple[str, str]:
    """The settings form's POST: (what was done, what was refused)."""
    away_until, refused = phone.read_away(request.POST.get("away_until", ""))
    if refused:
        return "", refused
    email = request.POST.get("email", "").strip()
    if email and email != user.email:
        try:
            validate_email(email)
        except ValidationError:
            return "", f"{email!r} is not an email address."
        password = request.POST.get("password", "")
        try:
            await sync_to_async(account.ask_for_change)(request, user, email, password)
        except account.ChangeRefused as refused:
            return "", str(refused)
    choice.away_until = away_until
    choice.email_asks = request.POST.get("email_asks") == "on"
    choice.email_reminders = request.POST.get("email_reminders") == "on"
    if push.enabled():  # the box is only drawn then
        choice.push = request.POST.get("push") == "on"
    await choice.asave()
    if email and email != user.email:
        return (
            f"Saved. A link was mailed to {email}: your address changes to it once you follow "
            "the link; until then mail goes to your current address.",
            "",
        )
    return "Saved.", ""
