"""URLs of the Django side (the MCP endpoint and the live sockets are routed in asgi.py)."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("ask_mcp.urls")),
]
