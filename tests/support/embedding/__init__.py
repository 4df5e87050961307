"""A Django project that embeds the ask_mcp app, for the test that `manage.py ask_mcp` serves its application."""

from __future__ import annotations

from typing import Final

OWN_PATH: Final = "/embedded"
"""The project's own route, answered outside Django."""
MARK: Final = b"served by the embedding project"
"""What it answers, so a test can tell whose application serves."""
