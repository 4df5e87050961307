"""Bearer tokens on /mcp: who may call, and that state and sessions stay with the user they belong to."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import CommandError, call_command
from mcp import MCPError
from mcp.types import CallToolResult, InputRequiredResult

from ask_mcp.models import ApiToken
from ask_mcp.server.identity import TOKEN, Credential, Identity
from ask_mcp.team.auth import (
    Unauthorized,
    authenticate,
    digest,
    identity_of,
    principal_of,
    team_id_of,
    team_of,
    user_id_of,
)
from tests.support.clients import Person, accept, authed
from tests.support.live import SECURED, LiveServer, LiveServers
from tests.support.results import text_of
from tests.support.wire import LEGACY_HEADERS, headers_for, legacy_headers, post, request_body


@pytest.fixture(scope="module")
def secured(live_servers: LiveServers) -> LiveServer:
    server = live_servers.get(SECURED)
    for name in ("alice", "bob"):
        server.manage(
            "shell",
            "-c",
            f"from django.contrib.auth.models import User; "
            f"User.objects.get_or_create(username={name!r})",
        )
    return server


def token_for(server: LiveServer, username: str) -> str:
    token = server.manage("createtoken", username, "--name", "tests").strip()
    assert token.startswith("askmcp_")
    return token


def test_no_token_is_401_with_a_bearer_challenge(secured: LiveServer) -> None:
    response = post(secured.mcp_url, request_body("tools/list"))
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Bearer realm="askserver"'
    error = response.json()["error"]
    assert error["code"] == -32600 and "createtoken" in error["message"]


@pytest.mark.parametrize(
    "authorization, error",
    [
        ("Bearer askmcp_not-a-real-token", "invalid_token"),
        ("Basic YWxpY2U6c2VjcmV0", "invalid_request"),
        ("Token abc", "invalid_request"),
    ],
)
def test_a_bad_token_is_401_naming_the_error(
    secured: LiveServer, authorization: str, error: str
) -> None:
    body = request_body("tools/list")
    response = post(secured.mcp_url, body, {**headers_for(body), "authorization": authorization})
    assert response.status_code == 401
    assert f'error="{error}"' in response.headers["www-authenticate"]


async def test_a_token_lets_the_official_client_ask(secured: LiveServer) -> None:
    token = token_for(secured, "alice")
    async with (
        asyncio.timeout(15),
        authed(secured.mcp_url, token, Person(accept(answer="yes"))) as client,
    ):
        result = await client.call_tool("user_ask", {"message": "Token?"})
    assert text_of(result) == '{"answer":"yes"}'


async def test_a_request_state_is_refused_with_another_users_token(secured: LiveServer) -> None:
    alice, bob = token_for(secured, "alice"), token_for(secured, "bob")
    arguments = {"message": "Whose state?"}
    async with asyncio.timeout(15):
        async with authed(secured.mcp_url, alice, Person(accept(answer="a"))) as client:
            first = await client.session.call_tool("user_ask", arguments, allow_input_required=True)
            assert isinstance(first, InputRequiredResult)
        async with authed(secured.mcp_url, bob, Person(accept(answer="b"))) as client:
            with pytest.raises(MCPError) as raised:
                await client.session.call_tool(
                    "user_ask",
                    arguments,
                    request_state=first.request_state,
                    input_responses={"user_ask": accept(answer="b")},
                    allow_input_required=True,
                )
        async with authed(secured.mcp_url, alice, Person(accept(answer="a"))) as client:
            done = await client.session.call_tool(
                "user_ask",
                arguments,
                request_state=first.request_state,
                input_responses={"user_ask": accept(answer="a")},
                allow_input_required=True,
            )
    assert raised.value.code == -32602 and raised.value.data == {"reason": "principal"}
    assert isinstance(done, CallToolResult) and text_of(done) == '{"answer":"a"}'


def test_a_legacy_session_is_refused_with_another_users_token(secured: LiveServer) -> None:
    alice, bob = token_for(secured, "alice"), token_for(secured, "bob")
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    opened = post(secured.mcp_url, init, {**LEGACY_HEADERS, "authorization": f"Bearer {alice}"})
    session = opened.headers["mcp-session-id"]
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    as_bob = post(
        secured.mcp_url, ping, {**legacy_headers(session), "authorization": f"Bearer {bob}"}
    )
    assert as_bob.status_code == 403 and "another user" in as_bob.json()["error"]["message"]
    as_alice = post(
        secured.mcp_url, ping, {**legacy_headers(session), "authorization": f"Bearer {alice}"}
    )
    assert as_alice.status_code == 200


def test_a_revoked_token_is_refused(secured: LiveServer) -> None:
    token = token_for(secured, "bob")
    secured.manage(
        "shell",
        "-c",
        "from django.utils import timezone; from ask_mcp.models import ApiToken; "
        f"ApiToken.objects.filter(prefix={token[:11]!r}).update(revoked_at=timezone.now())",
    )
    body = request_body("tools/list")
    response = post(
        secured.mcp_url, body, {**headers_for(body), "authorization": f"Bearer {token}"}
    )
    assert response.status_code == 401
    assert json.loads(response.text)["error"]["message"].endswith("unknown or revoked")


@pytest.mark.django_db
def test_createtoken_prints_the_token_once_and_stores_only_its_hash(
    capsys: pytest.CaptureFixture[str],
) -> None:
    user = User.objects.create(username="carol")
    Group.objects.create(name="ops")
    call_command("createtoken", "carol", "--name", "laptop", "--team", "ops")
    token = capsys.readouterr().out.strip()
    record = ApiToken.objects.get(user=user)
    assert record.digest == digest(token) and token not in (record.digest, record.prefix)
    assert record.name == "laptop" and record.team is not None and record.team.name == "ops"
    with pytest.raises(CommandError, match="No user named 'nobody'"):
        call_command("createtoken", "nobody")
    with pytest.raises(CommandError, match="No group named 'devs'"):
        call_command("createtoken", "carol", "--team", "devs")


@pytest.mark.parametrize(
    "client, allowed",
    [
        (("127.0.0.1", 5000), True),
        (("::1", 5000), True),
        (("10.0.0.7", 5000), False),
        (None, False),
    ],
)
async def test_anonymous_use_is_allowed_on_loopback_only(client: Any, allowed: bool) -> None:
    if allowed:
        assert await authenticate({}, client, anonymous_loopback=True) is Identity.ANONYMOUS
    else:
        with pytest.raises(Unauthorized):
            await authenticate({}, client, anonymous_loopback=True)
    with pytest.raises(Unauthorized):
        await authenticate({}, client, anonymous_loopback=False)


@pytest.mark.django_db(transaction=True)
async def test_revoking_in_the_admin_takes_effect_at_once_in_this_process() -> None:
    from asgiref.sync import sync_to_async
    from django.contrib.admin.sites import site
    from django.test import RequestFactory

    from ask_mcp.admin.tokens import ApiTokenAdmin
    from ask_mcp.team.auth import TOKENS, issue_token

    user = await User.objects.acreate(username="dave")
    _, token = await sync_to_async(issue_token)(user)
    headers = {"authorization": f"Bearer {token}"}
    assert await authenticate(headers, None, anonymous_loopback=False) is not None  # now cached
    admin = ApiTokenAdmin(ApiToken, site)
    admin.message_user = lambda *args, **kwargs: None  # type: ignore[method-assign]
    request = RequestFactory().post("/admin/")
    await sync_to_async(admin.revoke)(request, ApiToken.objects.filter(user=user))
    with pytest.raises(Unauthorized, match="unknown or revoked"):
        await authenticate(headers, None, anonymous_loopback=False)
    TOKENS.forget()


def test_principals_and_teams_read_back_as_the_ids_they_were_written_from() -> None:
    """The one encoding of who asks (principal) and who may answer too (team)."""
    assert principal_of(7) == "user:7" and user_id_of("user:7") == 7
    assert team_of(3) == "group:3" and team_id_of("group:3") == 3
    for unreadable in (None, "", "user:", "user:x", "group:7", "token:1"):
        assert user_id_of(unreadable) is None
    for unreadable in (None, "", "group:", "group:x", "user:3"):
        assert team_id_of(unreadable) is None
    token = ApiToken(pk=1, user_id=7, team_id=3, name="ci", prefix="askmcp_Ab12")
    assert identity_of(token) == Identity(
        "user:7", "group:3", Credential(TOKEN, "1", "ci (askmcp_Ab12…)")
    )
    alone = ApiToken(pk=2, user_id=7, team_id=None, prefix="askmcp_Cd34", people_only=True)
    assert identity_of(alone) == Identity(
        "user:7", None, Credential(TOKEN, "2", "askmcp_Cd34…"), people_only=True
    )
    assert Identity.ANONYMOUS.principal is None and Identity.ANONYMOUS.team is None
