"""Reaching people's settings and admin: the checks E030-E034, W004 and W030, ASKSERVER_EMAIL_URL, the webhook and escalation forms and whose teams they may name."""

from __future__ import annotations

import datetime as dt
from typing import Final

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.core.checks import run_checks
from django.test import Client, override_settings
from django.utils import timezone

from ask_mcp.models import Ask, Escalation, Webhook
from ask_mcp.reach import plan
from askserver.settings import _mailers


@pytest.mark.parametrize(
    "setting, check_id",
    [
        ({"EMAIL": "yes"}, "ask_mcp.E030"),
        ({"ALLOW_PRIVATE_TARGETS": 1}, "ask_mcp.E031"),
        ({"ALLOW_PRIVATE_WEBHOOKS": 1}, "ask_mcp.E031"),  # the old name, read until 0.2.0
        ({"ALLOW_PRIVATE_WEBHOOKS": True}, "ask_mcp.W004"),
        ({"REMINDER_BEFORE_SECONDS": 0}, "ask_mcp.E032"),
        ({"REMINDER_BEFORE_SECONDS": "5m"}, "ask_mcp.E032"),
        ({"REACH_SECONDS": -1}, "ask_mcp.E004"),
    ],
)
def test_bad_reach_settings_are_reported(setting: object, check_id: str) -> None:
    with override_settings(ASK_MCP=setting):
        assert check_id in [message.id for message in run_checks(databases=[])]


def test_mail_from_djangos_default_address_is_warned_about_and_without_a_public_url_refused() -> (
    None
):
    with override_settings(ASK_MCP={"EMAIL": True}, DEFAULT_FROM_EMAIL="webmaster@localhost"):
        messages = {message.id: message for message in run_checks(databases=[])}
    assert {"ask_mcp.W030", "ask_mcp.E033"} <= set(messages)
    assert messages["ask_mcp.E033"].is_serious() and "PUBLIC_URL" in messages["ask_mcp.E033"].msg
    with override_settings(ASK_MCP={"ANSWER_URL": "ask_mcp.web.elicit.page_url"}):
        (url_mode,) = [m for m in run_checks(databases=[]) if m.id == "ask_mcp.E034"]
    assert url_mode.is_serious() and "PUBLIC_URL" in url_mode.msg
    with override_settings(
        ASK_MCP={
            "EMAIL": True,
            "ANSWER_URL": "ask_mcp.web.elicit.page_url",
            "PUBLIC_URL": "https://ask.example.com",
        },
        DEFAULT_FROM_EMAIL="ask@example.com",
    ):
        ids = {message.id for message in run_checks(databases=[])}
    assert not ids & {"ask_mcp.W030", "ask_mcp.E033", "ask_mcp.E034"}
    with override_settings(ASK_MCP={"REMINDER_BEFORE_SECONDS": None}):
        assert not [m for m in run_checks(databases=[]) if (m.id or "").startswith("ask_mcp")]


@pytest.mark.parametrize(
    "url, options",
    [
        ("smtp://127.0.0.1:2525", ("127.0.0.1", 2525, "", "", False, False)),
        ("smtp://mail.test", ("mail.test", 25, "", "", False, False)),
        (
            "smtp+tls://me%40x.test:s%3Acret@mail.test",
            ("mail.test", 587, "me@x.test", "s:cret", True, False),
        ),
        ("smtps://me:pw@mail.test:4650", ("mail.test", 4650, "me", "pw", False, True)),
    ],
)
def test_the_email_url_becomes_djangos_default_mailer(
    url: str, options: tuple[object, ...]
) -> None:
    mailer = _mailers(url)["default"]
    assert mailer["BACKEND"] == "django.core.mail.backends.smtp.EmailBackend"
    got = mailer["OPTIONS"]
    assert isinstance(got, dict)
    keys = ("host", "port", "username", "password", "use_tls", "use_ssl")
    assert tuple(got[key] for key in keys) == options


