"""ASGI entry point: /mcp goes to the MCP endpoint, the inbox's sockets to Channels, everything else to Django."""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "askserver.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs the app registry)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402
from django.urls import re_path  # noqa: E402

from ask_mcp.routing import http_urlpatterns, websocket_urlpatterns  # noqa: E402
from ask_mcp.transports.daphne import freeze_startup_objects, tune_daphne  # noqa: E402

tune_daphne()  # under daphne only: skip Twisted's work that daphne never uses

application = ProtocolTypeRouter(
    {
        "http": URLRouter(
            [*http_urlpatterns, re_path(r"", ASGIStaticFilesHandler(django_asgi_app))]  # type: ignore[arg-type]
        ),
        # Signed-in sockets only, and only from pages of this site (no cross-site hijacking).
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        ),
    }
)

# Last: everything imported and built so far lives as long as the process.
freeze_startup_objects()
