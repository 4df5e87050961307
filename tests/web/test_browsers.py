"""A person's signed-in browsers (ask_mcp.web.browsers): the session store keeps who and which browser in columns, browsers_of lists them current first, end_others signs out all but the current and tells their inbox sockets."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.contrib.auth import HASH_SESSION_KEY, SESSION_KEY, login
from django.contrib.auth.models import User
from django.test import RequestFactory
from django.utils import timezone

from ask_mcp.models import BrowserSession
from ask_mcp.web.browsers import AGENT_CHARS, SessionStore, browsers_of, end_others, session_group

pytestmark = pytest.mark.django_db

FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0"
PHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) Mobile/15E148 Safari/604.1"


def sign_in(user: User, user_agent: str) -> str:
    """Sign `user` in as Django's login view does, from a browser saying `user_agent`; its key."""
    request = RequestFactory().post("/accounts/login/", headers={"user-agent": user_agent})
    request.session = SessionStore()
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    request.session.save()
    key = request.session.session_key
    assert key is not None
    return key


def test_a_sign_in_writes_who_which_browser_and_when_into_columns() -> None:
    alice = User.objects.create_user("alice", password="pw-alice-1")
    before = timezone.now()
    key = sign_in(alice, FIREFOX + " " + "x" * AGENT_CHARS)
    row = BrowserSession.objects.get(session_key=key)
    assert row.user_id == alice.pk
    assert row.user_agent == (FIREFOX + " " + "x" * AGENT_CHARS)[:AGENT_CHARS]
    assert row.signed_in_at is not None and before <= row.signed_in_at <= timezone.now()
    assert SessionStore(key).load()[SESSION_KEY] == str(alice.pk), "still a Django session"


def test_a_session_nobody_signed_in_to_has_no_person() -> None:
    store = SessionStore()
    store["cart"] = "anything"
    store.save()
    row = BrowserSession.objects.get(session_key=store.session_key)
    assert (row.user_id, row.user_agent, row.signed_in_at) == (None, "", None)


def test_browsers_of_lists_a_persons_live_sessions_the_current_first_then_newest() -> None:
    alice, bob = User.objects.create_user("alice"), User.objects.create_user("bob")
    laptop = sign_in(alice, FIREFOX)
    sign_in(alice, PHONE)
    sign_in(bob, FIREFOX)
    expired = sign_in(alice, "an old browser")
    BrowserSession.objects.filter(session_key=expired).update(
        expire_date=timezone.now() - dt.timedelta(seconds=1)
    )
    listed = browsers_of(alice, laptop)
    assert [(each.user_agent, each.current) for each in listed] == [(FIREFOX, True), (PHONE, False)]
    assert [each.user_agent for each in browsers_of(alice, None)] == [PHONE, FIREFOX]


def test_a_session_from_before_a_password_change_is_not_listed() -> None:
    alice = User.objects.create_user("alice", password="pw-alice-1")
    before = sign_in(alice, PHONE)
    alice.set_password("pw-alice-2")
    alice.save()
    after = sign_in(alice, FIREFOX)
    assert SessionStore(before).load()[HASH_SESSION_KEY] != alice.get_session_auth_hash()
    assert [each.user_agent for each in browsers_of(alice, after)] == [FIREFOX]


def test_end_others_signs_out_every_other_browser_and_tells_its_sockets() -> None:
    alice, bob = User.objects.create_user("alice"), User.objects.create_user("bob")
    here = sign_in(alice, FIREFOX)
    phone = sign_in(alice, PHONE)
    tablet = sign_in(alice, "a tablet")
    bobs = sign_in(bob, FIREFOX)
    layer = get_channel_layer()
    sockets = {key: async_to_sync(layer.new_channel)() for key in (here, phone)}
    for key, channel in sockets.items():
        async_to_sync(layer.group_add)(session_group(key), channel)

    assert end_others(alice, here) == 2

    left = set(BrowserSession.objects.values_list("session_key", flat=True))
    assert left == {here, bobs}
    assert tablet not in left and SessionStore(phone).load() == {}, "signed out"

    async def next_message(channel: str) -> dict[str, object]:
        return await asyncio.wait_for(layer.receive(channel), timeout=5)

    assert async_to_sync(next_message)(sockets[phone]) == {"type": "session.ended"}

    async def nothing_for(channel: str) -> bool:
        try:
            await asyncio.wait_for(layer.receive(channel), timeout=0.2)
        except TimeoutError:
            return True
        return False

    assert async_to_sync(nothing_for)(sockets[here]), "the current browser's socket stays open"


def test_session_groups_are_per_session_and_never_carry_the_key() -> None:
    one, other = session_group("a" * 32), session_group("b" * 32)
    assert one != other and one.startswith("ask_mcp.session.")
    assert "a" * 32 not in one and len(one) < 100  # the channel layer's limit on group names