@pytest.mark.parametrize("url", ["http://mail.test", "smtp://", "mail.test:25"])
def test_a_bad_email_url_names_the_forms_it_may_take(url: str) -> None:
    with pytest.raises(ValueError, match=r"ASKSERVER_EMAIL_URL must be smtp://host:port"):
        _mailers(url)


@pytest.mark.django_db
def test_the_admin_refuses_a_webhook_to_an_internal_address_when_it_is_saved() -> None:
    staff = User.objects.create_superuser("root", password="pw-root-0123456789")
    client = Client()
    client.force_login(staff)
    add = "/admin/ask_mcp/webhook/add/"
    inlines = {
        f"{prefix}-{count}": "0"
        for prefix in ("ask_deliveries", "deliveries")
        for count in ("TOTAL_FORMS", "INITIAL_FORMS")
    }
    with override_settings(ASK_MCP={}):  # no PUBLIC_URL: its announcements would have no link
        page = client.post(add, {"url": "https://hooks.example.com/x", "user": staff.pk})
        assert page.status_code == 200 and not Webhook.objects.exists()
        assert "A webhook needs ASK_MCP[&#x27;PUBLIC_URL&#x27;]" in page.content.decode()
    with override_settings(ASK_MCP={"PUBLIC_URL": "https://ask.example.com"}):
        page = client.post(add, {"url": "http://169.254.169.254/latest/", "user": staff.pk})
        assert page.status_code == 200 and not Webhook.objects.exists()
        assert "a cloud metadata service" in page.content.decode()
        page = client.post(add, {"url": "http://127.0.0.1:9000/hook", "user": staff.pk})
        assert "loopback" in page.content.decode() and not Webhook.objects.exists()
    # The old name of ALLOW_PRIVATE_TARGETS is still read.
    with override_settings(
        ASK_MCP={"ALLOW_PRIVATE_WEBHOOKS": True, "PUBLIC_URL": "https://ask.example.com"}
    ):
        done = client.post(add, {"url": "http://127.0.0.1:9000/hook", "user": staff.pk, **inlines})
        assert done.status_code == 302
    (webhook,) = Webhook.objects.all()
    assert webhook.secret.startswith("whsec_") and len(webhook.secret) > 40
    shown = client.get(f"/admin/ask_mcp/webhook/{webhook.pk}/change/").content.decode()
    assert webhook.secret in shown  # the admin copies it to the receiver


WEBHOOK_INLINES: Final = {
    f"{prefix}-{count}": "0"
    for prefix in ("ask_deliveries", "deliveries")
    for count in ("TOTAL_FORMS", "INITIAL_FORMS")
}
"""The webhook page's (read-only) inlines' management forms, as a browser posts them."""


