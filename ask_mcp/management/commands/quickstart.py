"""`manage.py quickstart`: make sure a local admin account exists, and say how to sign in."""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser

USERNAME = "admin"


class Command(BaseCommand):
    help = (
        "Create a superuser with a generated password on a fresh database and print how to "
        "sign in; on later runs, only print where to sign in. The password is shown once and "
        "stored nowhere else."
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
            return
        password = secrets.token_urlsafe(12)
        users.objects.create_superuser(USERNAME, email="", password=password)
        self.stdout.write(f"  Inbox:         {url}")
        self.stdout.write(f"  Sign in as:    {USERNAME}")
        self.stdout.write(f"  Password:      {password}")
        self.stdout.write("                 (shown this once; change it in the admin)")
