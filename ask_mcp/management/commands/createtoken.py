"""`manage.py createtoken USER`: issue a bearer token for /mcp and print it once."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ask_mcp.team.auth import issue_token


class Command(BaseCommand):
    help = (
        "Create a bearer token for the MCP endpoint that belongs to USER and print it. The token "
        "is shown only this once; the server keeps only its hash."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username", help="The user the token acts for.")
        parser.add_argument("--name", default="", help="A label saying what the token is for.")
        parser.add_argument(
            "--team", default=None, help="A group: questions asked with the token also go to it."
        )
        parser.add_argument(
            "--people-only",
            action="store_true",
            help="Every question asked with the token goes to people in the inbox, never to the "
            "client's own form (approvals the agent cannot answer itself).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        User = get_user_model()
        try:
            user = User.objects.get(**{User.USERNAME_FIELD: options["username"]})
        except User.DoesNotExist as exc:
            raise CommandError(f"No user named {options['username']!r}.") from exc
        team = None
        if options["team"] is not None:
            try:
                team = Group.objects.get(name=options["team"])
            except Group.DoesNotExist as exc:
                raise CommandError(f"No group named {options['team']!r}.") from exc
        _, token = issue_token(
            user, name=options["name"], team=team, people_only=options["people_only"]
        )
        self.stdout.write(token)
