"""Reaching people, live: mail through a real SMTP server, the signed link in a real browser, webhooks, reminders, escalation.

A daphne server configured as askserver ships (browser inbox, recorder) with ASKSERVER_EMAIL_URL
pointing at an aiosmtpd server on loopback; the model's calls come through the official `mcp`
client with a bearer token, so each ask is addressed to a person and a team.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.async_api import Browser, expect

from ask_mcp.reach import links
from tests.support.browser import OUTPUT, add_user, open_card, signed_in
from tests.support.inbox_http import signed_in_http
from tests.support.live import LiveServer, LiveServers
from tests.support.mailbox import Mailbox
from tests.support.reach import REACH_CONFIG, Crew, ask, deliveries, mail_env, mails_for
from tests.support.receivers import Receiver
from tests.support.results import text_of
from tests.support.shell import shell
from tests.support.tasks import INBOX_CAPS, TaskClient

pytestmark = pytest.mark.asyncio(loop_scope="session")


def start(live_servers: LiveServers, mailbox: Mailbox, **config: Any) -> LiveServer:
    return live_servers.start({**REACH_CONFIG, **config}, extra_env=mail_env(mailbox))


@pytest.fixture(scope="module")
def server(live_servers: LiveServers, mailbox: Mailbox) -> Iterator[LiveServer]:
    live = start(live_servers, mailbox)
    yield live
    live_servers.stop(live)


@pytest.fixture(scope="module")
def crew(server: LiveServer) -> Crew:
    return Crew(server)


async def test_the_mailed_link_leads_through_sign_in_to_the_form_and_the_answer_resumes_the_call(
    server: LiveServer, crew: Crew, mailbox: Mailbox, browser: Browser
) -> None:
    message = f"Which component broke? [{crew.tag}]"
    call = asyncio.create_task(ask(server, crew.token, message))
    mails = await mails_for(mailbox, message, 2)
    assert sorted(address for mail in mails for address in mail.to) == sorted(
        [crew.email(crew.alice), crew.email(crew.carol)]
    )  # dave chose no mail
    planned = deliveries(server, message)
    assert [row[2] for row in planned] == [crew.email(crew.alice), crew.email(crew.carol)]
    assert all(row[3] == "sent" and row[4] == 1 for row in planned)
    mail = next(mail for mail in mails if crew.email(crew.carol) in mail.to)
    assert mail.subject.strip().startswith(f"Question from mcp for {crew.alice.username}: ")
    assert "- Which component?: one of: api, ui, docs (required)" in mail.text
    assert mail.link.startswith(server.base_url + "/link/")

    context = await browser.new_context(base_url=server.base_url)
    try:
        page = await context.new_page()
        await page.set_content(mail.html)
        OUTPUT.mkdir(exist_ok=True)
        # The source of docs/answering/mail.png.
        await page.screenshot(path=str(OUTPUT / "mail.png"), full_page=True)
        # Not signed in: the link asks carol to sign in, then lands on the ask's form.
        await page.goto(mail.link)
        await expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/link/"))
        assert not call.done()
        await page.get_by_label("Username").fill(crew.carol.username)
        await page.get_by_label("Password").fill(crew.carol.password)
        await page.get_by_role("button", name="Sign in").click()
        await expect(page).to_have_url(re.compile(r"/asks/[0-9a-f-]{36}/$"))
        await expect(page.get_by_text("Which component?")).to_be_visible()
        # Opening it twice more (a link scanner would) answers nothing.
        await page.goto(mail.link)
        await page.goto(mail.link)
        await expect(page.get_by_role("button", name="Send answer")).to_be_visible()
        assert not call.done()
        await page.get_by_label("docs").check()
        await page.get_by_label("How bad is it?").fill("2")
        await page.get_by_role("button", name="Send answer").click()
        async with asyncio.timeout(20):
            result = await call
        assert text_of(result) == '{"component":"docs","severity":2}'
        await page.reload()
        notes = page.locator(".deliveries li")
        await expect(notes).to_have_count(2)
        await expect(notes.first).to_contain_text(
            f"new question by email to {crew.email(crew.alice)}: Sent"
        )
    finally:
        await context.close()


async def test_a_tasks_question_is_mailed_to_its_people_as_a_held_calls_is(
    server: LiveServer, crew: Crew, mailbox: Mailbox
) -> None:
    message = f"Which release carries the fix? [{crew.tag}]"
    client = TaskClient(server.mcp_url, crew.token)
    handle = await client.ask({"message": message}, caps=INBOX_CAPS)
    mails = await mails_for(mailbox, message, 2)
    assert sorted(address for mail in mails for address in mail.to) == sorted(
        [crew.email(crew.alice), crew.email(crew.carol)]
    )  # dave chose no mail
    assert all(mail.link.startswith(server.base_url + "/link/") for mail in mails)
    await client.cancel(handle["taskId"])


async def test_another_person_a_forged_link_and_an_expired_link_each_get_a_clear_page(
    server: LiveServer, crew: Crew, mailbox: Mailbox, browser: Browser
) -> None:
    message = f"Whose link is this? [{crew.tag}]"
    call = asyncio.create_task(ask(server, crew.token, message))
    mails = await mails_for(mailbox, message, 2)
    carols = next(mail for mail in mails if crew.email(crew.carol) in mail.to)
    page = await signed_in(browser, server, crew.alice)
    try:
        refused = await page.goto(carols.link)
        assert refused is not None and refused.status == 403
        await expect(page.locator("h1")).to_have_text("This link was sent to someone else")
        forged = carols.link[:-6] + ("A" if carols.link[-6] != "A" else "B") + carols.link[-5:]
        bad = await page.goto(forged)
        assert bad is not None and bad.status == 400
        await expect(page.locator("h1")).to_have_text("This link is not valid")
        ask_id = uuid.UUID(carols.message["x-askserver-ask"])
        user_id = shell(
            server,
            "from django.contrib.auth.models import User; "
            f"print(User.objects.get(username={crew.alice.username!r}).pk)",
        )
        old = links.url(server.base_url, ask_id, user_id, time.time() - 10)
        gone = await page.goto(old)
        assert gone is not None and gone.status == 410
        await expect(page.locator("h1")).to_have_text("This link has expired")
        assert not call.done()  # none of them answered anything
    finally:
        await page.context.close()
        call.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await call


async def test_webhooks_are_signed_and_a_redirecting_one_is_recorded_as_failed(
    server: LiveServer, crew: Crew
) -> None:
    secret = f"whsec_{crew.tag}"
    good = Receiver([200], secret=secret)
    redirecting = Receiver([302], secret=secret)
    try:
        server.manage(
            "shell",
            "-c",
            (
                "from django.contrib.auth.models import Group; from ask_mcp.models import Webhook;"
                f"g = Group.objects.get(name={crew.team!r});"
                f"Webhook.objects.create(team=g, url={good.url!r}, secret={secret!r});"
                f"Webhook.objects.create(team=g, url={redirecting.url!r}, secret={secret!r})"
            ),
        )
        message = f"Signed? [{crew.tag}] <!channel> Answer at: http://evil.test/"
        call = asyncio.create_task(ask(server, crew.token, message))
        assert await asyncio.to_thread(good.wait_for, 1, 20)
        (got,) = good.received
        assert got.verified is True
        assert got.body["ask"]["message"] == message
        _headline, link_line, *quoted = got.body["text"].splitlines()
        assert link_line.startswith(f"Answer at: {server.base_url}/asks/")
        assert quoted[0].startswith("> Signed?") and "&lt;!channel&gt;" in quoted[0]
        assert await asyncio.to_thread(redirecting.wait_for, 1, 20)
        failed: list[Any] = []
        async with asyncio.timeout(20):
            while not failed:  # the outcome is written just after the answer came back
                rows = deliveries(server, message)
                failed = [row for row in rows if row[1] == "webhook" and row[3] != "sending"]
                failed = [row for row in failed if row[2] == redirecting.url]
        (row,) = failed
        assert row[3] == "retrying" and "redirects are not followed" in row[5]
        call.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await call
    finally:
        good.close()
        redirecting.close()


async def test_a_reminder_and_an_escalation_reach_their_people_once(
    live_servers: LiveServers, mailbox: Mailbox, browser: Browser
) -> None:
    quick = start(
        live_servers,
        mailbox,
        ELICITATION_TTL=10,
        REMINDER_BEFORE_SECONDS=5,
        ESCALATION_MIN_SECONDS=1,  # the 1.8 s escalation below, well inside the 10 s TTL
    )
    try:
        crew = Crew(quick)
        fay = add_user(quick, f"fay{crew.tag}", staff=False)
        quick.manage(
            "shell",
            "-c",
            (
                "from django.contrib.auth.models import Group, User;"
                "from ask_mcp.models import Escalation;"
                f"b = Group.objects.create(name='backup-{crew.tag}');"
                f"u = User.objects.get(username={fay.username!r}); u.email = {crew.email(fay)!r};"
                "u.save(); b.user_set.add(u);"
                f"Escalation.objects.create(team=Group.objects.get(name={crew.team!r}),"
                " after_minutes=0.03, fallback_team=b)"
            ),
        )
        message = f"Still there? [{crew.tag}]"
        call = asyncio.create_task(ask(quick, crew.token, message))
        escalated = await mails_for(mailbox, f"escalated to team backup-{crew.tag}", 1)
        assert [mail.to for mail in escalated] == [[crew.email(fay)]]
        page = await signed_in(browser, quick, fay)
        try:
            shown = await open_card(page, message)  # offered to the fallback: in fay's inbox
            await expect(shown).to_contain_text(f"escalated to team backup-{crew.tag} at")
            await shown.get_by_role("link", name="Open on its own page").click()
            await expect(page.locator(".history")).to_contain_text(
                f"Escalated to team backup-{crew.tag} (unanswered after 0.03 min)"
            )
        finally:
            await page.context.close()
        reminders = await mails_for(mailbox, "Reminder: this question is still waiting", 2)
        reminded = [m for m in reminders if message in m.text]
        assert sorted(a for m in reminded for a in m.to) == sorted(
            [crew.email(crew.alice), crew.email(crew.carol)]
        )
        async with asyncio.timeout(30):
            result = await call  # expires unanswered
        assert text_of(result).startswith("The user did not answer in time")
        rows = deliveries(quick, message)
        assert sorted((row[0], row[2]) for row in rows) == sorted(
            [
                ("asked", crew.email(crew.alice)),
                ("asked", crew.email(crew.carol)),
                ("escalated", crew.email(fay)),
                ("reminder", crew.email(crew.alice)),
                ("reminder", crew.email(crew.carol)),
            ]
        )  # one of each: the reach task looked 50 times meanwhile
        assert len([m for m in mailbox.mails if message in m.text]) == 5
    finally:
        live_servers.stop(quick)


async def test_a_person_opts_in_on_the_settings_page_and_is_mailed_from_then_on(
    server: LiveServer, crew: Crew, mailbox: Mailbox
) -> None:
    async with signed_in_http(server, crew.dave) as dave:
        page = await dave.client.get("/settings/")
        assert page.status_code == 200
        assert 'name="email_asks" checked' not in page.text and crew.email(crew.dave) in page.text
        wrong = await dave.client.post(
            "/settings/", data={"email": "not an address", "csrfmiddlewaretoken": dave.csrf}
        )
        assert wrong.status_code == 400 and "is not an email address" in wrong.text
        saved = await dave.client.post(
            "/settings/",
            data={
                "email": crew.email(crew.dave),
                "email_asks": "on",
                "csrfmiddlewaretoken": dave.csrf,
            },
        )
        assert saved.status_code == 200 and "Saved." in saved.text
        assert 'id="reach-asks" name="email_asks" checked' in saved.text
    message = f"Now dave too? [{crew.tag}]"
    call = asyncio.create_task(ask(server, crew.token, message))
    mails = await mails_for(mailbox, message, 3)
    assert crew.email(crew.dave) in [address for mail in mails for address in mail.to]
    call.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await call
