"""The inbox on a phone: the web app manifest, the service worker, each person's devices for Web Push and the workers' acknowledgements; sending is reach's.

`/manifest.webmanifest` and `/sw.js` sit at the site's root on purpose: an installed app keeps
both URLs for ever, and a service worker controls only the paths under its own, so the root is
the one place from which it serves the whole inbox. The worker is a static file (no inline
script: the pages' CSP holds for it too), served here only to give it the root scope.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import logging
import uuid
from typing import Any, Final

from channels.db import database_sync_to_async
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.contrib.staticfiles import finders
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    JsonResponse,
)
from django.shortcuts import redirect
from django.templatetags.static import static
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from ask_mcp import conf, runtime
from ask_mcp.models import Ask, AskEvent, Delivery, PushDevice, ReachPreference
from ask_mcp.reach import push, targets, webhooks
from ask_mcp.records import receipts
from ask_mcp.records.decisions import ask_answer
from ask_mcp.web import elicit
from ask_mcp.workers.relay import ChannelLayerUnavailable

logger = logging.getLogger("ask_mcp.web.phone")

WORKER: Final = "ask_mcp/sw.js"
"""The service worker's static path (served at /sw.js)."""
THEME: Final = "#1a56b0"
"""The inbox's accent (inbox.css --accent), the installed app's bar colour."""
NAME_CHARS: Final = 80
"""Characters of a device's name (PushDevice.name)."""
TEST_OUTCOMES: Final = {
    "sent": "A test notification was sent to that device.",
    "gone": "That device's subscription is gone (its browser dropped it); it was removed.",
    "failed": "The test notification could not be sent; the push service refused it or was down.",
    "removed": "The device was removed; it gets no more notifications.",
}
"""What Settings says after a device's button, by outcome (a closed vocabulary in the URL)."""


@require_GET
def manifest(request: HttpRequest) -> HttpResponse:
    """The web app manifest: the inbox installs as an app that opens on the waiting questions."""
    inbox = reverse("ask_mcp:inbox")
    body = {
        "id": inbox,
        "name": conf.values().title,
        "short_name": conf.values().title[:12],
        "description": "Questions your AI agents are waiting on you to answer.",
        "start_url": inbox,
        "scope": "/",
        "display": "standalone",
        "background_color": "#f6f7f9",
        "theme_color": THEME,
        "icons": [
            {
                "src": static(f"ask_mcp/icons/icon-{size}.png"),
                "sizes": f"{size}x{size}",
                "type": "image/png",
                "purpose": "any maskable",
            }
            for size in (192, 512)
        ],
    }
    response = JsonResponse(body, content_type="application/manifest+json")
    response["Cache-Control"] = "no-cache"
    return response


@require_GET
def service_worker(request: HttpRequest) -> HttpResponse:
    """The service worker, from its static file, at the root scope."""
    found = finders.find(WORKER)
    if not isinstance(found, str):
        raise Http404(f"{WORKER} is not among the static files")
    with open(found, "rb") as file:
        response = HttpResponse(file.read(), content_type="text/javascript; charset=utf-8")
    # Browsers check for a new worker at every navigation past a day anyway; no-cache makes a
    # deploy's new worker reach phones at their next visit.
    response["Cache-Control"] = "no-cache"
    return response


def _read_json(request: HttpRequest) -> dict[str, Any] | None:
    try:
        data = json.loads(request.body or b"{}")
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


@csrf_exempt  # a service worker has no CSRF token: the signed token is what is checked
@require_POST
async def push_ack(request: HttpRequest) -> HttpResponse:
    """A service worker got a push: mark its delivery reached (once) and note it in the history."""
    data = _read_json(request)
    token = data.get("token") if data else None
    delivery_id = push.read_ack(token) if isinstance(token, str) else None
    if delivery_id is None:
        return HttpResponseBadRequest("not an acknowledgement this server signed")
    await database_sync_to_async(acknowledge)(delivery_id)
    return HttpResponse(status=204)


