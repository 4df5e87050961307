"""The embedding project's URLs: the inbox at the root, as the README tells another project to include it."""

from __future__ import annotations

from django.urls import include, path

urlpatterns = [path("", include("ask_mcp.urls"))]
