"""Operating askserver: health checks a load balancer probes, Prometheus metrics after a known sequence of asks, and logs in both formats without a secret.

Live daphne servers throughout. The log tests start servers as `make run` does (daphne's access
log on, through logging, with no line for /mcp, whose requests have askserver's), and search them for every
secret the run used: the bearer token, each requestState, each answer, the initialize-era
session id, the signed-in person's session cookie and CSRF token, the metrics token. The
readiness tests cut a loopback proxy in front of the machine's PostgreSQL and Redis.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx2
import pytest
import pytest_asyncio
from prometheus_client.parser import text_string_to_metric_families

from tests.support import calls
from tests.support.browser import WEB_CONFIG, Person
from tests.support.calls import answer_round, call_body, first_round
from tests.support.inbox_http import held_call, signed_in_http
from tests.support.live import LiveServer, LiveServers
from tests.support.proxy import HARNESS_SOCKETS, TcpProxy
from tests.support.results import text_of as text
from tests.support.wire import headers_for
from tests.support.workers import shared_workers

pytestmark = HARNESS_SOCKETS  # the proxy's own aborted sockets (tests.support.proxy)

METRICS_TOKEN = "metrics-" + uuid.uuid4().hex
OPS_CONFIG: dict[str, Any] = {
    **WEB_CONFIG,
    "ALLOW_ANONYMOUS_LOOPBACK": False,
    "METRICS_TOKEN": METRICS_TOKEN,
}
"""askserver as shipped (inbox, recorder), tokens required, a metrics token; METRICS comes from
the environment (ASKSERVER_METRICS=1), as a deployment sets it."""


# ---------------------------------------------------------------- health


async def test_liveness_and_readiness_answer_a_probe_without_sign_in_or_token(
    live: LiveServer,
) -> None:
    async with httpx2.AsyncClient(base_url=live.base_url, timeout=30) as http:
        alive = await http.get("/health/live")
        ready = await http.get("/health/ready")
        # A container's probe sends whatever Host it likes; from loopback it is answered.
        # (on the port it listens on: a Host naming another port is refused, issue 28)
        port = live.base_url.rsplit(":", 1)[1]
        foreign = await http.get("/health/ready", headers={"host": f"10.1.2.3:{port}"})
        head = await http.head("/health/live")
        posted = await http.post("/health/ready")
    assert (alive.status_code, alive.json()) == (200, {"status": "ok"})
    assert ready.status_code == 200
    assert ready.json() == {"status": "ok", "checks": {"database": "ok", "channel_layer": "ok"}}
    assert foreign.status_code == 200
    assert (head.status_code, head.content) == (200, b"")
    assert posted.status_code == 405
    assert ready.headers["cache-control"] == "no-store"


async def test_metrics_are_off_unless_enabled(live: LiveServer) -> None:
    async with httpx2.AsyncClient(base_url=live.base_url, timeout=30) as http:
        off = await http.get("/metrics", headers={"authorization": f"Bearer {METRICS_TOKEN}"})
    assert off.status_code == 404
    assert "ASKSERVER_METRICS=1" in off.json()["error"]


@dataclass
class Outage:
    server: LiveServer
    redis: TcpProxy
    postgres: TcpProxy


@pytest.fixture(scope="module")
def outage(live_servers: LiveServers) -> Iterator[Outage]:
    """One worker on PostgreSQL and Redis, each reached through a proxy the tests can cut."""
    with shared_workers(
        live_servers, WEB_CONFIG, count=1, prefix="askmcp-health", cuttable=True
    ) as one:
        yield Outage(one.a, one.redis, one.postgres)


async def _probe(server: LiveServer) -> tuple[int, dict[str, Any], int]:
    async with httpx2.AsyncClient(base_url=server.base_url, timeout=30) as http:
        ready = await http.get("/health/ready")
        alive = await http.get("/health/live")
    return ready.status_code, ready.json(), alive.status_code


async def test_readiness_names_the_database_when_postgresql_is_away(outage: Outage) -> None:
    assert (await _probe(outage.server))[0] == 200
    with outage.postgres.outage():
        status, body, alive = await _probe(outage.server)
    assert (status, alive) == (503, 200)  # not ready, but alive: no restart wanted
    assert body["status"] == "unavailable"
    assert body["failed"] == ["database"]
    assert body["checks"]["channel_layer"] == "ok"
    assert body["checks"]["database"].startswith("unavailable: ")
    assert "postgres" not in json.dumps(body).lower()  # no host, user or password in the reply
    assert (await _probe(outage.server))[0] == 200


async def test_readiness_names_the_channel_layer_when_redis_is_away(outage: Outage) -> None:
    with outage.redis.outage():
        status, body, alive = await _probe(outage.server)
    assert (status, alive) == (503, 200)
    assert body["failed"] == ["channel_layer"]
    assert body["checks"]["database"] == "ok"
    assert "redis://" not in json.dumps(body)
    assert (await _probe(outage.server))[0] == 200


# ---------------------------------------------------------------- a known run, logged


@dataclass
class Run:
    """A server, and what one known sequence of requests against it used and expects."""

    server: LiveServer
    principal: str
    secrets: dict[str, str] = field(default_factory=dict)

    marker: str = ""
    """A path the run requested last: its access line is the log's last of the run."""

    def log_lines(self) -> list[str]:
        """The log's lines once the run's last one is written (the log has its own thread)."""
        deadline = time.monotonic() + 30.0
        while self.marker not in (text := self.server.log()):
            assert time.monotonic() < deadline, f"{self.marker} never logged:\n{text[-3000:]}"
            time.sleep(0.05)  # poll interval: the deadline above bounds the wait
        return [line for line in text.splitlines() if line.strip()]


