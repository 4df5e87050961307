"""The mail that tells a person of an ask: subject, plain text and HTML, with one signed link; knows no SMTP.

Sent through Django's mail framework (EMAIL_BACKEND; askserver configures SMTP from
ASKSERVER_EMAIL_URL). Everything the model wrote is auto-escaped in the HTML part and shown
as quoted text in the plain one; the only link is the server's. The form is put in words
(each field's label, what kind of answer it takes, whether it is required), read from the
requestedSchema as the wire carries it: nothing is drawn or validated here.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.timesince import timeuntil

from ask_mcp.models import Ask, Delivery
from ask_mcp.protocol.plain import plain_title
from ask_mcp.reach import links
from ask_mcp.server.context import CLIENT_NAME_CHARS, one_line

if TYPE_CHECKING:
    from django.contrib.auth.models import User

SUBJECTS: Final[Mapping[str, str]] = {
    "asked": "Question from {asker}: {first}",
    "reminder": "Reminder: {asker} is still waiting — {first}",
    "escalated": "Escalated to {fallback}: {first}",
    "fallback": "Question from {asker} (your devices did not get it): {first}",
}
"""Each purpose's subject line."""
SUBJECT_CHARS: Final = 60
"""Characters of the message's first line in the subject (most clients show about that many)."""
DIGEST_SUBJECT: Final = "{count} questions are waiting for you: {first}"
"""A digest's subject (MAIL_DIGEST_SECONDS): how many, and the first one's title."""


def asker(ask: Ask, recipient: User | None = None) -> str:
    """Who put the question, in words: the agent, then whom it works for ("claude-code for
    alice"); to that person themselves, "your agent claude-code" (never themselves as asker)."""
    # One line, whatever was stored: the plain-text part has no markup to escape, and a newline
    # in the name made a fake "Answer at:" line above the real link.
    client = one_line(ask.client_name, CLIENT_NAME_CHARS) or "an MCP client"
    if ask.asked_by is None:
        return client
    if recipient is not None and ask.asked_by_id == recipient.pk:
        return f"your agent {client}"
    return f"{client} for {ask.asked_by.get_username()}"


def expires_in(expires_at: dt.datetime, now: dt.datetime | None = None) -> str:
    """How long the ask still waits, honestly: "in under a minute" rather than "in 0 minutes"."""
    left = (expires_at - (now or timezone.now())).total_seconds()
    if left <= 0:
        return "now"
    if left < 60:
        return "in under a minute"
    return f"in {timeuntil(expires_at, now)}"


def preferences(base: str) -> str:
    """The person's mail preferences (the inbox's settings page), on the links' origin."""
    return base.rstrip("/") + reverse("ask_mcp:settings")


def context(delivery: Delivery, base: str) -> dict[str, Any]:
    """What the mail templates draw: the ask, its fields in words, who asked, the one link."""
    ask = delivery.ask
    assert delivery.recipient is not None  # mail deliveries always name their person
    link = links.url(base, ask.id, delivery.recipient.pk, ask.expires_at.timestamp())
    reach = getattr(ask, "reach", None)
    return {
        "ask": ask,
        "title": title(ask),
        "purpose": delivery.purpose,
        "recipient": delivery.recipient,
        "asker": asker(ask, delivery.recipient),
        "fields": fields_in_words(ask.schema),
        "link": link,
        "expires_in": expires_in(ask.expires_at),
        "fallback": reach.escalated_to if reach is not None else "",
        "preferences": preferences(base),
    }


def title(ask: Ask) -> str:
    """The message's first line as plain words (no Markdown marks), cut for a subject line."""
    first = plain_title((ask.message.strip().splitlines() or [""])[0])
    if len(first) > SUBJECT_CHARS:
        first = first[: SUBJECT_CHARS - 1] + "…"
    return first


def _headers(deliveries: Sequence[Delivery], base: str) -> dict[str, str]:
    return {
        "Auto-Submitted": "auto-generated",  # RFC 3834: no out-of-office replies, please
        "X-Askserver-Ask": ",".join(each.ask.id.hex for each in deliveries),
        "X-Askserver-Delivery": ",".join(str(each.pk) for each in deliveries),
        # RFC 2369: mail clients offer "unsubscribe"; it opens the person's mail preferences.
        "List-Unsubscribe": f"<{preferences(base)}>",
    }