def acknowledge(delivery_id: int) -> bool:
    """Keep that delivery `delivery_id` reached its device; False when it was kept already."""
    now = timezone.now()
    if not Delivery.objects.filter(pk=delivery_id, acked_at__isnull=True).update(acked_at=now):
        return False
    delivery = Delivery.objects.select_related("device", "ask").get(pk=delivery_id)
    if delivery.device is not None:
        PushDevice.objects.filter(pk=delivery.device.pk).update(last_delivered_at=now)
    if delivery.purpose not in (Delivery.Purpose.CLOSED, Delivery.Purpose.MORE):
        AskEvent.objects.create(
            ask_id=delivery.ask_id,
            kind=AskEvent.Kind.REACHED,
            at=now,
            actor_id=delivery.recipient_id,
            actor_label=delivery.device.name if delivery.device is not None else "a device",
            route=delivery.ask.route,
        )
    return True


@login_required
@require_POST
async def push_subscribe(request: HttpRequest) -> HttpResponse:
    """Keep the subscription this device's browser made (JSON, as `PushSubscription.toJSON()`
    gives it, with the device's `name`)."""
    user = await request.auser()
    assert isinstance(user, User)  # login_required
    if not push.enabled():
        return JsonResponse({"error": "this server sends no push notifications"}, status=409)
    data = _read_json(request) or {}
    keys = data.get("keys")
    keys = keys if isinstance(keys, dict) else {}
    endpoint, p256dh, auth = data.get("endpoint"), keys.get("p256dh"), keys.get("auth")
    name = str(data.get("name") or "").strip()[:NAME_CHARS] or "A device"
    if not all(isinstance(v, str) and v for v in (endpoint, p256dh, auth)):
        return JsonResponse(
            {"error": "endpoint, keys.p256dh and keys.auth are required"}, status=400
        )
    assert isinstance(endpoint, str) and isinstance(p256dh, str) and isinstance(auth, str)
    try:  # the SSRF guard, as for a webhook's URL: an endpoint is where the server connects
        await asyncio.to_thread(
            targets.vet, endpoint, allow_private=conf.values().allow_private_targets
        )
    except targets.TargetRefused as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    if (problem := push.keys_problem(push.Subscription(endpoint, p256dh, auth))) is not None:
        return JsonResponse({"error": problem}, status=400)
    device, _ = await PushDevice.objects.aupdate_or_create(
        endpoint=endpoint, defaults={"user": user, "name": name, "p256dh": p256dh, "auth": auth}
    )
    return JsonResponse({"id": device.pk, "name": device.name}, status=201)


@login_required
@require_POST
async def push_device(request: HttpRequest, device_id: int) -> HttpResponse:
    """One of the person's devices: send it a test notification, or remove it."""
    user = await request.auser()
    assert isinstance(user, User)  # login_required
    device = await PushDevice.objects.filter(pk=device_id, user=user).afirst()
    if device is None:
        raise Http404(f"no device {device_id} of yours")
    if request.POST.get("action") == "remove":
        await device.adelete()
        outcome = "removed"
    else:
        outcome = await asyncio.to_thread(send_test, device)
        if outcome == "gone":
            await device.adelete()
        elif outcome == "sent":
            await PushDevice.objects.filter(pk=device.pk).aupdate(last_sent_at=timezone.now())
    return redirect(reverse("ask_mcp:settings") + f"?device={outcome}#devices")


def send_test(device: PushDevice) -> str:
    """Push a test notification to `device` (blocking); the outcome's key in TEST_OUTCOMES."""
    subscription = push.Subscription(device.endpoint, device.p256dh, device.auth)
    payload = {
        "kind": "test",
        "tag": f"test-{device.pk}",
        "title": "Notifications are on",
        "body": f"This is how questions will reach “{device.name}”.",
        "url": reverse("ask_mcp:settings"),
    }
    try:
        push.send(subscription, payload, purpose="test", ttl=300, topic=f"test{device.pk}")
    except push.PushGone:
        return "gone"
    except (targets.TargetRefused, webhooks.PostFailed, OSError, ValueError):
        return "failed"
    except Exception:  # a subscription the crypto library refuses costs the test, never a 500
        logger.exception("test push to device %s failed", device.pk)
        return "failed"
    return "sent"


