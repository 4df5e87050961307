"""Hardening, round two (issue 20), shown through the surfaces an attacker or a careless agent uses.

A page of another port of the same host, in a real browser with the person's session cookie,
tries the inbox socket; one token floods the elicitation table while another still asks; the
embedded default's files are checked for their modes. The daphne limits (body size, slow
headers, connections per address) are in tests/transports/test_daphne_limits.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import stat
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2
import pytest
from playwright.async_api import Page

from tests.support import calls
from tests.support.browser import OpenAs, Person, add_user, live_inbox
from tests.support.inbox_http import held_call, page_text, signed_in_http
from tests.support.live import PROBE_CONFIG, ROOT, SECURED, LiveServer, LiveServers
from tests.support.results import text_of
from tests.support.team import issue_tokens
from tests.support.wire import LEGACY_HEADERS, headers_for, http, legacy_headers, post, request_body

session_loop = pytest.mark.asyncio(loop_scope="session")
"""The browser and the live servers' clients share the session's event loop."""

OPEN_SOCKET = """(url) => new Promise((resolve) => {
    const socket = new WebSocket(url);
    socket.onmessage = (event) => { resolve("read: " + event.data.length + " bytes"); socket.close(); };
    socket.onclose = (event) => resolve(event.code);
})"""
"""Open the inbox socket from the page; resolves to what came of it (read, or the close code)."""


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<!doctype html><title>another server on this host</title>"
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture
def other_port() -> Iterator[str]:
    """A plain web server on another port of 127.0.0.1: what a neighbour on the machine runs."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def socket_url(web: LiveServer) -> str:
    return web.base_url.replace("http://", "ws://") + "/ws/inbox/"


@session_loop
async def test_a_page_on_another_port_of_the_same_host_cannot_open_the_inbox_socket(
    web: LiveServer, admin: Person, open_as: OpenAs, other_port: str
) -> None:
    page: Page = await open_as(admin)
    await live_inbox(page)  # the inbox's own page opens it: same scheme, host and port
    own = await page.evaluate(OPEN_SOCKET, socket_url(web))
    assert isinstance(own, str) and own.startswith("read: ")

    # The same signed-in context (its session cookie is sent: cookies ignore ports) on a page
    # served by another port of 127.0.0.1.
    neighbour = await page.context.new_page()
    await neighbour.goto(other_port + "/")
    outcome = await neighbour.evaluate(OPEN_SOCKET, socket_url(web))
    await neighbour.close()
    assert outcome == 1006  # the handshake was refused (403): nothing was pushed
    web.log_once(r'"GET /ws/inbox/" 403|WSREJECT /ws/inbox/')


# ---------------------------------------------------------------- a fair share of the table

FLOODED = {**SECURED, "ELICITATION_TTL": 120}
"""Tokens required, the default capacity (64) and share (16); its own server, as the flood
leaves parked calls behind until their TTL."""


@session_loop
async def test_one_token_that_floods_the_table_gets_its_share_and_others_still_ask(
    live_servers: LiveServers,
) -> None:
    server = live_servers.get(FLOODED)
    tokens = issue_tokens(server, "noisy", "quiet")
    as_noisy = {"authorization": f"Bearer {tokens['noisy']}"}
    as_quiet = {"authorization": f"Bearer {tokens['quiet']}"}
    async with calls.client() as http, asyncio.timeout(60):
        flood = await asyncio.gather(
            *(
                calls.rpc(
                    http,
                    server.mcp_url,
                    calls.call_body("user_ask", {"message": f"{n}?"}),
                    as_noisy,
                )
                for n in range(64)
            )
        )
        parked = [
            reply for _, reply in flood if reply["result"].get("resultType") == "input_required"
        ]
        refused = [reply["result"] for _, reply in flood if reply["result"].get("isError")]
        status, other = await calls.rpc(
            http, server.mcp_url, calls.call_body("user_ask", {"message": "Mine?"}), as_quiet
        )
    assert len(parked) == 16 and len(refused) == 48
    assert refused[0]["content"][0]["text"] == (
        "You already have 16 questions waiting for answers, your share of this server "
        "(ASK_MCP['ELICITATION_PER_PRINCIPAL']); other people can still ask. Wait for some to "
        "be answered, or carry on without asking."
    )
    assert status == 200 and other["result"]["resultType"] == "input_required"


# ---------------------------------------------------------------- initialize-era sessions

SESSIONS = {**PROBE_CONFIG, "NAME": "sessions"}
"""Its own server, so what it measures is its own memory."""
IDLING = {**PROBE_CONFIG, "SESSION_IDLE_SECONDS": 8, "SWEEP_SECONDS": 0.5}
"""Sessions idle out after 8 s (long enough to count them first, a manage.py run taking a second
or two on a loaded machine), and the sweeper looks twice a second."""
LARGE_CAPABILITIES = {"experimental": {f"k{n:06d}": [n] for n in range(52_500)}}
"""About 1 MB as JSON (just under MAX_BODY_BYTES), in many small objects as a client would."""


