"""`manage.py askserver_config`: the effective configuration, one line per variable, secrets masked.

Each `ASKSERVER_` variable with the value in force and where it came from: the environment
(naming the variable actually read, DATABASE_URL or an old name included), the settings file,
or the default. Secrets (the secret key and its fallbacks, the metrics token, a password in a
URL) are masked; `--json` prints the same as one JSON object.
"""

from __future__ import annotations

import json
import os
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from ask_mcp import conf
from ask_mcp.ops.environment import Variable
from askserver import environment


def effective(var: Variable) -> tuple[Any, str]:
    """The value in force for `var`, and its source."""
    found = environment.raw(var, os.environ)
    problems = environment.problems(os.environ)
    if var.key is not None:
        value = conf.get(var.key)
        if found is not None and var.name not in problems:
            return value, f"environment ({found[0]})"
        given = conf.configured()
        if isinstance(given, dict) and var.key in given:
            return value, "settings"
        return value, "default" if var.name not in problems else "default (unreadable value)"
    value = environment.read_one(var, os.environ)
    if var.name == "ASKSERVER_VAR_DIR":
        value = str(getattr(settings, "VAR_DIR", value))
    elif var.name == "ASKSERVER_DATABASE_URL" and value is None:
        value = f"sqlite:///{settings.DATABASES['default']['NAME']}"
    elif var.name == "ASKSERVER_SECRET_KEY" and found is None:
        return "generated, in VAR_DIR/secret_key", "default"
    if found is not None and var.name not in problems:
        return value, f"environment ({found[0]})"
    return value, "default" if var.name not in problems else "default (unreadable value)"


class Command(BaseCommand):
    help = (
        "Print the effective configuration: every ASKSERVER_ variable, its value in force and "
        "where it came from. Secrets are masked."
    )
    requires_system_checks = []  # it must run, and help, when the configuration is wrong

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="Print one JSON object.")

    def handle(self, *args: Any, **options: Any) -> None:
        rows = []
        for var in environment.VARIABLES:
            value, source = effective(var)
            shown = (
                value
                if isinstance(value, str)
                and source == "default"
                and var.name in ("ASKSERVER_SECRET_KEY",)
                else environment.shown(var, value)
            )
            rows.append((var.name, shown, source))
        problems = environment.problems(os.environ)
        if options["json"]:
            self.stdout.write(
                json.dumps(
                    {
                        "variables": {
                            name: {"value": shown, "source": source} for name, shown, source in rows
                        },
                        "problems": problems,
                    },
                    indent=2,
                )
            )
            return
        width = max(len(name) for name, _, _ in rows)
        cut = [
            (name, shown if len(shown) <= 48 else shown[:47] + "…", s) for name, shown, s in rows
        ]
        values = max(len(shown) for _, shown, _ in cut)
        for name, shown, source in cut:
            self.stdout.write(f"{name:<{width}}  {shown:<{values}}  {source}")
        for problem in problems.values():
            self.stderr.write(f"problem: {problem}")
