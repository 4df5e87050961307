"""Django app configuration for the askserver project: it registers the project's own system checks, and its management commands live beside it."""

from __future__ import annotations

from django.apps import AppConfig


class AskserverConfig(AppConfig):
    name = "askserver"
    verbose_name = "askserver"

    def ready(self) -> None:
        from askserver import (
            checks,  # noqa: F401  (registers the project's checks)
            signin,  # noqa: F401  (remembers each sign-in for its device cookie)
        )