def rss_mb(server: LiveServer) -> float:
    """The server process's resident memory, from /proc."""
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    (kilobytes,) = re.findall(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
    return int(kilobytes) / 1024


def session_rows(server: LiveServer) -> int:
    code = "from ask_mcp.models import LegacySessionRecord as R; print(R.objects.count())"
    return int(server.manage("shell", "-c", code).split()[-1])


def initialize_body(capabilities: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "clientInfo": {"name": "churn", "version": "1"},
        },
    }


def test_large_initialize_requests_are_refused_and_the_worker_stays_small(
    live_servers: LiveServers,
) -> None:
    server = live_servers.get(SESSIONS)
    raw = json.dumps(initialize_body(LARGE_CAPABILITIES)).encode()
    assert 1_000_000 < len(raw) < 1024 * 1024
    for _ in range(5):  # warm: the first requests build what every later one reuses
        post(server.mcp_url, None, LEGACY_HEADERS, raw=raw)
    before = rss_mb(server)
    replies = [post(server.mcp_url, None, LEGACY_HEADERS, raw=raw) for _ in range(100)]
    after = rss_mb(server)
    record_measure("100 initialize requests of 1 MB", before, after)
    (message,) = {reply.json()["error"]["message"] for reply in replies}
    assert message.startswith("initialize: params.capabilities and params.clientInfo take ")
    assert message.endswith(
        "bytes as JSON; a session keeps at most 16384. Declare only the capabilities the client has."
    )
    assert all(
        reply.status_code == 400 and "mcp-session-id" not in reply.headers for reply in replies
    )
    assert after - before < 40, f"{before:.0f} MB -> {after:.0f} MB"


def test_sessions_that_end_are_deleted_and_churn_leaves_memory_flat(
    live_servers: LiveServers,
) -> None:
    server = live_servers.get(SESSIONS)
    capabilities = {"elicitation": {"form": {}}, "roots": {"listChanged": True}}

    def churn(count: int) -> None:
        for _ in range(count):
            opened = post(server.mcp_url, initialize_body(capabilities), LEGACY_HEADERS)
            session = opened.headers["mcp-session-id"]
            ended = http().delete(server.mcp_url, headers=legacy_headers(session))
            assert ended.status_code == 204, ended.text

    churn(200)  # warm
    rows, before = session_rows(server), rss_mb(server)
    churn(1000)
    after = rss_mb(server)
    record_measure("1,000 sessions opened and ended", before, after)
    assert rows == 0 and session_rows(server) == 0
    assert after - before < 10, f"{before:.0f} MB -> {after:.0f} MB"


def test_sessions_that_idle_out_leave_no_row(live_servers: LiveServers) -> None:
    server = live_servers.get(IDLING)
    for _ in range(20):
        post(server.mcp_url, initialize_body({}), LEGACY_HEADERS)
    assert session_rows(server) > 0
    deadline = time.monotonic() + 45
    while (rows := session_rows(server)) and time.monotonic() < deadline:
        pass  # each count is a manage.py run (about a second): the wait is bounded by the deadline
    assert rows == 0


MEASURES: Path = ROOT / "test-output" / "hardening-measures.json"
"""Where the memory tests write what they measured (the closing note quotes them)."""


def record_measure(what: str, before: float, after: float) -> None:
    MEASURES.parent.mkdir(exist_ok=True)
    known = json.loads(MEASURES.read_text()) if MEASURES.exists() else {}
    known[what] = {"rss_before_mb": round(before, 1), "rss_after_mb": round(after, 1)}
    MEASURES.write_text(json.dumps(known, indent=2))


# ---------------------------------------------------------------- var/ is the owner's


def test_var_and_everything_in_it_is_owner_only_as_make_run_leaves_it(
    live_servers: LiveServers, tmp_path: Path
) -> None:
    var = tmp_path / "var"
    var.mkdir(mode=0o755)  # an earlier release's var/, world-readable, with a loose old file
    (var / "notes.txt").write_text("left by an earlier release")
    (var / "notes.txt").chmod(0o644)
    env = {
        "DJANGO_SETTINGS_MODULE": "askserver.settings",
        "ASKSERVER_VAR_DIR": str(var),
        "ASKSERVER_SECRET_KEY": "",
    }
    previous = os.umask(0o022)  # the usual umask: new files 0644 unless made otherwise
    try:
        # What `make run` does: migrate, quickstart, then daphne serving askserver.asgi.
        for command in (["migrate", "--noinput"], ["quickstart", "--url", "http://127.0.0.1/"]):
            subprocess.run(
                [sys.executable, "manage.py", *command],
                cwd=ROOT,
                env={**os.environ, **env},
                check=True,
                capture_output=True,
                timeout=120,
            )
        server = live_servers.start({}, extra_env=env)
        try:
            post(server.mcp_url, initialize_body({}), LEGACY_HEADERS)  # a session row: the WAL
        finally:
            live_servers.stop(server)
    finally:
        os.umask(previous)
    modes = {
        str(path.relative_to(tmp_path)): oct(stat.S_IMODE(path.stat().st_mode))
        for path in [var, *var.rglob("*")]
    }
    assert {"var/db.sqlite3", "var/secret_key", "var/vapid_private_key"} <= set(modes)
    assert modes == {name: "0o700" if (tmp_path / name).is_dir() else "0o600" for name in modes}, (
        modes
    )


