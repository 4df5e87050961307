"""Reaching people's settings and admin: the checks E030-E034, W004 and W030, ASKSERVER_EMAIL_URL, the webhook form."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.checks import run_checks
from django.test import Client, override_settings

from ask_mcp.models import Webhook
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
