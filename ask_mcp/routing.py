"""The app's ASGI application: /mcp to the MCP endpoint, the inbox's sockets to Channels, the rest to Django.

:func:`build_application` is the one place it is assembled; `askserver/asgi.py`, `manage.py
ask_mcp`, `ask-mcp` and a project that embeds the app all call it (or mount the two pattern
lists below in their own router). It also wraps the whole in :func:`ask_mcp.runtime.lifecycle`,
the one place the background work starts, and in
:class:`~ask_mcp.transports.deadlines.BodyDeadline` (uvicorn has no deadline for a body). Import this module after
`get_asgi_application()`: the consumers need the app registry.
"""

from __future__ import annotations

from typing import Any

from django.urls import path

from ask_mcp.transports.deadlines import BodyDeadline
from ask_mcp.transports.health import LIVE, READY
from ask_mcp.transports.http import McpEndpoint
from ask_mcp.transports.metrics import MetricsEndpoint
from ask_mcp.web.consumers import LIVE_INBOX_PATH, InboxConsumer

# Channels' URLRouter takes ASGI apps in Django's path(); django-stubs types it for views only.
http_urlpatterns = [
    path("mcp", McpEndpoint(), name="mcp"),  # type: ignore[arg-type]
    path("health/live", LIVE, name="health-live"),  # type: ignore[arg-type]
    path("health/ready", READY, name="health-ready"),  # type: ignore[arg-type]
    path("metrics", MetricsEndpoint(), name="metrics"),  # type: ignore[arg-type]
]
"""The MCP endpoint at /mcp, the health checks and /metrics (ASGI apps ahead of Django: no
sign-in, no ALLOWED_HOSTS middleware); in another project:
`URLRouter([*http_urlpatterns, re_path("", django_app)])`."""

websocket_urlpatterns = [
    path(LIVE_INBOX_PATH.lstrip("/"), InboxConsumer.as_asgi()),
    path("ws/asks/<uuid:ask_id>/", InboxConsumer.as_asgi()),
]
"""The live inbox sockets; wrap them in AuthMiddlewareStack (and an origin check)."""


def build_application(django_application: Any = None) -> Any:
    """The whole ASGI application: /mcp, the live sockets (signed in, same site), and Django,
    behind the guard that refuses a `Host` naming another port (:mod:`ask_mcp.transports.host_port`).

    `django_application` is the project's `get_asgi_application()` (built here when omitted).
    Static files are served too, as `runserver` does, so `make run` needs no web server.
    """
    from channels.auth import AuthMiddlewareStack
    from channels.routing import ProtocolTypeRouter, URLRouter
    from django.core.asgi import get_asgi_application
    from django.urls import re_path

    from ask_mcp.runtime import lifecycle
    from ask_mcp.transports.host_port import OwnPortOnly
    from ask_mcp.web.origin import SameOriginSockets
    from ask_mcp.web.static import StaticFiles

    django_app = django_application or get_asgi_application()
    # Inside the body deadline, outside all else: a Host naming another port is refused before
    # /mcp, a page or a socket sees it.
    application = lifecycle(
        OwnPortOnly(
            ProtocolTypeRouter(
                {
                    "http": URLRouter(
                        [*http_urlpatterns, re_path(r"", StaticFiles(django_app))]  # type: ignore[arg-type]
                    ),
                    # Signed-in sockets only, and only from pages of this site: the same scheme, host
                    # and port, as /mcp requires (no cross-site or cross-port hijacking).
                    "websocket": SameOriginSockets(
                        AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
                    ),
                }
            )
        )
    )
    # uvicorn has no body deadline: the application holds it. Under daphne its HTTP layer holds
    # it first (transports.guard) and the body is whole before the application runs, so each
    # wait here returns at once. (daphne's modules are imported under uvicorn too, by the
    # channels app: which server runs cannot be told from them.)
    return BodyDeadline(application)