def _quickstart(server: LiveServer) -> tuple[Person, str]:
    out = server.manage("quickstart", "--url", server.base_url + "/")
    username = re.search(r"Sign in as:\s+(\S+)", out)
    password = re.search(r"Password:\s+(\S+)", out)
    token = re.search(r"MCP token:\s+(askmcp_\S+)", out)
    assert username and password and token, out
    return Person(username.group(1), password.group(1)), token.group(1)


async def _known_sequence(server: LiveServer) -> Run:
    """Two client answers, a client decline, a browser answer, a legacy session, a bad token."""
    person, token = _quickstart(server)
    user_id = server.manage(
        "shell",
        "-c",
        f"from django.contrib.auth.models import User; print(User.objects.get(username={person.username!r}).pk)",
    )
    run = Run(server, f"user:{user_id.strip().splitlines()[-1]}")
    run.secrets["token"] = token
    run.secrets["metrics token"] = METRICS_TOKEN
    auth = {"authorization": f"Bearer {token}"}
    url = server.mcp_url
    async with calls.client() as http:
        http.headers.update(auth)
        for n in range(2):
            answer = f"client-answer-{uuid.uuid4().hex}"
            state = await first_round(http, url, "user_ask", message=f"client {n}?")
            run.secrets[f"requestState {n}"] = state
            run.secrets[f"answer {n}"] = answer
            reply = await answer_round(
                http,
                url,
                "user_ask",
                state,
                {"action": "accept", "content": {"answer": answer}},
                message=f"client {n}?",
            )
            assert answer in text(reply)
        state = await first_round(http, url, "user_ask", message="declined?")
        run.secrets["requestState declined"] = state
        reply = await answer_round(
            http, url, "user_ask", state, {"action": "decline"}, message="declined?"
        )
        assert "declined" in text(reply)
        # An initialize-era session: its id is a secret (it carries the session's authority).
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "legacy", "version": "1"},
            },
        }
        opened = await http.post(
            url,
            json=init,
            headers={
                "content-type": "application/json",
                "accept": "application/json, text/event-stream",
            },
        )
        assert opened.status_code == 200, opened.text
        run.secrets["session id"] = opened.headers["mcp-session-id"]
        listed = await http.post(
            url,
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            headers={
                "content-type": "application/json",
                "accept": "application/json, text/event-stream",
                "mcp-session-id": run.secrets["session id"],
                "mcp-protocol-version": "2025-11-25",
            },
        )
        assert listed.status_code == 200, listed.text
        wrong = f"askmcp_{uuid.uuid4().hex}{uuid.uuid4().hex}"
        run.secrets["unknown token"] = wrong
        body = call_body("user_ask", {"message": "x"})
        refused = await http.post(
            url, json=body, headers={**headers_for(body), "authorization": f"Bearer {wrong}"}
        )
        assert refused.status_code == 401
    browser_answer = f"browser-answer-{uuid.uuid4().hex}"
    run.secrets["browser answer"] = browser_answer
    async with signed_in_http(server, person) as inbox:
        run.secrets["session cookie"] = str(inbox.client.cookies["sessionid"])
        run.secrets["csrf token"] = inbox.csrf
        async with held_call(url, headers=auth, message="browser?") as call:
            answered = await inbox.answer(call.ask_id, answer=browser_answer)
            assert answered.status_code in (200, 302), answered.text
            result = await call.result()
        assert browser_answer in result["result"]["content"][0]["text"]
    run.secrets["password"] = person.password
    # The log is written in the order it was logged: once this request's line is there, every
    # line of the run is.
    run.marker = f"/health/live?end={uuid.uuid4().hex}"
    async with httpx2.AsyncClient(base_url=server.base_url, timeout=30) as http:
        assert (await http.get(run.marker)).status_code == 200
    return run


