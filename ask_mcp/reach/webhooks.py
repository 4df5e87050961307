"""What a webhook is sent and how: the Slack-compatible body, its signature, one POST to a vetted address; knows no queue.

Which deliveries exist, when they are tried and how their outcome is kept is
:mod:`ask_mcp.reach`'s. This module only shapes a body, signs it (HMAC-SHA256 over a
timestamp and the body, in the `Askserver-Signature` header) and posts it once, to the address
:mod:`ask_mcp.reach.targets` vetted, following no redirect.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import socket
import ssl
import time
from collections.abc import Mapping
from typing import Any, Final

from ask_mcp.reach.targets import Target
from ask_mcp.server.context import CLIENT_NAME_CHARS, one_line

SIGNATURE_HEADER: Final = "Askserver-Signature"
"""`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>." + body under the webhook's secret>`."""
DELIVERY_HEADER: Final = "Askserver-Delivery"
"""The delivery's id: the same on every retry of one notification, so receivers can drop repeats."""
TOLERANCE: Final = 300
"""Seconds a receiver should accept a signature's timestamp either way (older ones: replays)."""
TIMEOUT: Final = 5.0
"""Seconds one POST may take, connecting included."""
USER_AGENT: Final = "askserver-webhook/1"
HEADLINES: Final[Mapping[str, str]] = {
    "asked": "{asker} asks (via {tool})",
    "reminder": "Reminder: {asker} is still waiting for an answer (via {tool}), until {expires}",
    "escalated": "Escalated to {fallback}: {asker} asks (via {tool}), unanswered since {created}",
}
"""The server's own first line of `text`, per purpose of the notification."""


class PostFailed(Exception):
    """One POST did not succeed; `status` is the HTTP status when there was one."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def slack_escape(text: str) -> str:
    """Text a Slack-compatible receiver shows as written: no `<!channel>` pings, no disguised links."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def quoted(text: str) -> str:
    """The model's words, escaped, every line a quote: a line of theirs cannot pass for ours."""
    lines = slack_escape(text).splitlines() or [""]
    return "\n".join(f"> {line}" for line in lines)


def announcement(ask: Mapping[str, Any], link: str, purpose: str = "asked") -> dict[str, Any]:
    """The JSON body: `text` (and `blocks`) for Slack-compatible receivers, `ask` for everything else.

    `ask` holds `message`, `tool`, `client`, `id`, `expires_at`, `created` (ISO 8601) and, for an
    escalation, `fallback`. The server's words and its link come first, on lines of their own;
    the model's message follows as a quote, escaped. In `blocks` the message is plain text
    (never read as markup) and the link is the button's, set by the server alone. `ask` carries
    the model's values as they are.
    """
    # The client's name is on the server's headline line: one line, whatever was stored (a
    # newline in it made a fake "Answer at:" line above the real one).
    asker = slack_escape(one_line(ask.get("client") or "", CLIENT_NAME_CHARS) or "An agent")
    headline = HEADLINES[purpose].format(
        asker=asker,
        tool=slack_escape(ask["tool"]),
        expires=ask["expires_at"],
        created=ask.get("created", ""),
        fallback=slack_escape(ask.get("fallback", "")),
    )
    return {
        "text": f"{headline}\nAnswer at: {link}\n{quoted(ask['message'])}",
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": f"*{headline}*"}},
            {"type": "section", "text": {"type": "plain_text", "text": ask["message"][:3000]}},
            {
                "type": "actions",
                "elements": [
                    {
                        "type": "button",
                        "text": {"type": "plain_text", "text": "Answer"},
                        "url": link,
                    }
                ],
            },
        ],
        "kind": purpose,
        "ask": {**ask, "url": link},
    }


def signature(secret: str, body: bytes, timestamp: int) -> str:
    """The `Askserver-Signature` header's value for `body` sent at `timestamp`."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"


def verify(secret: str, header: str, body: bytes, *, now: float | None = None) -> bool:
    """What a receiver checks: the signature is ours and its timestamp within TOLERANCE of now."""
    fields = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    try:
        timestamp = int(fields["t"])
    except (KeyError, ValueError):
        return False
    if abs((time.time() if now is None else now) - timestamp) > TOLERANCE:
        return False  # a replay of an old delivery, or a clock far off
    expected = signature(secret, body, timestamp).split("v1=", 1)[1]
    # Bytes: compare_digest raises TypeError on text with non-ASCII characters.
    return hmac.compare_digest(expected.encode(), fields.get("v1", "").encode())


def post(target: Target, body: bytes, *, secret: str, delivery_id: int) -> int:
    """POST `body` once to the vetted `target`, signed; the HTTP status on a 2xx.

    Connects to `target.address` itself (the name is not resolved again) and follows no
    redirect: a 3xx is a failure naming where it pointed.

    Raises:
        PostFailed: the connection failed, timed out, or the answer was not a 2xx.
    """
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        SIGNATURE_HEADER: signature(secret, body, int(time.time())),
        DELIVERY_HEADER: str(delivery_id),
    }
    return post_raw(target, body, headers)


def post_raw(target: Target, body: bytes, headers: Mapping[str, str]) -> int:
    """POST `body` with `headers` once to the vetted `target`; the HTTP status on a 2xx.

    What :func:`post` does after signing; Web Push posts its encrypted bodies through it too.

    Raises:
        PostFailed: the connection failed, timed out, or the answer was not a 2xx.
    """
    connection = _connection(target)
    try:
        connection.request("POST", target.path, body=body, headers=dict(headers))
        response = connection.getresponse()
        response.read(64 * 1024)
    except (OSError, http.client.HTTPException) as exc:
        raise PostFailed(f"{type(exc).__name__}: {exc}") from None
    finally:
        connection.close()
    if 300 <= response.status < 400:
        where = response.getheader("Location", "?")
        raise PostFailed(f"HTTP {response.status} to {where}: redirects are not followed", 300)
    if not 200 <= response.status < 300:
        raise PostFailed(f"HTTP {response.status} {response.reason}", response.status)
    return response.status


class _PinnedHTTP(http.client.HTTPConnection):
    """An HTTP connection to a vetted address, whatever its name resolves to now."""

    def __init__(self, target: Target) -> None:
        super().__init__(target.host, target.port, timeout=TIMEOUT)
        self._address = target.address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPS(http.client.HTTPSConnection):
    """The same over TLS; the certificate is checked against the URL's name."""

    def __init__(self, target: Target) -> None:
        super().__init__(
            target.host, target.port, timeout=TIMEOUT, context=ssl.create_default_context()
        )
        self._address = target.address
        self._tls = ssl.create_default_context()

    def connect(self) -> None:
        raw = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._tls.wrap_socket(raw, server_hostname=self.host)


def _connection(target: Target) -> http.client.HTTPConnection:
    return _PinnedHTTPS(target) if target.scheme == "https" else _PinnedHTTP(target)


def body_of(payload: Mapping[str, Any]) -> bytes:
    """The bytes that are signed and sent (compact JSON, UTF-8)."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
