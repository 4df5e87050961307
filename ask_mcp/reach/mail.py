"""The mail that tells a person of an ask: subject, plain text and HTML, with one signed link; knows no SMTP.

Sent through Django's mail framework (EMAIL_BACKEND; askserver configures SMTP from
ASKSERVER_EMAIL_URL). Everything the model wrote is auto-escaped in the HTML part and shown
as quoted text in the plain one; the only link is the server's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.utils.timesince import timeuntil

from ask_mcp.models import Ask, Delivery
from ask_mcp.reach import links
from ask_mcp.reach.words import fields_in_words

SUBJECTS: Final[Mapping[str, str]] = {
    "asked": "Question from {asker}: {first}",
    "reminder": "Reminder: {asker} is still waiting — {first}",
    "escalated": "Escalated to {fallback}: {first}",
}
"""Each purpose's subject line."""
SUBJECT_CHARS: Final = 60
"""Characters of the message's first line in the subject (most clients show about that many)."""


def asker(ask: Ask) -> str:
    """Who put the question, in words: "alice via claude-code", or the client alone."""
    client = ask.client_name or "an MCP client"
    if ask.asked_by is not None:
        return f"{ask.asked_by.get_username()} via {client}"
    return client


def context(delivery: Delivery, base: str) -> dict[str, Any]:
    """What the mail templates draw: the ask, its fields in words, who asked, the one link."""
    ask = delivery.ask
    assert delivery.recipient is not None  # mail deliveries always name their person
    link = links.url(base, ask.id, delivery.recipient.pk, ask.expires_at.timestamp())
    reach = getattr(ask, "reach", None)
    return {
        "ask": ask,
        "purpose": delivery.purpose,
        "recipient": delivery.recipient,
        "asker": asker(ask),
        "fields": fields_in_words(ask.schema),
        "link": link,
        "expires_in": timeuntil(ask.expires_at),
        "fallback": reach.escalated_to if reach is not None else "",
    }


def message(delivery: Delivery, base: str) -> EmailMultiAlternatives:
    """The mail for `delivery` (not yet sent), from DEFAULT_FROM_EMAIL to its address."""
    shown = context(delivery, base)
    ask = delivery.ask
    first = (ask.message.strip().splitlines() or [""])[0]
    if len(first) > SUBJECT_CHARS:
        first = first[: SUBJECT_CHARS - 1] + "…"
    subject = SUBJECTS[delivery.purpose].format(
        asker=shown["asker"], first=first, fallback=shown["fallback"]
    )
    mail = EmailMultiAlternatives(
        subject=" ".join(subject.split()),  # no line breaks from the model in a header
        body=render_to_string("ask_mcp/mail/ask.txt", shown),
        to=[delivery.address],
        headers={
            "Auto-Submitted": "auto-generated",  # RFC 3834: no out-of-office replies, please
            "X-Askserver-Ask": ask.id.hex,
            "X-Askserver-Delivery": str(delivery.pk),
        },
    )
    mail.attach_alternative(render_to_string("ask_mcp/mail/ask.html", shown), "text/html")
    return mail
