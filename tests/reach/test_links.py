"""Signed answer links: bound to one ask and one recipient, expiring with the ask, refused when forged or edited."""

from __future__ import annotations

import uuid

import pytest
from django.core import signing
from django.test import override_settings

from ask_mcp.reach.links import SALT, Link, LinkExpired, LinkInvalid, read, token, url

ASK = uuid.UUID("0190f3a1-0000-7000-8000-000000000001")


def test_a_link_names_its_ask_and_recipient_until_the_asks_expiry() -> None:
    signed = token(ASK, 7, expires_at=1000.0)
    assert read(signed, now=1000.5) == Link(ASK, 7)
    with pytest.raises(LinkExpired):
        read(signed, now=1001.5)


def test_the_mailed_url_is_the_origin_and_the_links_path() -> None:
    made = url("https://ask.example/", ASK, 7, expires_at=1000.0)
    assert made.startswith("https://ask.example/") and "//" not in made.removeprefix("https://")
    assert read(made.rstrip("/").rsplit("/", 1)[-1], now=0) == Link(ASK, 7)


def test_an_edited_forged_or_foreign_link_is_invalid() -> None:
    signed = token(ASK, 7, expires_at=1000.0)
    edited = signed.replace(signed[2], "x" if signed[2] != "x" else "y", 1)
    forged = signing.dumps({"a": ASK.hex, "u": 8, "e": 2000}, salt="another.salt")
    unsalted_fields = signing.dumps({"a": "not-hex", "u": 8, "e": 2000}, salt=SALT)
    for value in (edited, forged, signed[:-3], unsalted_fields, ""):
        with pytest.raises(LinkInvalid):
            read(value, now=0)
    with override_settings(SECRET_KEY="another-secret-key-" * 3), pytest.raises(LinkInvalid):
        read(signed, now=0)