# ---------------------------------------------------------------- answers a person cannot send


@session_loop
async def test_a_huge_number_or_a_repeated_choice_is_named_in_the_form_not_a_500(
    web: LiveServer, admin: Person
) -> None:
    questions = [
        {"name": "count", "prompt": "How many?", "type": "number"},
        {"name": "tags", "prompt": "Tags", "options": ["a", "b"], "multiple": True},
    ]
    async with (
        asyncio.timeout(60),
        signed_in_http(web, admin) as person,
        calls.client() as http,
        held_call(web.mcp_url, http=http, message="Count?", questions=questions) as call,
    ):
        page = f"/asks/{uuid.UUID(call.ask_id)}/"
        form = {"action": "accept", "csrfmiddlewaretoken": person.csrf}
        huge = await person.client.post(page, data={**form, "f:count": "9" * 5000, "f:tags": "a"})
        repeated = await person.client.post(
            page, data={**form, "f:count": "3", "f:tags": ["a", "a"]}
        )
        sent = await person.client.post(page, data={**form, "f:count": "3", "f:tags": ["a", "b"]})
        result = await call.result()
    assert huge.status_code != 500 and "must have at most 100 digits" in page_text(huge.text)
    assert "has a choice more than once: a" in page_text(repeated.text)
    assert "Sent: the agent has your reply." in page_text(sent.text)
    assert json.loads(result["result"]["content"][0]["text"]) == {"count": 3, "tags": ["a", "b"]}


@pytest.mark.parametrize(
    "path",
    ["/static/%2e%2e/settings.py", "/static/%2e%2e/%2e%2e/etc/passwd", "/static/..%2f..%2fx"],
)
def test_a_static_path_outside_the_static_roots_is_not_found(web: LiveServer, path: str) -> None:
    response = http().get(web.base_url + path)
    assert response.status_code == 404


NOTES = {
    "message": "Release?",
    "questions": [
        {"name": "name", "prompt": "Name?"},
        {"name": "notes", "prompt": "Anything else?", "required": False},
    ],
}


@session_loop
async def test_an_optional_field_sent_as_null_is_left_out_and_the_accept_stands(
    live: LiveServer,
) -> None:
    async with calls.client() as http, asyncio.timeout(30):
        state = await calls.first_round(http, live.mcp_url, "user_ask", **NOTES)
        reply = {"action": "accept", "content": {"name": "Ada", "notes": None}}
        done = await calls.answer_round(http, live.mcp_url, "user_ask", state, reply, **NOTES)
    assert json.loads(text_of(done)) == {"name": "Ada"}


@session_loop
async def test_an_accept_that_cannot_be_read_is_asked_again_with_the_reason(
    live: LiveServer,
) -> None:
    async with calls.client() as http, asyncio.timeout(30):
        state = await calls.first_round(http, live.mcp_url, "user_ask", **NOTES)
        unreadable = {"action": "accept", "content": "Ada"}
        again = await calls.answer_round(http, live.mcp_url, "user_ask", state, unreadable, **NOTES)
        result = again["result"]
        assert result["resultType"] == "input_required"
        (request,) = result["inputRequests"].values()
        assert request["params"]["message"] == (
            "Release?\n\n(The previous answer could not be used: the answer was text, not an "
            "object; name: an answer is required.)"
        )
        reply = {"action": "accept", "content": {"name": "Ada"}}
        done = await calls.answer_round(
            http, live.mcp_url, "user_ask", result["requestState"], reply, **NOTES
        )
    assert json.loads(text_of(done)) == {"name": "Ada"}


# ---------------------------------------------------------------- Content-Security-Policy