def _staff_with(username: str, team: Group, *codenames: str) -> Client:
    """A signed-in admin client for a staff member of `team` holding only `codenames`."""
    user = User.objects.create_user(username, password=f"pw-{username}-0123456789", is_staff=True)
    user.groups.add(team)
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_a_staff_member_with_only_the_escalation_rights_escalates_only_within_her_teams() -> None:
    ops, payroll = Group.objects.create(name="ops"), Group.objects.create(name="payroll")
    teammate = User.objects.create_user("tom")
    teammate.groups.add(ops)
    outsider = User.objects.create_user("olga")
    rights = ("add_escalation", "change_escalation", "view_escalation")
    mallory = _staff_with("mallory", ops, *rights)
    me = User.objects.get(username="mallory")
    add = "/admin/ask_mcp/escalation/add/"
    # The repro: every ask of another team offered to herself after 0.6 s.
    page = mallory.post(add, {"team": payroll.pk, "after_minutes": "0.01", "fallback_user": me.pk})
    text = page.content.decode()
    assert page.status_code == 200 and not Escalation.objects.exists()
    assert "Select a valid choice" in text and "ESCALATION_MIN_SECONDS (60 s)" in text
    assert "payroll" not in text  # not even offered
    # Her own team, but a fallback outside it; then a fallback team she is not in.
    page = mallory.post(add, {"team": ops.pk, "after_minutes": "5", "fallback_user": outsider.pk})
    assert page.status_code == 200 and not Escalation.objects.exists()
    page = mallory.post(add, {"team": ops.pk, "after_minutes": "5", "fallback_team": payroll.pk})
    assert page.status_code == 200 and not Escalation.objects.exists()
    done = mallory.post(add, {"team": ops.pk, "after_minutes": "5", "fallback_user": teammate.pk})
    assert done.status_code == 302
    assert Escalation.objects.get().fallback_user == teammate
    # Another team's escalation, set by someone who may: not listed, not changeable by her.
    Escalation.objects.create(team=payroll, after_minutes=10, fallback_team=payroll)
    listed = mallory.get("/admin/ask_mcp/escalation/").content.decode()
    assert "ops → tom" in listed and "payroll →" not in listed
    change = f"/admin/ask_mcp/escalation/{payroll.pk}/change/"
    mallory.post(change, {"team": payroll.pk, "after_minutes": "1", "fallback_user": me.pk})
    assert Escalation.objects.get(pk=payroll.pk).fallback_team == payroll
    # The every-ask permission (superusers hold it) sets any team's; the minimum still holds.
    root = Client()
    root.force_login(User.objects.create_superuser("root", password="pw-root-0123456789"))
    Escalation.objects.filter(pk=payroll.pk).delete()
    page = root.post(add, {"team": payroll.pk, "after_minutes": "0.5", "fallback_user": me.pk})
    assert page.status_code == 200 and "ESCALATION_MIN_SECONDS" in page.content.decode()
    with override_settings(ASK_MCP={"ESCALATION_MIN_SECONDS": 30}):
        page = root.post(add, {"team": payroll.pk, "after_minutes": "0.5", "fallback_user": me.pk})
    assert page.status_code == 302 and Escalation.objects.filter(pk=payroll.pk).exists()


@pytest.mark.django_db
def test_a_short_escalation_saved_before_the_minimum_still_waits_the_minimum() -> None:
    ops = Group.objects.create(name="ops")
    Escalation.objects.create(team=ops, after_minutes=0.01, fallback_team=ops)
    now = timezone.now()
    ask = Ask.objects.create(
        created=now,
        message="deploy?",
        schema={},
        tool="user_ask",
        route="browser",
        team=ops,
        expires_at=now + dt.timedelta(minutes=10),
    )
    assert plan.escalate_due(ask.created + dt.timedelta(seconds=30)) == []
    (done,) = plan.escalate_due(ask.created + dt.timedelta(seconds=61))
    assert done.ask_id == ask.id


@pytest.mark.django_db
def test_a_staff_member_with_only_the_webhook_rights_subscribes_only_to_her_teams() -> None:
    ops, payroll = Group.objects.create(name="ops"), Group.objects.create(name="payroll")
    other = User.objects.create_user("olga")
    rights = ("add_webhook", "change_webhook", "view_webhook")
    mallory = _staff_with("mallory", ops, *rights)
    me = User.objects.get(username="mallory")
    add = "/admin/ask_mcp/webhook/add/"
    hook = "http://127.0.0.1:9000/hook"
    settings = {"ALLOW_PRIVATE_TARGETS": True, "PUBLIC_URL": "https://ask.example.com"}
    with override_settings(ASK_MCP=settings):
        for target in ({"team": payroll.pk}, {"user": other.pk}):
            page = mallory.post(add, {"url": hook, **target, **WEBHOOK_INLINES})
            assert page.status_code == 200 and "Select a valid choice" in page.content.decode()
        assert not Webhook.objects.exists()
        for target in ({"team": ops.pk}, {"user": me.pk}):
            done = mallory.post(add, {"url": hook, "active": "on", **target, **WEBHOOK_INLINES})
            assert done.status_code == 302
    assert Webhook.objects.count() == 2
    theirs = Webhook.objects.create(team=payroll, url="http://127.0.0.1:9001/theirs")
    listed = mallory.get("/admin/ask_mcp/webhook/").content.decode()
    assert "9000/hook" in listed and "9001/theirs" not in listed
    assert mallory.get(f"/admin/ask_mcp/webhook/{theirs.pk}/change/").status_code == 302
