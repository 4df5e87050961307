"""Retention: every ended ask goes ASK_RETENTION_DAYS after its expiry, with its history, reach row and deliveries; none goes early.

The sweep runs for real (`manage.py expire_asks`, the same sweep the server runs every
SWEEP_SECONDS) against a live server's SQLite database and a PostgreSQL one, on rows written as
the server writes them (tests/support/retention.py). What is gone reads 404 on the ask's page;
what is kept is still there with every row that refers to it.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

import httpx2
import pytest
from django.core.checks import run_checks
from django.test import override_settings
from django.utils import timezone

from ask_mcp.models import Ask
from ask_mcp.records.retention import deletable, purge_answers
from askserver import environment
from tests.support import calls
from tests.support.browser import WEB_CONFIG, Person
from tests.support.inbox_http import signed_in_http
from tests.support.live import ROOT, LiveServer, LiveServers
from tests.support.retention import DAY
from tests.support.services import postgres_database, require_services

PAST = 91 * DAY
"""A day past the default retention (90 days) after an ask's expiry."""
CASES: dict[str, dict[str, Any]] = {
    # Gone: ended, expired more than 90 days ago, whatever the way it ended.
    "accepted": {"status": "accepted", "expired_ago": PAST, "collected_ago": PAST},
    "declined": {"status": "declined", "expired_ago": PAST, "collected_ago": PAST},
    "cancelled": {"status": "cancelled", "expired_ago": PAST, "collected_ago": PAST},
    "expired": {"status": "expired", "expired_ago": PAST},
    "withdrawn": {"status": "withdrawn", "expired_ago": PAST},
    "never_answered": {"status": "pending", "expired_ago": PAST},  # the sweep expires it first
    "never_collected": {"status": "accepted", "expired_ago": PAST},
    "task_purged": {"status": "expired", "expired_ago": PAST, "task_for": -60.0},
    # Kept.
    "inside_retention": {"status": "accepted", "expired_ago": 89 * DAY, "collected_ago": 89 * DAY},
    "pending_for_months": {"status": "pending", "expired_ago": -DAY, "created_ago": 200 * DAY},
    "collected_late": {"status": "accepted", "expired_ago": PAST, "collected_ago": DAY},
    "task_alive": {"status": "expired", "expired_ago": PAST, "task_for": 3600.0},
}
GONE = {"accepted", "declined", "cancelled", "expired", "withdrawn", "never_answered"} | {
    "never_collected",
    "task_purged",
}
ORPHANS = {"orphan_old": False, "orphan_bad_id_old": False, "orphan_recent": True}
"""Webhook-log rows whose ask is gone: whether each is left (only the recent one)."""
NOTHING = {"ask": None, "events": 0, "reach": 0, "deliveries": 0, "webhook_log": 0}
KEPT = {"events": 2, "reach": 1, "deliveries": 2, "webhook_log": 1}
"""A kept ask's rows: its history (two events or more), reach row, mail and webhook Delivery,
and its webhook-log row."""


