"""Revoking a token, or deactivating its user, ends the calls, tasks, sessions and streams it holds on every worker and withdraws their asks; an answer given before stays.

Two workers on one PostgreSQL and one Redis as a deploy runs them, each holding a call of the
same token (a raw held call, and the official client), then the token revoked as a script or
the admin would; and one live server where staff revoke it on the admin's page. The asks are
withdrawn with the reason on their cards, an answer given before the revocation and not yet
collected stays as it was (decided, not collected), and a person's answer after it is not sent.
The token's initialize-era sessions end on both workers (the standalone GET stream another
worker holds closes; the session's id answers 404 once the token opens /mcp again, to the
official client too), and its open tasks are cancelled, saying why, before anyone polls them.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx2
import pytest
from mcp import MCPError
from mcp.types import CallToolResult

from ask_mcp.records.sweeper import REVOKED_REASON
from ask_mcp.server.eras.tasks import REVOKED_MESSAGE
from tests.support.browser import WEB_CONFIG, Person, quickstart_admin
from tests.support.calls import client
from tests.support.clients import authed
from tests.support.inbox_http import held_call, page_text, signed_in_http
from tests.support.live import LiveServer, LiveServers
from tests.support.names import unique
from tests.support.results import text_of
from tests.support.shell import shell
from tests.support.tasks import TaskClient
from tests.support.wire import LEGACY_HEADERS, assert_valid
from tests.support.workers import shared_workers

pytestmark = pytest.mark.asyncio(loop_scope="session")

ROWS = (
    "import json; from ask_mcp.models import Ask;"
    "print(json.dumps({a.message: {'id': a.id.hex, 'status': a.status, 'reason': a.reason,"
    " 'collected': a.collected_at is not None} for a in Ask.objects.filter(message__in=MESSAGES)}))"
)
"""The asks with these messages: id, status, reason and whether a call collected them."""


def revoke(server: LiveServer, token: str, *, revoked: bool = True) -> None:
    """Revoke `token` (or take the revocation back) as a script would: no admin page tells the
    workers; each notices by its revocation watch, and its token cache within 10 s."""
    when = "timezone.now()" if revoked else "None"
    server.manage(
        "shell",
        "-c",
        "from django.utils import timezone; from ask_mcp.models import ApiToken;"
        f"ApiToken.objects.filter(prefix={token[:11]!r}).update(revoked_at={when})",
    )


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
            await asyncio.sleep(0.2)  # poll interval: asyncio.timeout(30) bounds the wait


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
                revoke(a, token)
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


def session_headers(token: str, session: str = "") -> dict[str, str]:
    headers = {**LEGACY_HEADERS, "authorization": f"Bearer {token}"}
    if session:
        headers |= {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    return headers


async def open_session(http: httpx2.AsyncClient, url: str, token: str) -> str:
    """An initialize-era session opened by hand with `token` (the official client hides its id)."""
    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw-legacy", "version": "1"},
        },
    }
    opened = await http.post(url, json=body, headers=session_headers(token))
    assert opened.status_code == 200, opened.text
    session = opened.headers["mcp-session-id"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await http.post(url, json=initialized, headers=session_headers(token, session))
    return session


async def once_the_token_opens(http: httpx2.AsyncClient, url: str, token: str, session: str) -> int:
    """The status a ping in `session` gets once `token` opens /mcp again (each worker's token
    cache may still refuse it for 10 s after the revocation is taken back); polled, bounded."""
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with asyncio.timeout(30):
        while True:
            reply = await http.post(url, json=ping, headers=session_headers(token, session))
            if reply.status_code != 401:
                return reply.status_code
            await asyncio.sleep(0.5)  # poll interval: asyncio.timeout(30) bounds the wait


async def test_revoking_a_token_ends_its_sessions_and_the_get_stream_another_worker_holds(
    live_servers: LiveServers,
) -> None:
    with shared_workers(live_servers, WEB_CONFIG) as both:
        a, b = both.a, both.b
        admin = quickstart_admin(a)
        token = a.manage("createtoken", admin.username, "--name", "ci").strip()
        async with (
            client() as http,
            authed(a.mcp_url, token, mode="legacy") as sdk,  # its own session and GET stream
        ):
            await sdk.list_tools()
            session = await open_session(http, a.mcp_url, token)
            headers = {**session_headers(token, session), "accept": "text/event-stream"}
            async with http.stream("GET", b.mcp_url, headers=headers) as stream:
                assert stream.status_code == 200
                revoke(a, token)
                # On main the stream stayed open for SESSION_IDLE_SECONDS (an hour).
                async with asyncio.timeout(30):
                    async for chunk in stream.aiter_bytes():
                        assert chunk.strip() in (b"", b":"), chunk  # keep-alives only
            revoke(a, token, revoked=False)
            # The sessions ended everywhere: the token opens /mcp again, not them.
            for server in (a, b):
                assert await once_the_token_opens(http, server.mcp_url, token, session) == 404
            with pytest.raises(MCPError):
                await sdk.list_tools()


async def test_revoking_a_token_cancels_its_open_tasks_before_anyone_polls_them(
    web: LiveServer, admin: Person
) -> None:
    revoked, other = (
        web.manage("createtoken", admin.username, "--name", name).strip()
        for name in ("tasks", "laptop")
    )
    message = unique("Drop the old index?")
    async with asyncio.timeout(60):
        handle = await TaskClient(web.mcp_url, revoked).ask({"message": message})
        task_id = handle["taskId"]
        revoke(web, revoked)
        while True:  # no tasks/get in between: on main the task stayed input_required
            row = shell(
                web,
                "import json; from ask_mcp.models import Task;"
                f"t = Task.objects.get(pk={task_id!r});"
                "print(json.dumps([t.status, t.state.get('status_message', '')]))",
            )
            if row[0] != "input_required":
                break
            await asyncio.sleep(0.5)  # poll interval: asyncio.timeout(30) bounds the wait
    assert row == ["cancelled", REVOKED_MESSAGE]
    found = rows(web, message)[message]
    assert (found["status"], found["reason"]) == ("withdrawn", REVOKED_REASON)
    # The same person's other token reads the task as it ended (a task belongs to its principal).
    seen = await TaskClient(web.mcp_url, other).get(task_id)
    assert (seen["status"], seen["statusMessage"]) == ("cancelled", REVOKED_MESSAGE)


async def test_deactivating_a_user_closes_the_get_stream_of_their_tokens_session(
    web: LiveServer,
) -> None:
    name = f"bob-{uuid.uuid4().hex[:8]}"
    token: str = shell(
        web,
        "import json; from django.contrib.auth.models import User;"
        "from ask_mcp.team.auth import issue_token;"
        f"print(json.dumps(issue_token(User.objects.create(username={name!r}),"
        " name='bot')[1]))",
    )
    async with client() as http:
        session = await open_session(http, web.mcp_url, token)
        headers = {**session_headers(token, session), "accept": "text/event-stream"}
        async with http.stream("GET", web.mcp_url, headers=headers) as stream:
            assert stream.status_code == 200
            web.manage(
                "shell",
                "-c",
                "from django.contrib.auth.models import User;"
                f"User.objects.filter(username={name!r}).update(is_active=False)",
            )
            async with asyncio.timeout(30):  # on main it stayed open for SESSION_IDLE_SECONDS
                async for chunk in stream.aiter_bytes():
                    assert chunk.strip() in (b"", b":"), chunk
        web.manage(
            "shell",
            "-c",
            "from django.contrib.auth.models import User;"
            f"User.objects.filter(username={name!r}).update(is_active=True)",
        )
        assert await once_the_token_opens(http, web.mcp_url, token, session) == 404
