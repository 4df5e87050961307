"""A team server: asks go to the token's user and team, others are refused, history and webhooks follow."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import re
import uuid
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser, Group, Permission, User
from django.utils import timezone
from mcp import Client
from playwright.async_api import expect

from ask_mcp import runtime
from ask_mcp.models import Ask, AskEvent
from ask_mcp.records.decisions import ask_answer
from ask_mcp.records.retention import purge_answers
from tests.support.browser import OpenAs, Person, card, live_inbox, open_card
from tests.support.clients import Person as ClientPerson
from tests.support.clients import accept, ask_with, authed
from tests.support.live import LiveServer
from tests.support.receivers import Receiver
from tests.support.results import text_of
from tests.support.shell import shell
from tests.support.team import Team


@pytest.mark.asyncio(loop_scope="session")  # the browser fixture lives in the session's loop
async def test_an_ask_reaches_its_asker_and_team_and_nobody_else(
    web: LiveServer, team: Team, open_as: OpenAs
) -> None:
    pages = {person.username: await open_as(person) for person in (team.dora, team.eli, team.finn)}
    for page in pages.values():
        await live_inbox(page)
    message = f"Which region? [{uuid.uuid4().hex[:8]}]"
    call = asyncio.create_task(ask_with(web.mcp_url, team.token, message))
    await expect(card(pages[team.dora.username], message)).to_be_visible()
    shown = card(pages[team.eli.username], message)
    await expect(shown).to_be_visible()
    ask_hex = await shown.get_attribute("data-ask")
    assert ask_hex is not None
    await expect(card(pages[team.finn.username], message)).to_have_count(0)

    outsider = pages[team.finn.username]
    response = await outsider.goto(f"/asks/{uuid.UUID(ask_hex)}/")
    assert response is not None and response.status == 403
    token = await outsider.evaluate("document.cookie.match(/csrftoken=([^;]+)/)[1]")
    refused = await outsider.request.post(
        f"/asks/{uuid.UUID(ask_hex)}/",
        form={"action": "decline", "csrfmiddlewaretoken": token},
        headers={"X-CSRFToken": token, "Referer": web.base_url + "/"},
    )
    assert refused.status == 403

    await open_card(pages[team.eli.username], message)
    await shown.get_by_label("answer").fill("eu-west")
    await shown.get_by_role("button", name="Send answer").click()
    async with asyncio.timeout(20):
        result = await call
    assert text_of(result) == '{"answer":"eu-west"}'

    page = pages[team.eli.username]
    await page.goto(f"/asks/{uuid.UUID(ask_hex)}/")
    history = page.locator(".history li")
    # Created by dora's agent (the client), for her; not "by dora (in the inbox)".
    await expect(history.nth(0)).to_contain_text(
        re.compile(rf"Created by \S+ for {team.dora.username} \(to be answered in the inbox\)")
    )
    await expect(history.filter(has_text=f"Shown by {team.eli.username}")).to_have_count(1)
    await expect(history.filter(has_text=f"Answered by {team.eli.username}")).to_have_count(1)
    recorded = shell(
        web,
        (
            "import json; from ask_mcp.models import Ask;"
            f"a = Ask.objects.get(pk={ask_hex!r});"
            "print(json.dumps([a.asked_by.username, a.team.name, a.answered_by.username, a.status]))"
        ),
    )
    assert recorded == [team.dora.username, team.team, team.eli.username, "accepted"]


async def test_a_client_answered_ask_is_recorded_with_its_history(
    web: LiveServer, team: Team
) -> None:
    async with (
        asyncio.timeout(30),
        authed(web.mcp_url, team.token, ClientPerson(accept(answer="yes"))) as client,
    ):
        result = await client.call_tool("user_ask", {"message": "Recorded?"})
    assert text_of(result) == '{"answer":"yes"}'
    # The client route is written in the background; probe_records waits for the writer.
    async with asyncio.timeout(20), Client(web.mcp_url, mode="2026-07-28") as probe:
        await probe.call_tool("probe_records", {})
    recorded = shell(
        web,
        (
            "import json; from ask_mcp.models import Ask;"
            f"a = Ask.objects.filter(asked_by__username={team.dora.username!r}, message='Recorded?').get();"
            "print(json.dumps([a.route, a.status, a.answer, [e.kind for e in a.events.all()]]))"
        ),
    )
    assert recorded == ["client", "accepted", {"answer": "yes"}, ["created", "shown", "answered"]]


async def test_a_new_inbox_ask_is_announced_on_the_teams_webhook(
    web: LiveServer, team: Team
) -> None:
    receiver = Receiver([200])
    try:
        web.manage(
            "shell",
            "-c",
            (
                "from django.contrib.auth.models import Group; from ask_mcp.models import Webhook;"
                f"Webhook.objects.create(team=Group.objects.get(name={team.team!r}), url={receiver.url!r})"
            ),
        )
        message = f"Announce me [{uuid.uuid4().hex[:8]}]"
        call = asyncio.create_task(ask_with(web.mcp_url, team.token, message))
        # Delivered by a background task on the server: wait (bounded) for the receiver to hear it.
        assert await asyncio.to_thread(receiver.got.wait, 20)
        body = receiver.bodies[0]
        assert "asks (via user_ask)\nAnswer at: " in body["text"]
        assert body["text"].endswith("\n> " + message)
        assert body["ask"]["url"].startswith(web.base_url + "/asks/")
        call.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await call
    finally:
        receiver.close()


def test_quickstart_prints_a_token_and_a_client_configuration_that_work(
    live_servers: Any,
) -> None:
    from tests.support.browser import WEB_CONFIG
    from tests.support.wire import headers_for, post, request_body

    server = live_servers.start({**WEB_CONFIG, "ALLOW_ANONYMOUS_LOOPBACK": False})
    try:
        out = server.manage("quickstart", "--url", server.base_url + "/")
        config = json.loads(out[out.index("{") :])
        entry = config["mcpServers"]["askserver"]
        assert entry["url"] == server.mcp_url
        body = request_body("tools/list")
        assert post(server.mcp_url, body).status_code == 401
        ok = post(server.mcp_url, body, {**headers_for(body), **entry["headers"]})
        assert ok.status_code == 200
        again = server.manage("quickstart", "--url", server.base_url + "/")
        assert "askmcp_" not in again and "createtoken" in again
    finally:
        live_servers.stop(server)


@pytest.mark.django_db(transaction=True)
def test_retention_deletes_old_answers_and_keeps_the_ask_and_its_history() -> None:
    now = timezone.now()
    old = Ask.objects.create(
        created=now - dt.timedelta(days=40),
        message="old",
        schema={},
        tool="user_ask",
        route="browser",
        status="accepted",
        answer={"answer": "secret-ish"},
        answered_at=now - dt.timedelta(days=31),
        collected_at=now - dt.timedelta(days=31),
        expires_at=now,
    )
    recent = Ask.objects.create(
        created=now,
        message="new",
        schema={},
        tool="user_ask",
        route="browser",
        status="accepted",
        answer={"answer": "keep"},
        answered_at=now - dt.timedelta(days=1),
        expires_at=now,
    )
    assert purge_answers(now, 30, grace=600.0) == 1
    old.refresh_from_db()
    recent.refresh_from_db()
    assert old.answer is None and old.status == "accepted"
    assert recent.answer == {"answer": "keep"}
    assert [e.kind for e in old.events.all()] == ["purged"]


async def browser_ask(**fields: Any) -> Ask:
    """A pending browser ask written straight to the database, waiting five more minutes."""
    now = timezone.now()
    defaults: dict[str, Any] = {
        "created": now,
        "message": "?",
        "schema": {},
        "tool": "user_ask",
        "route": "browser",
        "expires_at": now + dt.timedelta(minutes=5),
    }
    return await Ask.objects.acreate(**{**defaults, **fields})


@pytest.mark.django_db(transaction=True)
async def test_an_answer_for_a_call_that_already_ended_is_kept_to_be_collected() -> None:
    relay = runtime.get_server().table.relay
    relay.ack_timeout = 0.2  # the worker named below never answers
    ask = await browser_ask(message="gone?", worker="askmcp.worker.that-stopped")
    person = await User.objects.acreate(username="gail")
    async with asyncio.timeout(5):
        answered = await ask_answer(
            ask=ask,
            reply={"action": "accept", "content": {"answer": "x"}},
            user=person,
            relay=relay,
        )
    assert answered.taken is False
    # The page is drawn from the ask the decision returns: it must read as the row does.
    shown = answered.ask
    drawn = (shown.status, shown.answer, shown.answered_by, shown.answered_at)
    await ask.arefresh_from_db()
    assert ask.status == "accepted" and ask.answer == {"answer": "x"}
    assert ask.awaits_collection, "kept, decided, until a call collects it"
    assert drawn == (ask.status, ask.answer, person, ask.answered_at)
    kinds = [event.kind async for event in AskEvent.objects.filter(ask=ask)]
    assert kinds == ["answered"]


@pytest.mark.django_db(transaction=True)
async def test_an_answer_that_comes_second_is_not_sent_and_shows_the_first_one() -> None:
    ask = await browser_ask(message="who first?", worker="askmcp.worker.that-stopped")
    first = await User.objects.acreate(username="hana")
    second = await User.objects.acreate(username="ivan")
    now = timezone.now()
    await Ask.objects.filter(pk=ask.pk).aupdate(
        status="accepted", answer={"answer": "mine"}, answered_by=first, answered_at=now
    )
    async with asyncio.timeout(5):
        answered = await ask_answer(
            ask=ask,
            reply={"action": "accept", "content": {"answer": "no, mine"}},
            user=second,
            relay=runtime.get_server().table.relay,
        )
    assert answered.taken is False
    shown = answered.ask
    assert shown.status == "accepted" and shown.answer == {"answer": "mine"}
    assert shown.answered_by == first and shown.answered_at == now
    assert [event.kind async for event in AskEvent.objects.filter(ask=ask)] == []


@pytest.mark.django_db(transaction=True)
async def test_one_ask_in_hand_is_visible_to_exactly_whom_the_inbox_query_shows_it() -> None:
    """The ask page checks the row it read (Ask.ais_visible_to); the inbox filters in SQL
    (visible_to). Both must draw the same line, for every kind of person and ask."""
    team, other_team = (
        await Group.objects.acreate(name="ops"),
        await Group.objects.acreate(name="qa"),
    )
    owner = await User.objects.acreate(username="owner")
    member = await User.objects.acreate(username="member")
    outsider = await User.objects.acreate(username="outsider")
    staff = await User.objects.acreate(username="staff", is_staff=True)  # sees no more for it
    answerer = await User.objects.acreate(username="answerer")
    await answerer.user_permissions.aadd(await Permission.objects.aget(codename="answer_every_ask"))
    await member.groups.aadd(team)
    await outsider.groups.aadd(other_team)
    asks = [
        await browser_ask(asked_by=owner),
        await browser_ask(team=team),
        await browser_ask(asked_by=owner, team=team),
        await browser_ask(),
    ]
    people = [owner, member, outsider, staff, answerer, AnonymousUser()]
    seen = {
        (person.username or "anonymous", n)
        for person in people
        for n, each in enumerate(asks)
        if await each.ais_visible_to(person)
    }
    listed = {
        (person.username or "anonymous", asks.index(each))  # model equality: same pk
        for person in people
        async for each in Ask.objects.visible_to(person)
    }
    assert seen == listed
    assert ("member", 1) in seen and ("outsider", 1) not in seen  # the check can fail
    assert ("staff", 3) not in seen and ("answerer", 3) in seen  # the permission, not staff


_ = Person  # the fixtures' person type, for readers of the signatures above
