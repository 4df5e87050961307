"""`python manage.py ask_mcp`: the `ask-mcp` command inside this Django project (same options)."""

from __future__ import annotations

import argparse
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ask_mcp import cli


class Command(BaseCommand):
    help = (
        "Serve an MCP server with this project's settings: stdio (default) or --transport=http, "
        "toolkits from --config and --tool."
    )
    # The command serves until stopped; checks run as they do for runserver.
    requires_system_checks = "__all__"

    def add_arguments(self, parser: CommandParser) -> None:
        cli.add_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        cli.run(argparse.Namespace(**options), _fail)


def _fail(message: str) -> NoReturn:
    raise CommandError(message, returncode=2)
