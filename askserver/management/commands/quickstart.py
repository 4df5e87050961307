"""`manage.py quickstart`: make sure a local admin account and its MCP token exist, and say how to use them."""

from __future__ import annotations

import json
import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser

from ask_mcp.team.auth import issue_token

USERNAME = "admin"


class Command(BaseCommand):
    help = (
        "Create a superuser with a generated password and an MCP token on a fresh database, and "
        "print how to sign in and a client configuration; on later runs, only print where to "
        "sign in. The password and the token are shown once and stored nowhere in the clear."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--url", default="http://127.0.0.1:8000/", help="where the inbox is served"
        )

    def handle(self, *args: Any, url: str, **options: Any) -> None:
        users = get_user_model()
        url = url.rstrip("/") + "/"
        if users.objects.filter(is_superuser=True).exists():
            self.stdout.write(
                f"  Inbox:         {url}  (sign in as an existing superuser; "
                "`manage.py changepassword <name>` sets a new password)"
            )
            self.stdout.write(
                f"  MCP endpoint:  {url}mcp with the token printed on the first run "
                "(`manage.py createtoken <name>` makes another)"
            )
            return
        password = secrets.token_urlsafe(12)
        admin = users.objects.create_superuser(USERNAME, email="", password=password)
        _, token = issue_token(admin, name="quickstart")
        self.stdout.write(f"  Inbox:         {url}")
        self.stdout.write(f"  Sign in as:    {USERNAME}")
        self.stdout.write(f"  Password:      {password}")
        self.stdout.write("                 (shown this once; change it in the admin)")
        self.stdout.write(f"  MCP token:     {token}")
        self.stdout.write(
            "                 (shown this once; `manage.py createtoken admin` makes more)"
        )
        config = {
            "mcpServers": {
                "askserver": {
                    "type": "http",
                    "url": f"{url}mcp",
                    "headers": {"Authorization": f"Bearer {token}"},
                }
            }
        }
        self.stdout.write("  Client configuration (paste into your MCP client's settings):")
        self.stdout.write(json.dumps(config, indent=2))
