"""Revoking a token, or deactivating its user, ends the calls it holds on every worker and withdraws their asks; an answer given before stays.

Two workers on one PostgreSQL and one Redis as a deploy runs them, each holding a call of the
same token (a raw held call, and the official client), then the token revoked as a script or
the admin would; and one live server where staff revoke it on the admin's page. The asks are
withdrawn with the reason on their cards, an answer given before the revocation and not yet
collected stays as it was (decided, not collected), and a person's answer after it is not sent.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from mcp.types import CallToolResult

from ask_mcp.records.sweeper import REVOKED_REASON
from tests.support.browser import WEB_CONFIG, Person, quickstart_admin
from tests.support.calls import client
from tests.support.clients import authed
from tests.support.inbox_http import held_call, page_text, signed_in_http
from tests.support.live import LiveServer, LiveServers
from tests.support.names import unique
from tests.support.results import text_of
from tests.support.shell import shell
from tests.support.wire import assert_valid
from tests.support.workers import shared_workers

pytestmark = pytest.mark.asyncio(loop_scope="session")

ROWS = (
    "import json; from ask_mcp.models import Ask;"
    "print(json.dumps({a.message: {'id': a.id.hex, 'status': a.status, 'reason': a.reason,"
    " 'collected': a.collected_at is not None} for a in Ask.objects.filter(message__in=MESSAGES)}))"
)
"""The asks with these messages: id, status, reason and whether a call collected them."""


def rows(server: LiveServer, *messages: str) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = shell(server, f"MESSAGES = {list(messages)!r};" + ROWS)
    return found


async def until_pending(server: LiveServer, message: str) -> str:
    """The id of the ask with `message`, once it is recorded pending (polled, bounded)."""
    async with asyncio.timeout(30):
        while True:
            row = rows(server, message).get(message)
            if row is not None and row["status"] == "pending":
                return str(row["id"])
            await asyncio.sleep(0.2)


async def official_ask(url: str, token: str, message: str) -> CallToolResult:
    """user_ask from the official client without forms, its tools listed first: after the
    revocation the token opens nothing, so the SDK must not need tools/list then."""
    async with asyncio.timeout(60), authed(url, token) as sdk:
        await sdk.list_tools()
        return await sdk.call_tool("user_ask", {"message": message})


async def answered_but_not_collected(server: LiveServer, person: Person, token: str) -> str:
    """An ask of `token` whose call left, then answered: decided, waiting to be collected."""
    message = unique("Tag the release?")
    async with client() as http:
        headers = {"authorization": f"Bearer {token}"}
        async with held_call(server.mcp_url, message=message, http=http, headers=headers) as gone:
            pass
    async with signed_in_http(server, person) as signed:
        await signed.answer(gone.ask_id, answer="v2.1")
    return message


async def test_revoking_a_token_ends_its_calls_on_every_worker_and_withdraws_their_asks(
    live_servers: LiveServers,
) -> None:
    with shared_workers(live_servers, WEB_CONFIG) as both:
        a, b = both.a, both.b
        admin = quickstart_admin(a)
        token = a.manage("createtoken", admin.username, "--name", "ci").strip()
        early = await answered_but_not_collected(b, admin, token)
        on_a, on_b = unique("Deploy on A?"), unique("Deploy on B?")
        async with client() as http:
            headers = {"authorization": f"Bearer {token}"}
            async with held_call(a.mcp_url, message=on_a, http=http, headers=headers) as held:
                official = asyncio.create_task(official_ask(b.mcp_url, token, on_b))
                await until_pending(a, on_b)
                # Revoked as a script would: no admin page tells the workers; each notices.
                a.manage(
                    "shell",
                    "-c",
                    "from django.utils import timezone; from ask_mcp.models import ApiToken;"
                    f"ApiToken.objects.filter(prefix={token[:11]!r}).update("
                    "revoked_at=timezone.now())",
                )
                async with asyncio.timeout(30):  # on main both waited for the 600 s TTL
                    ended = assert_valid("tools/call", await held.result())
                    ended_b = await official
        for text in (text_of(ended["result"]), text_of(ended_b)):
            assert REVOKED_REASON in text and "Deploy" not in text, text
        found = rows(a, early, on_a, on_b)
        for message in (on_a, on_b):
            assert (found[message]["status"], found[message]["reason"]) == (
                "withdrawn",
                REVOKED_REASON,
            )
        # The answer given before the revocation stands, decided and not collected.
        assert (found[early]["status"], found[early]["collected"]) == ("accepted", False)
        async with signed_in_http(b, admin) as signed:
            late = await signed.answer(held.ask_id, answer="too late")
            shown = page_text(late.text)
            assert "Your reply was not sent" in shown and REVOKED_REASON in shown, shown
            card = page_text((await signed.client.get(f"/asks/{uuid.UUID(held.ask_id)}/")).text)
            assert f"no longer waiting. Reason: {REVOKED_REASON}" in card, card


async def test_staff_revoke_a_token_on_the_admin_page_and_its_official_client_call_ends_at_once(
    web: LiveServer, admin: Person
) -> None:
    token = web.manage("createtoken", admin.username, "--name", "laptop").strip()
    message = unique("Rotate the signing key?")
    call = asyncio.create_task(official_ask(web.mcp_url, token, message))
    ask_id = await until_pending(web, message)
    pk = shell(
        web,
        "import json; from ask_mcp.models import ApiToken;"
        f"print(json.dumps(ApiToken.objects.get(prefix={token[:11]!r}).pk))",
    )
    async with signed_in_http(web, admin) as signed:
        page = await signed.client.post(
            "/admin/ask_mcp/apitoken/",
            data={
                "action": "revoke",
                "_selected_action": str(pk),
                "csrfmiddlewaretoken": signed.csrf,
            },
            follow_redirects=True,
        )
        async with asyncio.timeout(10):  # told at once, not at the next watch
            ended = await call
        assert "Revoked 1 token(s); withdrew 1 waiting ask(s)." in page_text(page.text)
        assert REVOKED_REASON in text_of(ended)
        late = await signed.answer(ask_id, answer="yes")
        assert "Your reply was not sent" in page_text(late.text)
