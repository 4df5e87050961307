"""Web Push to people's devices: the payload, its end-to-end encryption (RFC 8291), the VAPID signature (RFC 8292) and one POST to a vetted endpoint; knows no queue.

The push service (the browser vendor's) only relays: the question's words travel encrypted to
the device's keys, and the service sees the endpoint, the TTL, the urgency and the topic. The
endpoint is an outbound target like a webhook's URL, vetted by :mod:`ask_mcp.reach.targets`
and connected to at the vetted address. The service worker (`sw.js`) acknowledges each push
with the delivery's id and a signed token (:func:`ack_token`), so the server knows which
device got which push and when, without a session or a CSRF token in the worker.
"""

from __future__ import annotations

import base64
import functools
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from cryptography.hazmat.primitives import serialization
from django.core import signing
from py_vapid import Vapid02
from pywebpush import WebPusher

from ask_mcp import conf
from ask_mcp.reach import targets, webhooks

ACK_SALT: Final = "ask_mcp.reach.push.ack"
"""Keeps acknowledgement tokens apart from every other use of SECRET_KEY."""
TTL_MAX: Final = 4 * 7 * 86_400
"""Seconds a push service keeps an undelivered push at most (4 weeks, what the big ones allow)."""
VAPID_LIFETIME: Final = 12 * 3600
"""Seconds a VAPID token is valid (RFC 8292 allows 24 h; half of it tolerates clocks off)."""
URGENCY: Final[Mapping[str, str]] = {
    "asked": "high",
    "escalated": "high",
    "reminder": "high",
    "test": "normal",
    "closed": "normal",
    "more": "normal",
}
"""The Urgency header (RFC 8030 5.3) per purpose: a question wakes the phone, a closing does not."""
GONE: Final = (404, 410)
"""A push service's answers meaning the subscription no longer exists (RFC 8030 7.3)."""
BODY_CHARS: Final = 200
"""Characters of the question's first line a notification carries (phones show about 2 lines)."""
ACK_MAX_AGE: Final = TTL_MAX
"""Seconds an acknowledgement token stays valid: as long as the push may wait at the service."""


MAX_ACTIONS: Final = 2
"""Answer buttons a notification carries at most: Chromium's `Notification.maxActions`."""
ANSWER_SALT: Final = "ask_mcp.reach.push.answer"
"""Keeps answer tokens apart from every other use of SECRET_KEY."""
ENDED: Final[Mapping[str, str]] = {
    "accepted": "Answered",
    "declined": "Declined",
    "cancelled": "Cancelled",
    "expired": "Expired unanswered",
    "withdrawn": "Withdrawn by the agent",
}
"""How a notification says an ask ended, by its status."""


@dataclass(frozen=True, slots=True)
class QuickAnswer:
    """What one answer button of a notification answers: this person, this ask, this value."""

    ask_id: str
    user_id: int
    field: str
    value: Any
    label: str


def ended_words(status: str, who: str) -> str:
    """ "Answered by carol", "Expired unanswered": how an ended ask is told on a device."""
    said = ENDED.get(status, status)
    return f"{said} by {who}" if who else said


def quick_answers(schema: Mapping[str, Any]) -> list[tuple[str, str, Any]]:
    """(field, label, value) of each button when `schema` is one yes/no or one choice among at
    most MAX_ACTIONS with nothing else required; [] otherwise (the notification opens the page)."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    found: list[tuple[str, list[tuple[str, Any]]]] = []
    for name, spec in properties.items():
        if not isinstance(spec, Mapping):
            return []
        if spec.get("type") == "boolean":
            found.append((name, [("Yes", True), ("No", False)]))
        elif isinstance(spec.get("enum"), list) and spec.get("type") == "string":
            labels = spec.get("enumNames")
            values = spec["enum"]
            if not (isinstance(labels, list) and len(labels) == len(values)):
                labels = values
            found.append((name, [(str(t), v) for t, v in zip(labels, values, strict=True)]))
        elif isinstance(spec.get("oneOf"), list):
            consts = [o for o in spec["oneOf"] if isinstance(o, Mapping) and "const" in o]
            found.append((name, [(str(o.get("title") or o["const"]), o["const"]) for o in consts]))
        elif name in required:
            return []  # something else must be filled in: the page it is
    if len(found) != 1 or not required <= {found[0][0]}:
        return []
    name, options = found[0]
    if not 0 < len(options) <= MAX_ACTIONS:
        return []
    return [(name, label, value) for label, value in options]


def answer_token(answer: QuickAnswer, expires_at: float) -> str:
    """The signed token of one answer button, valid until the ask's expiry; only ever carried
    inside the encrypted payload, and only ever taken by a POST."""
    fields = [answer.ask_id, answer.user_id, answer.field, answer.value, answer.label, expires_at]
    return signing.dumps(fields, salt=ANSWER_SALT, compress=False)


def read_answer(token: str, now: float | None = None) -> QuickAnswer | None:
    """The answer a button's token stands for; None when it is not ours or its ask expired."""
    try:
        ask_id, user_id, field, value, label, expires_at = signing.loads(token, salt=ANSWER_SALT)
    except (signing.BadSignature, ValueError, TypeError):
        return None
    if (time.time() if now is None else now) > float(expires_at):
        return None
    return QuickAnswer(str(ask_id), int(user_id), str(field), value, str(label))