def _ops_server(live_servers: LiveServers, log_format: str) -> LiveServer:
    return live_servers.start(
        OPS_CONFIG,
        extra_env={"ASKSERVER_LOG_FORMAT": log_format, "ASKSERVER_METRICS": "1"},
        access_log=False,
    )


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def json_run(live_servers: LiveServers) -> AsyncIterator[Run]:
    server = _ops_server(live_servers, "json")
    try:
        yield await _known_sequence(server)
    finally:
        live_servers.stop(server)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def plain_run(live_servers: LiveServers) -> AsyncIterator[Run]:
    server = _ops_server(live_servers, "plain")
    try:
        yield await _known_sequence(server)
    finally:
        live_servers.stop(server)


def _no_secret_in(lines: list[str], run: Run) -> None:
    log = "\n".join(lines)
    leaked = [name for name, secret in run.secrets.items() if secret in log]
    assert leaked == [], f"the log shows {leaked}:\n{log}"


async def test_json_logs_are_one_object_per_line_with_one_line_per_mcp_request(
    json_run: Run,
) -> None:
    lines = json_run.log_lines()
    entries = [json.loads(line) for line in lines]  # every line is one JSON object
    requests = [e for e in entries if e["logger"] == "ask_mcp.requests"]
    calls_logged = [e for e in requests if e["method"] == "tools/call"]
    outcomes = [e["outcome"] for e in calls_logged]
    assert outcomes.count("input_required") == 3
    assert outcomes.count("ok") == 4  # two answers, a decline, the browser answer
    assert "http 401" in [e["outcome"] for e in requests]
    for entry in calls_logged:
        assert entry["tool"] == "user_ask"
        assert entry["level"] == "INFO"
        assert isinstance(entry["duration_ms"], float) and entry["duration_ms"] >= 0
        if entry["outcome"] != "http 401":
            assert entry["principal"] == json_run.principal
    assert {"initialize", "tools/list"} <= {e["method"] for e in requests}
    _no_secret_in(lines, json_run)


async def test_plain_logs_carry_the_same_request_lines_and_no_secret(plain_run: Run) -> None:
    lines = plain_run.log_lines()
    request_lines = [line for line in lines if " ask_mcp.requests: " in line]
    assert (
        sum(
            f"tools/call user_ask by {plain_run.principal}: input_required in " in line
            for line in request_lines
        )
        == 3
    )
    assert (
        sum(
            f"tools/call user_ask by {plain_run.principal}: ok in " in line
            for line in request_lines
        )
        == 4
    )
    _no_secret_in(lines, plain_run)


async def test_an_mcp_request_has_one_line_and_a_page_has_the_servers_access_line(
    plain_run: Run,
) -> None:
    # daphne runs as `make run` serves it (verbosity 1: its access log on). It used to write
    # its own line for every /mcp request beside askserver's, on the event loop.
    lines = plain_run.log_lines()
    mcp_lines = [line for line in lines if "/mcp" in line or " ask_mcp.requests: " in line]
    assert mcp_lines and all(" ask_mcp.requests: " in line for line in mcp_lines), mcp_lines
    assert any(
        " daphne.access: " in line and f"GET {plain_run.marker}" in line for line in lines
    ), "the requests askserver does not log keep daphne's access line, through logging"


# ---------------------------------------------------------------- metrics