def manage(env: Mapping[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def seed(env: Mapping[str, str], cases: Mapping[str, Any]) -> dict[str, str]:
    code = f"import json; from tests.support.retention import seed; seed(json.loads({json.dumps(cases)!r}))"
    ids: dict[str, str] = json.loads(manage(env, "shell", "-c", code).splitlines()[-1])
    return ids


def census(env: Mapping[str, str], ids: Mapping[str, str]) -> dict[str, Any]:
    code = f"import json; from tests.support.retention import census; census(json.loads({json.dumps(ids)!r}))"
    left: dict[str, Any] = json.loads(manage(env, "shell", "-c", code).splitlines()[-1])
    return left


def assert_swept(
    left: Mapping[str, Any],
    cases: Mapping[str, Any],
    gone: set[str],
    orphans: Mapping[str, bool] = ORPHANS,
) -> None:
    """Each gone case has no row left; each kept case has its ask and all its rows."""
    for case in cases:
        if case in gone:
            assert left[case] == NOTHING, case
        else:
            assert left[case]["ask"] is not None, case
            counts = {k: v for k, v in left[case].items() if k != "ask"}
            assert counts["events"] >= 2, case
            assert {**counts, "events": 2} == KEPT, case
    for case, kept in orphans.items():
        assert left[case] is kept, case


def deleted_count(out: str) -> int:
    found = re.search(r"^Deleted (\d+) ended ask\(s\) whose expiry is more than 90 days old\.$",
                      out, re.MULTILINE)  # fmt: skip
    assert found, out
    return int(found.group(1))


@pytest.mark.asyncio(loop_scope="session")
async def test_every_ended_ask_goes_with_its_rows_after_the_retention_and_none_early(
    web: LiveServer, admin: Person
) -> None:
    ids = seed(web.env, CASES)
    out = manage(web.env, "expire_asks")
    # The server's own sweeper may have taken some first (every 0.5 s here): the same rules.
    assert deleted_count(out) <= len(GONE)
    assert_swept(census(web.env, ids), CASES, GONE)
    async with signed_in_http(web, admin) as person:
        for case in CASES:
            page = await person.client.get(f"/asks/{uuid.UUID(ids[case])}/")
            assert page.status_code == (404 if case in GONE else 200), case
    assert manage(web.env, "expire_asks").count("Deleted 0 ended ask(s)") == 1  # nothing twice


SHORT = {**WEB_CONFIG, "ASK_RETENTION_DAYS": 0.001, "DETACHED_GRACE_SECONDS": 600.0}
"""A retention of 86.4 seconds, shorter than the 600 seconds an uncollected decision is kept."""
SHORT_CASES: dict[str, dict[str, Any]] = {
    "uncollected_in_grace": {"status": "accepted", "expired_ago": 300.0},
    "declined_uncollected_in_grace": {"status": "declined", "expired_ago": 300.0},
    "collected_same_age": {"status": "accepted", "expired_ago": 300.0, "collected_ago": 300.0},
    "expired_same_age": {"status": "expired", "expired_ago": 300.0},
    "uncollected_past_grace": {"status": "accepted", "expired_ago": 900.0},
    "inside_retention": {"status": "withdrawn", "expired_ago": 30.0},
}
SHORT_GONE = {"collected_same_age", "expired_same_age", "uncollected_past_grace"}


@pytest.mark.asyncio(loop_scope="session")
async def test_the_servers_own_sweeper_keeps_an_uncollected_decision_past_a_shorter_retention(
    live_servers: LiveServers,
) -> None:
    """Driven by the live server's background sweeper (every 0.5 s here), not by the command:
    the probe waits for one sweep that starts after the rows are written (10 s at most)."""
    server = live_servers.start(SHORT)
    try:
        ids = seed(server.env, SHORT_CASES)
        async with httpx2.AsyncClient(timeout=30) as http:
            assert (await calls.probe(http, server.mcp_url, "next_sweep"))["swept"] is True
        assert_swept(census(server.env, ids), SHORT_CASES, SHORT_GONE)
        server.log_once(r"deleted [1-3] ended ask\(s\) past ASK_RETENTION_DAYS")
    finally:
        live_servers.stop(server)


@pytest.fixture(scope="module")
def postgres_env(live_servers: LiveServers) -> Iterator[dict[str, str]]:
    require_services()
    with postgres_database() as database_url:
        env = {
            **live_servers.environment(WEB_CONFIG, live_servers.workdir / "unused.sqlite3"),
            "DATABASE_URL": database_url,
        }
        manage(env, "migrate", "--noinput", "-v0")
        yield env


def test_retention_deletes_the_same_rows_on_postgresql(postgres_env: dict[str, str]) -> None:
    ids = seed(postgres_env, CASES)
    assert deleted_count(manage(postgres_env, "expire_asks")) == len(GONE)
    assert_swept(census(postgres_env, ids), CASES, GONE)


def test_retention_on_postgresql_reads_ended_asks_through_their_index(
    postgres_env: dict[str, str],
) -> None:
    """With planner statistics saying the table is large, the retention query uses the
    ended-asks index rather than reading every ask (PostgreSQL's plan, asked for by EXPLAIN)."""
    code = (
        "import datetime as dt, json; from django.db import connection;"
        "from ask_mcp.records.retention import deletable;"
        "sql, params = deletable(dt.datetime.now(dt.UTC), 90, 600).values_list('pk')[:500]"
        ".query.sql_with_params();"
        "c = connection.cursor(); c.execute('SET enable_seqscan = off');"
        "c.execute('EXPLAIN ' + sql, params); print(json.dumps([r[0] for r in c.fetchall()]))"
    )
    plan = json.loads(manage(postgres_env, "shell", "-c", code).splitlines()[-1])
    assert any("ask_ended_expires" in line for line in plan), plan


@pytest.mark.django_db
def test_retention_on_sqlite_reads_ended_asks_through_their_index() -> None:
    """SQLite's plan for the retention query searches the ended-asks index by expiry, and the
    tasks' ask index for each candidate, instead of reading every ask."""
    from django.db import connection

    query = deletable(dt.datetime.now(dt.UTC), 90, 600).values_list("pk")[:200].query
    statement, params = query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + statement, params)
        plan = [row[-1] for row in cursor.fetchall()]
    assert "SEARCH ask_mcp_ask USING INDEX ask_ended_expires (expires_at<?)" in plan, plan
    assert not any(line.startswith("SCAN") for line in plan), plan


REFUSE_ONE_DELETE = """
CREATE FUNCTION retention_refuse() RETURNS trigger AS $$
BEGIN RAISE EXCEPTION 'the test refuses to delete %', OLD.message; END $$ LANGUAGE plpgsql;
CREATE TRIGGER retention_refuse BEFORE DELETE ON ask_mcp_ask FOR EACH ROW
WHEN (OLD.message = 'retention: declined') EXECUTE FUNCTION retention_refuse();
"""
ALLOW_DELETES = "DROP FUNCTION IF EXISTS retention_refuse() CASCADE"


def sql(env: Mapping[str, str], statement: str) -> None:
    code = f"from django.db import connection; connection.cursor().execute({statement!r})"
    manage(env, "shell", "-c", code)


def test_a_batch_the_database_refuses_deletes_nothing_and_the_next_sweep_takes_it(
    postgres_env: dict[str, str],
) -> None:
    """A fault inside a batch (here a trigger refusing one ask's DELETE, after its events,
    reach row and deliveries were deleted) rolls the whole batch back: no ask is left without
    its rows, and the sweep once the fault is gone deletes them all."""
    cases = {case: CASES[case] for case in ("accepted", "declined", "expired", "inside_retention")}
    ids = seed(postgres_env, cases)
    sql(postgres_env, REFUSE_ONE_DELETE)
    try:
        failed = subprocess.run(
            [sys.executable, "manage.py", "expire_asks"],
            cwd=ROOT,
            env=postgres_env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert failed.returncode != 0 and "the test refuses to delete retention: declined" in (
            failed.stderr
        ), failed.stderr
        untouched = dict.fromkeys(ORPHANS, True)
        assert_swept(census(postgres_env, ids), cases, gone=set(), orphans=untouched)
    finally:
        sql(postgres_env, ALLOW_DELETES)
    assert deleted_count(manage(postgres_env, "expire_asks")) == 3
    assert_swept(census(postgres_env, ids), cases, gone={"accepted", "declined", "expired"})


@pytest.mark.parametrize("text, days", [("30", 30), ("0.5", 0.5), ("none", None), ("", 90)])
def test_the_retention_is_read_from_askserver_ask_retention_days(
    text: str, days: float | None
) -> None:
    assert environment.get("ASK_RETENTION_DAYS", {"ASKSERVER_ASK_RETENTION_DAYS": text}) == days


@pytest.mark.parametrize(
    "setting, check_id",
    [
        ({"ASK_RETENTION_DAYS": 0}, "ask_mcp.E080"),
        ({"ASK_RETENTION_DAYS": "90d"}, "ask_mcp.E080"),
        ({"ASK_RETENTION_DAYS": True}, "ask_mcp.E080"),
        ({"ASK_RETENTION_DAYS": 30, "ANSWER_RETENTION_DAYS": 30}, "ask_mcp.W080"),
    ],
)
def test_bad_retention_settings_are_reported(setting: object, check_id: str) -> None:
    with override_settings(ASK_MCP=setting):
        assert check_id in [message.id for message in run_checks(databases=[])]


@pytest.mark.parametrize("setting", [{"ASK_RETENTION_DAYS": None}, {"ANSWER_RETENTION_DAYS": 7}])
def test_keeping_every_ask_or_clearing_answers_sooner_passes_the_checks(setting: object) -> None:
    with override_settings(ASK_MCP=setting):
        ids = [message.id for message in run_checks(databases=[])]
    assert "ask_mcp.E080" not in ids and "ask_mcp.W080" not in ids


@pytest.mark.django_db(transaction=True)
def test_answer_retention_clears_no_answer_a_call_may_still_collect() -> None:
    now = timezone.now()
    fields: dict[str, Any] = {
        "created": now - dt.timedelta(days=40),
        "message": "?",
        "schema": {},
        "tool": "user_ask",
        "route": "browser",
        "status": "accepted",
        "answered_at": now - dt.timedelta(days=31),
    }
    waiting = Ask.objects.create(
        **fields, answer={"a": 1}, expires_at=now - dt.timedelta(minutes=5)
    )
    left = Ask.objects.create(**fields, answer={"a": 2}, expires_at=now - dt.timedelta(minutes=15))
    assert purge_answers(now, 30, grace=600.0) == 1  # kept 10 minutes past the ask's expiry
    waiting.refresh_from_db()
    left.refresh_from_db()
    assert (waiting.answer, left.answer) == ({"a": 1}, None)
