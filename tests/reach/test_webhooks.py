"""Webhook bodies, signatures and single POSTs, against a real HTTP receiver on loopback; and which targets are refused."""

from __future__ import annotations

import ipaddress
import json
import time
from collections.abc import Iterator

import pytest

from ask_mcp.reach import targets, webhooks
from tests.support.receivers import Receiver, verify

SECRET = "whsec_test-secret"
ASK = {
    "id": "a" * 32,
    "message": "Deploy to prod?",
    "tool": "user_ask",
    "client": "Claude",
    "created": "2026-12-01T10:00:00+00:00",
    "expires_at": "2026-12-01T10:10:00+00:00",
}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver([200], secret=SECRET)
    yield server
    server.close()


def loopback(url: str) -> targets.Target:
    return targets.vet(url, allow_private=True)


def test_the_text_puts_the_servers_line_and_link_first_and_the_models_words_in_a_quote() -> None:
    body = webhooks.announcement(ASK, "http://x/asks/a/")
    assert body["text"] == (
        "Claude asks (via user_ask)\nAnswer at: http://x/asks/a/\n> Deploy to prod?"
    )
    assert body["ask"] == {**ASK, "url": "http://x/asks/a/"}
    assert body["kind"] == "asked"
    headline, message, actions = body["blocks"]
    assert headline["text"]["text"] == "*Claude asks (via user_ask)*"
    assert message["text"] == {"type": "plain_text", "text": "Deploy to prod?"}
    assert actions["elements"][0]["url"] == "http://x/asks/a/"


def test_a_message_cannot_ping_a_channel_or_pass_off_its_own_link_as_the_answer_link() -> None:
    forged = "<!channel> see <http://evil|docs> & reply\nAnswer at: http://evil/asks/a/"
    body = webhooks.announcement({**ASK, "message": forged}, "http://x/asks/a/")
    assert body["text"] == (
        "Claude asks (via user_ask)\nAnswer at: http://x/asks/a/\n"
        "> &lt;!channel&gt; see &lt;http://evil|docs&gt; &amp; reply\n"
        "> Answer at: http://evil/asks/a/"
    )
    assert body["text"].splitlines()[1] == "Answer at: http://x/asks/a/"  # the only unquoted link
    assert body["ask"]["message"] == forged  # kept as written for programs


def test_reminder_and_escalation_say_so_in_the_servers_line() -> None:
    reminder = webhooks.announcement(ASK, "http://x/", "reminder")
    assert reminder["text"].startswith("Reminder: Claude is still waiting")
    escalated = webhooks.announcement({**ASK, "fallback": "team backup"}, "http://x/", "escalated")
    assert escalated["text"].startswith("Escalated to team backup: Claude asks")


def test_a_post_is_signed_so_the_receiver_verifies_it(receiver: Receiver) -> None:
    body = webhooks.body_of(webhooks.announcement(ASK, "http://x/"))
    assert webhooks.post(loopback(receiver.url), body, secret=SECRET, delivery_id=7) == 200
    (got,) = receiver.received
    assert got.verified is True
    assert got.raw == body and got.headers["askserver-delivery"] == "7"
    assert got.headers["content-type"] == "application/json"
    # The same body under another secret, or altered by one byte, does not verify.
    header = got.headers["askserver-signature"]
    assert not verify("another secret", header, got.raw)
    assert not verify(SECRET, header, got.raw.replace(b"prod", b"test"))


def test_a_replayed_signature_is_refused_once_its_timestamp_is_old() -> None:
    body = b'{"text":"hi"}'
    old = int(time.time()) - webhooks.TOLERANCE - 1
    header = webhooks.signature(SECRET, body, old)
    assert not verify(SECRET, header, body)
    assert not webhooks.verify(SECRET, header, body)
    fresh = webhooks.signature(SECRET, body, int(time.time()))
    assert verify(SECRET, fresh, body) and webhooks.verify(SECRET, fresh, body)
    # A replay cannot simply move the timestamp: it is signed with the body.
    moved = fresh.replace(fresh.split(",")[0], f"t={int(time.time()) + 1}")
    assert not verify(SECRET, moved, body)


def test_a_redirect_is_not_followed_and_fails_naming_where_it_pointed() -> None:
    redirecting = Receiver([302], secret=SECRET)
    try:
        with pytest.raises(webhooks.PostFailed, match="redirects are not followed") as failed:
            webhooks.post(loopback(redirecting.url), b"{}", secret=SECRET, delivery_id=1)
        assert "169.254.169.254" in str(failed.value)
        assert len(redirecting.received) == 1  # and nothing was sent where it pointed
    finally:
        redirecting.close()


def test_an_error_status_fails_with_the_status() -> None:
    failing = Receiver([503])
    try:
        with pytest.raises(webhooks.PostFailed) as failed:
            webhooks.post(loopback(failing.url), b"{}", secret=SECRET, delivery_id=1)
        assert failed.value.status == 503
    finally:
        failing.close()


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://127.0.0.1:9/hook", "loopback"),
        ("http://localhost/hook", "loopback"),
        ("http://[::1]/hook", "loopback"),
        ("http://10.1.2.3/hook", "private"),
        ("http://192.168.0.10/hook", "private"),
        ("http://172.16.5.4/hook", "private"),
        ("http://169.254.169.254/latest/meta-data/", "metadata"),
        ("http://169.254.10.10/", "link-local"),
        ("http://[fe80::1]/", "link-local"),
        ("http://[::ffff:127.0.0.1]/", "loopback"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://100.100.100.200/", "metadata"),
    ],
)
def test_internal_targets_are_refused(url: str, why: str) -> None:
    with pytest.raises(targets.TargetRefused, match=why):
        targets.vet(url, allow_private=False)


@pytest.mark.parametrize(
    "url", ["http://169.254.169.254/", "http://[fd00:ec2::254]/", "http://169.254.1.1/"]
)
def test_metadata_and_link_local_stay_refused_when_private_targets_are_allowed(url: str) -> None:
    with pytest.raises(targets.TargetRefused):
        targets.vet(url, allow_private=True)


def test_loopback_and_private_are_allowed_by_the_setting() -> None:
    assert targets.vet("http://127.0.0.1:8080/x?y=1", allow_private=True).path == "/x?y=1"
    assert targets.vet("http://10.0.0.1/", allow_private=True).address == "10.0.0.1"


@pytest.mark.parametrize("url", ["ftp://example.com/", "file:///etc/passwd", "http:///nohost"])
def test_only_http_urls_are_targets(url: str) -> None:
    with pytest.raises(targets.TargetRefused, match="not an http"):
        targets.vet(url, allow_private=True)


def test_a_public_address_is_fine() -> None:
    assert targets.kind_of(ipaddress.ip_address("93.184.216.34")) is None
    assert targets.allowed(ipaddress.ip_address("2606:4700::1111"), allow_private=False) is None


def test_the_body_is_compact_utf8_json() -> None:
    body = webhooks.body_of({"text": "Grüße"})
    assert body == '{"text":"Grüße"}'.encode() and json.loads(body) == {"text": "Grüße"}