def message(delivery: Delivery, base: str) -> EmailMultiAlternatives:
    """The mail for `delivery` (not yet sent), from DEFAULT_FROM_EMAIL to its address."""
    shown = context(delivery, base)
    subject = SUBJECTS[delivery.purpose].format(
        asker=shown["asker"], first=shown["title"], fallback=shown["fallback"]
    )
    mail = EmailMultiAlternatives(
        subject=" ".join(subject.split()),  # no line breaks from the model in a header
        body=render_to_string("ask_mcp/mail/ask.txt", shown),
        to=[delivery.address],
        headers=_headers([delivery], base),
    )
    mail.attach_alternative(render_to_string("ask_mcp/mail/ask.html", shown), "text/html")
    return mail


def digest(deliveries: Sequence[Delivery], base_of: Callable[[Ask], str]) -> EmailMultiAlternatives:
    """One mail to one person for several asks (MAIL_DIGEST_SECONDS), each with its own signed
    link; `base_of` gives each ask's links' origin."""
    items = [context(each, base_of(each.ask)) for each in deliveries]
    first = deliveries[0]
    subject = DIGEST_SUBJECT.format(count=len(items), first=items[0]["title"])
    shown = {"items": items, "recipient": first.recipient, "preferences": items[0]["preferences"]}
    mail = EmailMultiAlternatives(
        subject=" ".join(subject.split()),
        body=render_to_string("ask_mcp/mail/digest.txt", shown),
        to=[first.address],
        headers=_headers(deliveries, base_of(first.ask)),
    )
    mail.attach_alternative(render_to_string("ask_mcp/mail/digest.html", shown), "text/html")
    return mail


# The form in words: each field's label, what it takes, whether it is required.

KINDS: Final[Mapping[str, str]] = {
    "string": "text",
    "number": "a number",
    "integer": "a whole number",
    "boolean": "yes or no",
}
"""How each JSON type reads in a mail."""
FORMATS: Final[Mapping[str, str]] = {
    "email": "an email address",
    "uri": "a link",
    "date": "a date",
    "date-time": "a date and time",
}
"""How each string format reads in a mail."""


@dataclass(frozen=True, slots=True)
class FieldInWords:
    """One field of the form, as a mail lists it."""

    label: str
    takes: str
    required: bool
    description: str


def fields_in_words(schema: Mapping[str, Any]) -> list[FieldInWords]:
    """Every field of `schema`, in its order."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    described = []
    for name, spec in properties.items():
        if not isinstance(spec, Mapping):
            continue
        label = str(spec.get("title") or spec.get("description") or name)
        description = str(spec.get("description") or "") if spec.get("title") else ""
        described.append(FieldInWords(label, takes(spec), name in required, description))
    return described


def takes(spec: Mapping[str, Any]) -> str:
    """What one field takes, in words: "one of: api, ui, docs", "a number", "yes or no"…"""
    options = _options(spec)
    if options:
        return f"one of: {', '.join(options)}"
    if spec.get("type") == "array":
        items = spec.get("items") or {}
        picks = _options(items) if isinstance(items, Mapping) else []
        return f"any of: {', '.join(picks)}" if picks else "a list"
    if spec.get("type") == "string" and spec.get("format") in FORMATS:
        return FORMATS[spec["format"]]
    return KINDS.get(str(spec.get("type")), "an answer")


def _options(spec: Mapping[str, Any]) -> list[str]:
    for key in ("oneOf", "anyOf"):
        if isinstance(spec.get(key), list):
            return [
                str(o.get("title") or o.get("const")) for o in spec[key] if isinstance(o, Mapping)
            ]
    if isinstance(spec.get("enum"), list):
        names = spec.get("enumNames")
        if isinstance(names, list) and len(names) == len(spec["enum"]):
            return [str(n) for n in names]
        return [str(v) for v in spec["enum"]]
    return []
