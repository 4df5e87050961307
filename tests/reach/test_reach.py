"""Planning and sending notifications in process: a real SMTP server and a real receiver on loopback.

Who is mailed (and who is not), what the mail says, one row per person and moment however
often it is planned, retries with backoff until failed, reminders and escalations once per ask,
and the signed links.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
import uuid
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import AnonymousUser, Group, User
from django.test import override_settings
from django.utils import timezone

from ask_mcp.models import Ask, AskEvent, AskReach, Delivery, Escalation, ReachPreference, Webhook
from ask_mcp.reach import background, links, plan, queue
from tests.support.mailbox import Mailbox
from tests.support.receivers import Receiver

pytestmark = pytest.mark.django_db(transaction=True)

BASE = "http://ask.test"
SECRET = "whsec_reach-tests"
SCHEMA = {
    "type": "object",
    "properties": {
        "component": {"type": "string", "description": "Which component?", "enum": ["api", "ui"]},
        "severity": {"type": "number", "description": "How bad is it?"},
        "notes": {"type": "string", "title": "Notes", "description": "Anything else?"},
    },
    "required": ["component", "severity"],
}


@pytest.fixture
def mailbox() -> Iterator[Mailbox]:
    """A fresh mailbox for each test, which mail sent in this process goes to (the shared
    `mailbox` fixture serves live servers, one per module)."""
    with Mailbox() as box:
        host, port = box.url.removeprefix("smtp://").split(":")
        smtp = {"BACKEND": "django.core.mail.backends.smtp.EmailBackend"}
        with override_settings(
            MAILERS={"default": {**smtp, "OPTIONS": {"host": host, "port": int(port)}}},
            DEFAULT_FROM_EMAIL="askserver@ask.test",
            ASK_MCP={"EMAIL": True, "PUBLIC_URL": BASE, "ALLOW_PRIVATE_TARGETS": True},
        ):
            yield box


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(queue, "BACKOFF", (0.0,))  # the retry policy, not its pauses, is tested


class People:
    def __init__(self) -> None:
        self.team = Group.objects.create(name=f"ops-{uuid.uuid4().hex[:6]}")
        self.alice = User.objects.create(username="alice", email="alice@ask.test")
        self.carol = User.objects.create(username="carol", email="carol@ask.test")
        self.dave = User.objects.create(username="dave", email="dave@ask.test")
        self.erin = User.objects.create(username="erin")  # no address
        for member in (self.carol, self.dave, self.erin):
            member.groups.add(self.team)
        ReachPreference.objects.create(user=self.dave, email_asks=False, email_reminders=False)


@pytest.fixture
def people() -> People:
    return People()


def an_ask(people: People, *, seconds: float = 600, message: str = "Which component broke?") -> Ask:
    now = timezone.now()
    return Ask.objects.create(
        created=now,
        message=message,
        schema=SCHEMA,
        tool="user_ask",
        client_name="claude-code",
        route=Ask.Route.BROWSER,
        expires_at=now + dt.timedelta(seconds=seconds),
        asked_by=people.alice,
        team=people.team,
    )


def send_all() -> int:
    async def run() -> int:
        async with asyncio.timeout(30):
            tried = 0
            while batch := await queue.deliver_due():
                tried += batch
            return tried

    return asyncio.run(run())


def test_a_new_ask_mails_each_person_who_chose_it_and_nobody_else(
    mailbox: Mailbox, people: People
) -> None:
    ask = an_ask(people, message="Which component broke?\n<script>alert(1)</script>")
    assert plan.start(ask.id, BASE) == 2
    assert send_all() == 2
    mails = mailbox.wait(lambda got: len(got) == 2)
    assert sorted(address for mail in mails for address in mail.to) == [
        "alice@ask.test",
        "carol@ask.test",
    ]  # dave opted out, erin has no address
    mail = mailbox.to("carol@ask.test")[0]
    assert mail.subject == "Question from claude-code for alice: Which component broke?"
    assert mail.message["from"] == "askserver@ask.test"
    assert mail.message["auto-submitted"] == "auto-generated"
    text = mail.text
    assert "claude-code for alice asks:" in text
    assert "> Which component broke?" in text
    assert "- Which component?: one of: api, ui (required)" in text
    assert "- How bad is it?: a number (required)" in text
    assert "- Notes: text (optional) — Anything else?" in text
    assert "It waits until " in text and ask.expires_at.strftime("%Y-%m-%d %H:%M") in text
    assert mail.link.startswith(BASE + "/link/")
    assert "<script>" not in mail.html and "&lt;script&gt;" in mail.html
    # The question's link, and the person's mail preferences (also List-Unsubscribe).
    assert mail.html.count('href="') == 2 and mail.link in mail.html
    assert mail.message["list-unsubscribe"] == f"<{BASE}/settings/>"
    link = links.read(mail.link.removeprefix(BASE + "/link/").rstrip("/"))
    assert link == links.Link(ask.id, people.carol.pk)
    states = set(Delivery.objects.values_list("state", "attempts", "channel"))
    assert states == {("sent", 1, "email")}


def test_planning_the_same_moment_twice_tells_each_person_once(
    mailbox: Mailbox, people: People
) -> None:
    ask = an_ask(people)
    plan.start(ask.id, BASE)
    plan.start(ask.id, BASE)
    plan.plan(ask.id, Delivery.Purpose.ASKED)
    assert Delivery.objects.count() == 2
    send_all()
    assert send_all() == 0
    mailbox.wait(lambda got: len(got) == 2)
    assert len(mailbox.mails) == 2


def test_no_mail_when_email_is_not_configured(people: People) -> None:
    ask = an_ask(people)
    with override_settings(ASK_MCP={"EMAIL": False}):
        assert plan.start(ask.id, BASE) == 0


def test_webhooks_are_signed_retried_with_backoff_then_failed(
    mailbox: Mailbox, people: People
) -> None:
    failing = Receiver([500], secret=SECRET)
    try:
        Webhook.objects.create(team=people.team, url=failing.url, secret=SECRET)
        ask = an_ask(people)
        ReachPreference.objects.update_or_create(user=people.alice, defaults={"email_asks": False})
        ReachPreference.objects.update_or_create(user=people.carol, defaults={"email_asks": False})
        plan.start(ask.id, BASE)
        send_all()  # each pass tries once; the row comes due again at once (no backoff here)
        delivery = Delivery.objects.get()
        assert delivery.state == "failed" and delivery.attempts == queue.ATTEMPTS
        assert delivery.response_status == 500 and "HTTP 500" in delivery.last_error
        assert len(failing.received) == queue.ATTEMPTS
        assert all(each.verified for each in failing.received)
        ids = {each.headers["askserver-delivery"] for each in failing.received}
        assert ids == {str(delivery.pk)}  # one id for every retry: receivers can drop repeats
    finally:
        failing.close()


def test_a_failed_try_waits_out_its_backoff(
    mailbox: Mailbox, people: People, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(queue, "BACKOFF", (30.0, 60.0))
    flaky = Receiver([503, 200], secret=SECRET)
    try:
        Webhook.objects.create(user=people.alice, url=flaky.url, secret=SECRET)
        ask = an_ask(people)
        plan.start(ask.id, BASE)
        send_all()
        hook = Delivery.objects.get(channel="webhook")
        assert hook.state == "retrying" and hook.attempts == 1 and "HTTP 503" in hook.last_error
        assert hook.next_attempt_at > timezone.now() + dt.timedelta(seconds=25)
        assert send_all() == 0  # not due yet
        Delivery.objects.filter(pk=hook.pk).update(next_attempt_at=timezone.now())
        send_all()
        hook.refresh_from_db()
        assert hook.state == "sent" and hook.attempts == 2 and hook.response_status == 200
        assert flaky.bodies[1]["ask"]["url"] == f"{BASE}/asks/{ask.id}/"
    finally:
        flaky.close()


def test_a_private_target_is_refused_at_delivery_without_the_setting(
    mailbox: Mailbox, people: People
) -> None:
    receiver = Receiver([200])
    try:
        Webhook.objects.create(user=people.alice, url=receiver.url)
        ask = an_ask(people)
        with override_settings(ASK_MCP={"EMAIL": False, "PUBLIC_URL": BASE}):
            plan.start(ask.id, BASE)
            send_all()
        delivery = Delivery.objects.get()
        assert delivery.state == "failed" and "refused" in delivery.last_error
        assert "loopback" in delivery.last_error and delivery.attempts == 1
        assert receiver.received == []
    finally:
        receiver.close()


def test_a_notification_of_an_ask_that_ended_is_not_sent(mailbox: Mailbox, people: People) -> None:
    ask = an_ask(people)
    plan.start(ask.id, BASE)
    Ask.objects.filter(pk=ask.pk).update(status=Ask.Status.ACCEPTED)
    send_all()
    assert set(Delivery.objects.values_list("state", flat=True)) == {"skipped"}
    assert mailbox.mails == []


def test_a_reminder_goes_once_per_ask_to_those_who_want_it(
    mailbox: Mailbox, people: People
) -> None:
    ask = an_ask(people, seconds=200)
    short = an_ask(people, seconds=60, message="Asked with little time left")
    short.created = timezone.now() - dt.timedelta(seconds=5)  # waited 65 s in all: no reminder
    short.save()
    ReachPreference.objects.update_or_create(user=people.carol, defaults={"email_reminders": False})
    now = timezone.now()
    assert plan.remind_due(now, 300) == []  # 200 s is longer than it lived: nothing yet
    ask.created = now - dt.timedelta(seconds=400)
    ask.save()
    assert plan.remind_due(now, 300) == [ask.id]
    assert plan.remind_due(now, 300) == []  # once
    send_all()
    (mail,) = mailbox.wait(lambda got: len(got) == 1)
    assert mail.to == ["alice@ask.test"]  # carol chose no reminders
    assert mail.subject.startswith("Reminder: your agent claude-code is still waiting")  # to alice
    assert "Reminder: this question is still waiting" in mail.text
    assert AskReach.objects.get(pk=ask.pk).reminded_at == now


def test_an_unanswered_team_ask_is_escalated_once_and_offered_to_the_fallback(
    mailbox: Mailbox, people: People
) -> None:
    backup = Group.objects.create(name="backup")
    fay = User.objects.create(username="fay", email="fay@ask.test")
    fay.groups.add(backup)
    Escalation.objects.create(team=people.team, after_minutes=1, fallback_team=backup)
    ask = an_ask(people)
    assert not Ask.objects.visible_to(fay).filter(pk=ask.pk).exists()
    now = timezone.now()
    assert plan.escalate_due(now) == []  # not a minute old
    later = now + dt.timedelta(seconds=61)
    (done,) = plan.escalate_due(later)
    assert done == plan.Escalated(ask.id, "team backup")
    assert plan.escalate_due(later) == []  # once
    reach = AskReach.objects.get(pk=ask.pk)
    assert reach.escalated_at == later and reach.escalated_to == "team backup"
    event = AskEvent.objects.get(ask=ask, kind="escalated")
    assert event.actor_label == "team backup (unanswered after 1 min)"
    assert Ask.objects.visible_to(fay).filter(pk=ask.pk).exists()
    assert asyncio.run(ask.ais_visible_to(fay)) and not asyncio.run(
        ask.ais_visible_to(AnonymousUser())
    )
    send_all()
    (mail,) = mailbox.wait(lambda got: len(got) == 1)
    assert mail.to == ["fay@ask.test"]
    assert mail.subject == "Escalated to team backup: Which component broke?"
    assert "escalated to team backup" in mail.text


def test_one_pass_plans_and_sends(mailbox: Mailbox, people: People) -> None:
    ask = an_ask(people, seconds=100)
    Ask.objects.filter(pk=ask.pk).update(created=timezone.now() - dt.timedelta(seconds=500))
    done = asyncio.run(background.one_pass())
    assert (done.reminded, done.escalated, done.tried) == (1, 0, 2)
    mailbox.wait(lambda got: len(got) == 2)


def test_a_link_is_bound_to_its_ask_and_recipient_and_expires_with_the_ask() -> None:
    ask_id = uuid.uuid4()
    value = links.token(ask_id, 42, time.time() + 60)
    assert links.read(value) == links.Link(ask_id, 42)
    with pytest.raises(links.LinkExpired):
        links.read(value, now=time.time() + 120)
    payload, _, signature = value.rpartition(":")
    with pytest.raises(links.LinkInvalid):
        links.read(payload + ":" + signature[::-1])
    other = links.token(uuid.uuid4(), 43, time.time() + 60)
    with pytest.raises(links.LinkInvalid):  # one link's signature on another's payload
        links.read(other.rpartition(":")[0] + ":" + signature)
    with pytest.raises(links.LinkInvalid):
        links.read("not-a-link")