def _samples(text_format: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(text_format):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


async def _scrape(server: LiveServer, token: str | None = METRICS_TOKEN) -> httpx2.Response:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(base_url=server.base_url, timeout=30) as http:
        return await http.get("/metrics", headers=headers)


async def test_metrics_need_their_own_token(json_run: Run) -> None:
    assert (await _scrape(json_run.server, None)).status_code == 401
    assert (await _scrape(json_run.server, "wrong")).status_code == 401
    assert (await _scrape(json_run.server, json_run.secrets["token"])).status_code == 401


async def test_metrics_count_a_known_sequence_of_asks(json_run: Run) -> None:
    server = json_run.server
    scraped = await _scrape(server)
    assert scraped.status_code == 200
    assert scraped.headers["content-type"].startswith("text/plain; version=")
    got = _samples(scraped.text)

    def value(name: str, **labels: str) -> float:
        return got.get((name, tuple(sorted(labels.items()))), 0.0)

    assert value("askserver_asks_total", route="client", outcome="accepted") == 2
    assert value("askserver_asks_total", route="client", outcome="declined") == 1
    assert value("askserver_asks_total", route="browser", outcome="accepted") == 1
    assert value("askserver_time_to_answer_seconds_count", route="client") == 3
    assert value("askserver_time_to_answer_seconds_count", route="browser") == 1
    assert value("askserver_mcp_requests_total", method="tools/call", result="input_required") == 3
    assert value("askserver_mcp_requests_total", method="tools/call", result="ok") == 4
    assert value("askserver_mcp_requests_total", method="POST", result="http_401") >= 1
    assert value("askserver_mcp_requests_total", method="initialize", result="ok") == 1
    assert value("askserver_asks_pending", route="browser") == 0
    assert value("askserver_elicitation_waiting") == 0
    assert value("askserver_elicitation_capacity") == 64
    assert value("askserver_recorder_write_failures_total") == 0
    assert ("askserver_notification_failures_total", ()) in got or value(
        "askserver_notification_failures_total", channel="webhook"
    ) == 0
    assert value("askserver_database_up") == 1

    # A question waiting in the inbox shows in the table and, once, in the database gauge.
    async with held_call(
        server.mcp_url,
        headers={"authorization": f"Bearer {json_run.secrets['token']}"},
        message="still waiting?",
    ):
        waiting = _samples((await _scrape(server)).text)
    assert waiting[("askserver_asks_pending", (("route", "browser"),))] == 1
    assert waiting[("askserver_elicitation_waiting", ())] == 1
    assert [key for key in waiting if key[0] == "askserver_asks_pending"].count(
        ("askserver_asks_pending", (("route", "browser"),))
    ) == 1
    _no_secret_in(json_run.log_lines(), json_run)


# ---------------------------------------------------------------- metrics over several workers


@dataclass
class Workers:
    a: LiveServer
    b: LiveServer
    token: str


@pytest.fixture(scope="module")
def workers(
    live_servers: LiveServers, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Workers]:
    """Two workers on PostgreSQL and Redis sharing one PROMETHEUS_MULTIPROC_DIR."""
    metrics = {
        "ASKSERVER_METRICS": "1",
        "ASKSERVER_METRICS_TOKEN": METRICS_TOKEN,
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path_factory.mktemp("prometheus")),
    }
    with shared_workers(live_servers, OPS_CONFIG, prefix="askmcp-metrics", env=metrics) as both:
        _, token = _quickstart(both.a)
        yield Workers(both.a, both.b, token)


async def test_with_several_workers_a_scrape_of_one_sums_every_workers_counters(
    workers: Workers, live_servers: LiveServers
) -> None:
    auth = {"authorization": f"Bearer {workers.token}"}
    async with calls.client() as http:
        http.headers.update(auth)
        for server in (workers.a, workers.b, workers.b):
            state = await first_round(http, server.mcp_url, "user_ask", message="which?")
            await answer_round(
                http,
                server.mcp_url,
                "user_ask",
                state,
                {"action": "accept", "content": {"answer": "x"}},
                message="which?",
            )
    async with held_call(workers.b.mcp_url, headers=auth, message="held on b"):
        got = _samples((await _scrape(workers.a)).text)
    asks = ("askserver_asks_total", (("outcome", "accepted"), ("route", "client")))
    assert got[asks] == 3  # one answered on a, two on b: a's scrape counts all three
    calls_ok = ("askserver_mcp_requests_total", (("method", "tools/call"), ("result", "ok")))
    assert got[calls_ok] == 3
    # Read from the database by the worker scraped: b's waiting question, counted once.
    assert got[("askserver_asks_pending", (("route", "browser"),))] == 1
    # Per-worker gauges are summed over the live workers: two tables of 64 places.
    assert got[("askserver_elicitation_capacity", ())] == 128
    live_servers.stop(workers.b)
    after = _samples((await _scrape(workers.a)).text)
    assert after[("askserver_elicitation_capacity", ())] == 64  # b's gauges left with b
    assert after[asks] == 3  # its counters stay: a counter never goes down