WATCH_CSP = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (event) => {
    window.__violations.push(`${event.violatedDirective} ${event.blockedURI}`);
});
"""


@session_loop
async def test_the_inbox_and_the_admin_work_under_the_content_security_policy(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    page: Page = await open_as(admin)
    await page.add_init_script(WATCH_CSP)
    violations: list[str] = []
    paths = [
        "/",
        "/admin/",
        "/admin/ask_mcp/ask/",
        "/admin/ask_mcp/apitoken/add/",
        "/admin/auth/user/",
        "/admin/auth/user/add/",
    ]
    policy = ""
    for path in paths:
        response = await page.goto(path)
        assert response is not None and response.status == 200, path
        policy = await response.header_value("content-security-policy") or ""
        if path == "/":
            await live_inbox(page)  # htmx and its socket run under the policy
        violations += await page.evaluate("window.__violations")
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert violations == []


# ---------------------------------------------------------------- a new token, shown once


@session_loop
async def test_a_token_created_in_the_admin_is_shown_once_and_never_put_in_a_cookie(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    page: Page = await open_as(admin)
    await page.goto("/admin/ask_mcp/apitoken/add/")
    await page.get_by_label("User").select_option(label=admin.username)
    await page.get_by_label("Name").fill("shown once")
    async with page.expect_response(lambda r: r.request.method == "POST") as posted:
        await page.get_by_role("button", name="Save", exact=True).click()
    answer = await posted.value
    token = (await page.locator("code.new-token").inner_text()).strip()
    assert token.startswith("askmcp_") and len(token) > 30
    assert "no-store" in (await answer.header_value("cache-control") or "")
    cookies = await page.context.cookies()
    assert all(token not in cookie["value"] for cookie in cookies)
    assert not any(cookie["name"] == "messages" for cookie in cookies)
    # The token works, and the token list does not show it again.
    works = post(
        web.mcp_url,
        request_body("tools/list"),
        {**headers_for(request_body("tools/list")), "authorization": f"Bearer {token}"},
    )
    assert works.status_code == 200
    await page.goto("/admin/ask_mcp/apitoken/")
    assert token not in await page.content()


# ---------------------------------------------------------------- sign-in attempts


@session_loop
async def test_wrong_passwords_lock_that_sign_in_out_and_no_one_else(web: LiveServer) -> None:
    target = add_user(web, f"locked{uuid.uuid4().hex[:6]}", staff=True)
    other = add_user(web, f"other{uuid.uuid4().hex[:6]}", staff=True)

    async def sign_in(client: httpx2.AsyncClient, path: str, username: str, password: str) -> int:
        await client.get(path)
        answer = await client.post(
            path,
            data={
                "username": username,
                "password": password,
                "csrfmiddlewaretoken": str(client.cookies["csrftoken"]),
            },
        )
        return answer.status_code

    async with httpx2.AsyncClient(base_url=web.base_url, timeout=30) as client:
        wrong = [
            await sign_in(client, "/accounts/login/", target.username, f"guess-{n}")
            for n in range(10)
        ]
        # From now on even the right password is refused, on the inbox's form and the admin's.
        right = await sign_in(client, "/accounts/login/", target.username, target.password)
        admin_right = await sign_in(client, "/admin/login/", target.username, target.password)
    async with httpx2.AsyncClient(base_url=web.base_url, timeout=30) as client:
        others = await sign_in(client, "/accounts/login/", other.username, other.password)
    assert wrong[:9] == [200] * 9  # the form again, saying the password is wrong
    assert wrong[9] == 429 and right == 429 and admin_right == 429
    assert others == 302  # another person at the same address still signs in


# ---------------------------------------------------------------- answering every ask


@session_loop
async def test_a_staff_member_with_only_webhook_permissions_cannot_read_or_answer_asks(
    web: LiveServer, admin: Person
) -> None:
    hooks = add_user(web, f"hooks{uuid.uuid4().hex[:6]}", staff=True, answers_all=False)
    web.manage(
        "shell",
        "-c",
        "from django.contrib.auth.models import Permission, User;"
        f"User.objects.get(username={hooks.username!r}).user_permissions.add("
        "*Permission.objects.filter(codename__endswith='_webhook'))",
    )
    message = f"Private [{uuid.uuid4().hex[:8]}]"
    async with (
        asyncio.timeout(60),
        signed_in_http(web, hooks) as staff_member,
        signed_in_http(web, admin) as answerer,
        calls.client() as http,
        held_call(web.mcp_url, http=http, message=message) as call,
    ):
        page = f"/asks/{uuid.UUID(call.ask_id)}/"
        listed = await staff_member.client.get("/")
        opened = await staff_member.client.get(page)
        posted = await staff_member.answer(call.ask_id, answer="from the webhook admin")
        sent = await answerer.answer(call.ask_id, answer="from the superuser")
        result = await call.result()
    assert listed.status_code == 200 and message not in listed.text
    assert opened.status_code == 403 and posted.status_code == 403
    assert "Sent: the agent has your reply." in page_text(sent.text)
    assert result["result"]["content"][0]["text"] == '{"answer":"from the superuser"}'
