"""Channels routes for the app: mount `http_urlpatterns` and `websocket_urlpatterns` in the project's ProtocolTypeRouter.

Import it after `get_asgi_application()` (the consumers need the app registry).
"""

from __future__ import annotations

from typing import Final

from django.urls import path

from ask_mcp.transports.http import McpEndpoint
from ask_mcp.web.consumers import InboxConsumer

LIVE_INBOX_PATH: Final = "/ws/inbox/"
"""The inbox's live socket."""
LIVE_ASK_PATH: Final = "/ws/asks/{ask_id}/"
"""One ask page's live socket."""

# Channels' URLRouter takes ASGI apps in Django's path(); django-stubs types it for views only.
http_urlpatterns = [path("mcp", McpEndpoint(), name="mcp")]  # type: ignore[arg-type]
"""The MCP endpoint at /mcp; in another project: `URLRouter([*http_urlpatterns, re_path("", django_app)])`."""

websocket_urlpatterns = [
    path(LIVE_INBOX_PATH.lstrip("/"), InboxConsumer.as_asgi()),
    path("ws/asks/<uuid:ask_id>/", InboxConsumer.as_asgi()),
]
"""The live inbox sockets; wrap them in AuthMiddlewareStack (and an origin check)."""
