"""Django app configuration for ask_mcp."""

from __future__ import annotations

from django.apps import AppConfig


class AskMcpConfig(AppConfig):
    name = "ask_mcp"
    verbose_name = "Ask (MCP)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from ask_mcp import checks, conf, runtime  # noqa: F401  (registers the checks and the settings receivers)
        from ask_mcp.ops import metrics
        from ask_mcp.web import browsers  # noqa: F401  (remembers each sign-in's browser)

        if conf.get("METRICS") is True:
            metrics.enable()
