"""A project that embeds the ask_mcp app: its own URLs and its own ASGI application."""

from __future__ import annotations

from askserver.settings import *  # noqa: F403

ROOT_URLCONF = "tests.support.embedding.urls"
ASGI_APPLICATION = "tests.support.embedding.asgi.application"
