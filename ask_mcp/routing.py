"""Channels routes for the app: mount `http_urlpatterns` in the project's ProtocolTypeRouter."""

from __future__ import annotations

from django.urls import path

from .endpoint import McpEndpoint

# Channels' URLRouter takes ASGI apps in Django's path(); django-stubs types it for views only.
http_urlpatterns = [path("mcp", McpEndpoint(), name="mcp")]  # type: ignore[arg-type]
"""The MCP endpoint at /mcp; in another project: `URLRouter([*http_urlpatterns, re_path("", django_app)])`."""