def settings_context(user: User, request: HttpRequest) -> dict[str, Any]:
    """What Settings draws about push: whether it is on, the key to subscribe with, the devices."""
    enabled = push.enabled()
    return {
        "push_enabled": enabled,
        "push_key": push.application_server_key() if enabled else "",
        "push_devices": list(PushDevice.objects.filter(user=user)),
        "push_outcome": TEST_OUTCOMES.get(request.GET.get("device", ""), ""),
    }


@login_required
@require_POST
async def ask_seen(request: HttpRequest, ask_id: uuid.UUID) -> HttpResponse:
    """The person has seen this ask (its card unfolded, its page visible): keep it, tell the agent."""
    user = await request.auser()
    assert isinstance(user, User)  # login_required
    ask = await Ask.objects.visible_to(user).filter(pk=ask_id).only("pk", "worker").afirst()
    if ask is None:
        raise Http404(f"no ask {ask_id} you may see")
    words = await database_sync_to_async(receipts.mark_seen)(ask_id, user)
    if words and ask.worker:  # a held call: its progress notification says it at once
        with contextlib.suppress(ChannelLayerUnavailable):
            await runtime.relay().send(
                ask.worker, {"type": elicit.SEEN_MESSAGE, "ask": ask_id.hex, "words": words}
            )
    return HttpResponse(status=204)


FROM_NOTIFICATION: Final = "from a notification"
"""How the history tells an answer given with a notification's button."""


@csrf_exempt  # a service worker has no CSRF token: the signed, person-bound token is checked
@require_POST
async def push_answer(request: HttpRequest) -> HttpResponse:
    """A notification's answer button: answer the ask as the person the token was made for.

    Never a GET, and the token only ever travels inside the encrypted push; it names the
    person, the ask, the field and the value, and expires with the ask. Once the ask has ended
    (answered this way or another), a token answers nothing and the reply says who did.
    """
    data = _read_json(request)
    token = data.get("token") if data else None
    answer = push.read_answer(token) if isinstance(token, str) else None
    if answer is None:
        return JsonResponse({"said": "This button has expired; open the inbox."}, status=400)
    ask = await Ask.objects.with_people().filter(pk=uuid.UUID(hex=answer.ask_id)).afirst()
    person = await User.objects.filter(pk=answer.user_id, is_active=True).afirst()
    if ask is None or person is None:
        return JsonResponse({"said": "This question is gone."}, status=410)
    if not await Ask.objects.visible_to(person).filter(pk=ask.pk).aexists():
        return JsonResponse({"said": "This question is no longer yours to answer."}, status=403)
    if ask.awaits_browser_answer:
        reply = {"action": "accept", "content": {answer.field: answer.value}}
        try:
            answered = await ask_answer(ask=ask, reply=reply, user=person, relay=runtime.relay())
        except ChannelLayerUnavailable:
            return JsonResponse({"said": "Not sent; try again from the inbox."}, status=503)
        if answered.won:
            await AskEvent.objects.filter(
                ask=ask, kind=AskEvent.Kind.ANSWERED, actor=person
            ).aupdate(actor_label=FROM_NOTIFICATION)
            return JsonResponse({"said": f"Answered: {answer.label}", "ended": False})
        ask = answered.ask
    who = ask.answered_by.get_username() if ask.answered_by is not None else ""
    return JsonResponse({"said": push.ended_words(ask.status, who), "ended": True}, status=409)


AWAY_FORMAT: Final = "%Y-%m-%dT%H:%M"
"""How the Away field (an `<input type="datetime-local">`, read as UTC) writes a time."""


def read_away(text: str) -> tuple[dt.datetime | None, str]:
    """(the time Away ends, "") from the field's text, (None, "") when it is empty or past, or
    (None, why) when it is not a time."""
    text = text.strip()
    if not text:
        return None, ""
    try:
        until = dt.datetime.strptime(text, AWAY_FORMAT).replace(tzinfo=dt.UTC)
    except ValueError:
        return None, f"{text!r} is not a date and time such as 2026-12-24T18:00 (UTC)."
    return (until if until > timezone.now() else None), ""


def away_value(choice: ReachPreference) -> str:
    """The Away field's value: its end while it lasts, empty once it passed (Away ends by itself)."""
    until = choice.away_until
    return until.strftime(AWAY_FORMAT) if until and until > timezone.now() else ""
