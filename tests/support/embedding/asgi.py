"""The embedding project's asgi.py, written as docs/library/embedding.md tells another project to write it, plus a route of its own.

The route answers outside Django, so only this application (not askserver's, which shares
the settings' URLs) can serve it.
"""

from __future__ import annotations

import os
from typing import Any

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.support.embedding.settings")
django_asgi_app = get_asgi_application()

from ask_mcp.routing import build_application  # noqa: E402  (after get_asgi_application())
from tests.support.embedding import MARK, OWN_PATH  # noqa: E402

_askserver = build_application(django_asgi_app)


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "http" and scope["path"] == OWN_PATH:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": MARK})
        return
    await _askserver(scope, receive, send)
