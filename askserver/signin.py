"""Signing in past a lockout: the address django-axes counts by (TRUSTED_PROXIES) and the signed device cookie that lets a browser its person signed in from before keep signing in.

django-axes locks a (username, address) pair out after ASKSERVER_LOGIN_FAILURE_LIMIT wrong
passwords. Two holes made that a way to lock anyone out: behind a proxy every request came from
the proxy's address, and on one machine every local client is 127.0.0.1, so ten wrong passwords
for `admin` from anywhere locked the real admin out too. axes is told, through its own hooks:

- :func:`client_address` (AXES_CLIENT_IP_CALLABLE): the client's address as the proxies named
  in TRUSTED_PROXIES forwarded it (:func:`ask_mcp.ops.forwarded.client_address`), else the
  connection's;
- :func:`lockout_username` (AXES_USERNAME_CALLABLE): a sign-in from a browser holding a valid
  device cookie for that very username is counted as its own pair, "<username> (this
  browser)": others' wrong passwords do not lock it, and its own still do, after the same limit.

The cookie is set by :func:`device_cookie` (a middleware) on the response to every successful
sign-in, inbox or admin, signed with the secret key (django.core.signing, its own salt), naming
the username, valid for DEVICE_COOKIE_DAYS. It opens nothing by itself: the password is still
needed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, Final

from asgiref.sync import iscoroutinefunction
from django.conf import settings
from django.contrib.auth.signals import user_logged_in
from django.core import signing
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponseBase
from django.utils.decorators import sync_and_async_middleware

from ask_mcp.ops import forwarded

DEVICE_COOKIE: Final = "askserver_device"
"""The device cookie's name."""
DEVICE_SALT: Final = "askserver.signin.device"
"""Its signature's salt: no other signed value of the server passes for it."""
DEVICE_COOKIE_DAYS: Final = 90
"""How long a browser stays known after its last sign-in (each sign-in renews it)."""
THIS_BROWSER: Final = " (this browser)"
"""What the lockout's username gets for a sign-in from a known browser: a pair of its own."""
_SIGNED_IN: Final = "_askserver_signed_in"
"""The request attribute naming who signed in during it (set by the signal, read on the way out)."""


@functools.cache
def _trusted(entries: tuple[str, ...]) -> list[forwarded.Network]:
    try:
        return forwarded.networks(entries)
    except ValueError:
        return []  # ask_mcp.E056 stops the server first; trust nobody meanwhile


def client_address(request: HttpRequest) -> str | None:
    """The address axes counts a sign-in by: X-Forwarded-For's client behind a trusted proxy."""
    peer = request.META.get("REMOTE_ADDR")
    if not peer:
        return None
    trusted = _trusted(tuple(getattr(settings, "TRUSTED_PROXIES", ())))
    if not trusted:
        return str(peer)
    return forwarded.client_address(str(peer), request.META.get("HTTP_X_FORWARDED_FOR"), trusted)


def known_username(request: HttpRequest) -> str | None:
    """The username this browser last signed in as, when its device cookie is genuine and current."""
    value = getattr(request, "COOKIES", {}).get(DEVICE_COOKIE)
    if not value:
        return None
    try:
        payload = signing.loads(value, salt=DEVICE_SALT, max_age=DEVICE_COOKIE_DAYS * 86_400)
    except signing.BadSignature:
        return None
    username = payload.get("u") if isinstance(payload, dict) else None
    return username if isinstance(username, str) else None


def lockout_username(request: HttpRequest, credentials: Mapping[str, Any] | None) -> str | None:
    """The username axes counts a sign-in by: the one typed, or "<it> (this browser)" from a
    browser that signed in as it before."""
    field = getattr(settings, "AXES_USERNAME_FORM_FIELD", "username")
    username = credentials.get(field) if credentials else getattr(request, "POST", {}).get(field)
    if not isinstance(username, str) or not username:
        return None
    if known_username(request) == username:
        return username + THIS_BROWSER
    return username


@receiver(user_logged_in)
def _remember(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    if request is not None:
        setattr(request, _SIGNED_IN, user.get_username())


def _set_cookie(request: HttpRequest, response: HttpResponseBase) -> None:
    username = getattr(request, _SIGNED_IN, None)
    if username is None:
        return
    response.set_cookie(
        DEVICE_COOKIE,
        signing.dumps({"u": username}, salt=DEVICE_SALT, compress=True),
        max_age=DEVICE_COOKIE_DAYS * 86_400,
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )


Handler = Callable[[HttpRequest], Any]


@sync_and_async_middleware
def device_cookie(get_response: Handler) -> Handler:
    """Set the device cookie on the response to a successful sign-in."""
    if iscoroutinefunction(get_response):

        async def middleware(request: HttpRequest) -> HttpResponseBase:
            response: HttpResponseBase = await get_response(request)
            _set_cookie(request, response)
            return response

        return middleware

    def sync_middleware(request: HttpRequest) -> HttpResponseBase:
        response: HttpResponseBase = get_response(request)
        _set_cookie(request, response)
        return response

    return sync_middleware