class PushGone(Exception):
    """The push service says this subscription no longer exists: delete the device."""


@dataclass(frozen=True, slots=True)
class Subscription:
    """What a device's browser gave when it subscribed: the endpoint and its keys (base64url)."""

    endpoint: str
    p256dh: str
    auth: str


def enabled() -> bool:
    """Web Push is on: a VAPID key and a contact are configured."""
    values = conf.values()
    return bool(values.vapid_private_key and values.vapid_subject)


@functools.cache
def _vapid(private_key: str) -> Vapid02:
    return Vapid02.from_string(private_key)


def key_problem(private_key: str) -> str | None:
    """Why `private_key` cannot sign VAPID tokens, or None when it can."""
    try:
        _vapid(private_key)
    except Exception as exc:  # py_vapid raises ValueError, TypeError or its own kinds
        return f"{type(exc).__name__}: {exc}"
    return None


def application_server_key() -> str:
    """The VAPID public key as `PushManager.subscribe` takes it: the uncompressed point, base64url."""
    key = conf.values().vapid_private_key
    if not key:
        raise ValueError("no VAPID key: set ASK_MCP['VAPID_PRIVATE_KEY']")
    point = _vapid(key).public_key.public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return base64.urlsafe_b64encode(point).rstrip(b"=").decode()


def ack_token(delivery_id: int) -> str:
    """What the service worker sends back to acknowledge delivery `delivery_id`."""
    return signing.dumps(delivery_id, salt=ACK_SALT, compress=False)


def read_ack(token: str) -> int | None:
    """The delivery a token acknowledges, or None for a token this server did not sign."""
    try:
        value = signing.loads(token, salt=ACK_SALT, max_age=ACK_MAX_AGE)
    except signing.BadSignature:
        return None
    return value if isinstance(value, int) else None


def headers_for(endpoint: str, purpose: str, ttl: int, topic: str) -> dict[str, str]:
    """The push's headers: VAPID authorization for the endpoint's origin, TTL, Urgency, Topic."""
    values = conf.values()
    assert values.vapid_private_key and values.vapid_subject  # enabled() was checked
    parts = urlsplit(endpoint)
    claims = {
        "aud": f"{parts.scheme}://{parts.netloc}",
        "sub": values.vapid_subject,
        "exp": int(time.time()) + VAPID_LIFETIME,
    }
    signed = _vapid(values.vapid_private_key).sign(claims)
    return {
        "Authorization": signed["Authorization"],
        "TTL": str(max(0, min(ttl, TTL_MAX))),
        "Urgency": URGENCY.get(purpose, "normal"),
        # Topic (RFC 8030 5.4): a later push with the same topic replaces one not yet delivered,
        # so the closing push of an ask overtakes its question on a phone that was off.
        "Topic": topic[:32],
        "Content-Encoding": "aes128gcm",
        "Content-Type": "application/octet-stream",
    }


def encrypt(subscription: Subscription, payload: Mapping[str, Any]) -> bytes:
    """`payload` as JSON, encrypted to the device's keys (aes128gcm, RFC 8291)."""
    pusher = WebPusher(
        {
            "endpoint": subscription.endpoint,
            "keys": {"p256dh": subscription.p256dh, "auth": subscription.auth},
        }
    )
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    body: bytes = pusher.encode(data, content_encoding="aes128gcm")["body"]
    return body


def keys_problem(subscription: Subscription) -> str | None:
    """Why nothing could be encrypted to `subscription`'s keys, or None when it can."""
    try:
        encrypt(subscription, {"probe": True})
    except Exception as exc:  # pywebpush, http_ece and cryptography each raise their own
        return f"the subscription's keys are not a P-256 key and an auth secret: {exc}"
    return None


def send(
    subscription: Subscription,
    payload: Mapping[str, Any],
    *,
    purpose: str,
    ttl: int,
    topic: str,
) -> int:
    """Encrypt `payload` and POST it once to the subscription's vetted endpoint; the HTTP status.

    Raises:
        targets.TargetRefused: the endpoint is not a public http(s) URL (the SSRF guard).
        PushGone: the push service answered 404 or 410.
        webhooks.PostFailed: the connection failed or the answer was another non-2xx.
    """
    target = targets.vet(subscription.endpoint, allow_private=conf.values().allow_private_targets)
    body = encrypt(subscription, payload)
    headers = headers_for(subscription.endpoint, purpose, ttl, topic)
    try:
        return webhooks.post_raw(target, body, headers)
    except webhooks.PostFailed as exc:
        if exc.status in GONE:
            raise PushGone(str(exc)) from None
        raise
