"""The embedding project's URLs: the inbox at the root, as docs/library/embedding.md tells another project to include it."""

from __future__ import annotations

from django.urls import include, path

urlpatterns = [path("", include("ask_mcp.urls"))]
