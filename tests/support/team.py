"""People, a team and their tokens on a live server, made through its own database.

`Team` is the smallest team that shows who sees an ask: dora asks with a token of the team,
eli is in the team, finn is not. `issue_tokens` gives users (made if missing) a token each.
"""

from __future__ import annotations

import uuid

from tests.support.browser import add_user
from tests.support.live import LiveServer
from tests.support.shell import shell


class Team:
    """dora (asks, her token's team is `team`), eli (in the team) and finn (outside it)."""

    def __init__(self, web: LiveServer) -> None:
        suffix = uuid.uuid4().hex[:6]
        self.team = f"ops-{suffix}"
        self.dora = add_user(web, f"dora{suffix}", staff=False)
        self.eli = add_user(web, f"eli{suffix}", staff=False)
        self.finn = add_user(web, f"finn{suffix}", staff=False)
        web.manage(
            "shell",
            "-c",
            (
                "from django.contrib.auth.models import Group, User;"
                f"g = Group.objects.create(name={self.team!r});"
                f"User.objects.get(username={self.eli.username!r}).groups.add(g)"
            ),
        )
        self.token = web.manage("createtoken", self.dora.username, "--team", self.team).strip()


def issue_tokens(server: LiveServer, *usernames: str, name: str = "tests") -> dict[str, str]:
    """A new token named `name` for each user (made if missing), by username."""
    script = (
        "import json; from django.contrib.auth.models import User;"
        "from ask_mcp.team.auth import issue_token;"
        "print(json.dumps({username: issue_token(User.objects.get_or_create(username=username)[0],"
        f" name={name!r})[1] for username in {usernames!r}}}))"
    )
    issued: dict[str, str] = shell(server, script)
    return issued
