"""The tasks suite's client: 100,000 `user_ask` tasks waiting on a person, then tasks/get against an MRTR round; knows no server internals.

It speaks the Tasks extension over keep-alive HTTP/1.1 (bench/load.py's connection) to a server
:mod:`bench.run` started, and checks every handle and every tasks/get against the extension's
shapes (tests/support/tasks.py). Tasks are spread over principals, PER_PRINCIPAL each, so the
server runs with its shipped TASK_LIMIT. The latency phase interleaves, on the same connections,
a tasks/get of a random waiting task and a full MRTR call (two rounds), so a slow spell on the
shared machine falls on both alike. Run by `python -m bench.run tasks`.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import subprocess
import sys
import time
from typing import Any, Final
from urllib.parse import urlsplit

from bench.load import META, Connection, ask_once
from tests.support.tasks import EXTENSION, assert_detailed, assert_handle

PER_PRINCIPAL: Final = 100
"""Tasks per principal: the shipped TASK_LIMIT, so the server is measured as it ships."""
CREATING: Final = 32
"""Connections creating tasks at once (daphne's listen backlog is 50: stay under it)."""
TIMING: Final = 4
"""Connections in the latency phase (the throughput suite's 4 clients)."""
TASK_META: Final = {
    **META,
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {EXTENSION: {}},
        "elicitation": {"form": {}},
    },
}
"""A client that declares the extension and shows forms: its tasks wait `input_required`, the
form their input request, and each ask is a card in the inbox as well."""

ISSUE_TOKENS: Final = """
import json
from django.contrib.auth.models import User
from ask_mcp.team.auth import issue_token
users = User.objects.bulk_create([User(username=f"tasks-{n}") for n in range(COUNT)])
print(json.dumps([issue_token(user)[1] for user in users]))
"""
"""One shell run making `count` users (no password: none signs in) with a token each."""


def issue_tokens(manage: list[str], cwd: str, env: dict[str, str], count: int) -> list[str]:
    """`count` principals' tokens, made by the product's own `issue_token`."""
    done = subprocess.run(
        [*manage, "shell", "-c", ISSUE_TOKENS.replace("COUNT", str(count))],
        cwd=cwd,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    tokens: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return tokens


def _say(text: str) -> None:
    print(f"tasks: {text}", file=sys.stderr, flush=True)


def _connection(url: str) -> Connection:
    parts = urlsplit(url)
    return Connection(parts.hostname or "127.0.0.1", parts.port or 80, parts.path, None)


async def _ask(conn: Connection, token: str, n: int) -> str:
    body = {
        "jsonrpc": "2.0",
        "id": n,
        "method": "tools/call",
        "params": {
            "name": "user_ask",
            "arguments": {"message": f"May task {n} go ahead?"},
            "_meta": TASK_META,
        },
    }
    handle = assert_handle(await conn.post(body, "user_ask", token=token))
    assert handle["status"] == "input_required", handle
    task_id: str = handle["taskId"]
    return task_id


async def _get(conn: Connection, token: str, task_id: str, n: int) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": n,
        "method": "tasks/get",
        "params": {"taskId": task_id, "_meta": TASK_META},
    }
    reply = await conn.post(body, task_id, method="tasks/get", token=token)
    return assert_detailed(reply)


async def _cancel(conn: Connection, token: str, task_id: str, n: int) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": n,
        "method": "tasks/cancel",
        "params": {"taskId": task_id, "_meta": TASK_META},
    }
    reply = await conn.post(body, task_id, method="tasks/cancel", token=token)
    assert reply["result"]["resultType"] == "complete", reply


async def warm(url: str, token: str, tokens: list[str], count: int = 50) -> None:
    """Every task path once over (create, get, cancel: the warm-up's tasks end, so they hold
    no place under the limit), and every principal's token looked up once (the token cache
    is per principal, not per task)."""
    conn = _connection(url)
    await conn.open()
    try:
        for n in range(count):
            task_id = await _ask(conn, token, n)
            await _get(conn, token, task_id, n)
            await _cancel(conn, token, task_id, n)
        for n, each in enumerate(tokens):
            body = {"jsonrpc": "2.0", "id": n, "method": "tools/list", "params": {"_meta": META}}
            await conn.post(body, "", method="tools/list", token=each)
    finally:
        conn.writer.close()


async def create(url: str, tokens: list[str], count: int) -> tuple[list[tuple[str, str]], float]:
    """`count` waiting tasks, PER_PRINCIPAL to a token; (token, taskId) each, and the seconds."""
    jobs = iter([(tokens[n // PER_PRINCIPAL], n) for n in range(count)])
    made: list[tuple[str, str]] = []
    started = time.monotonic()

    async def worker() -> None:
        conn = _connection(url)
        await conn.open()
        try:
            for token, n in jobs:
                made.append((token, await _ask(conn, token, n)))
                if len(made) % 10_000 == 0:
                    rate = len(made) / (time.monotonic() - started)
                    _say(f"{len(made):,} tasks waiting ({rate:.0f} created/s)")
        finally:
            conn.writer.close()

    await asyncio.gather(*(worker() for _ in range(CREATING)))
    return made, time.monotonic() - started


def _percentiles(seconds: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in seconds)
    return {
        "count": len(ms),
        "p50_ms": round(statistics.median(ms), 3),
        "p99_ms": round(ms[int(0.99 * (len(ms) - 1))], 3),
        "max_ms": round(ms[-1], 3),
    }


async def latency(
    url: str, token: str, waiting: list[tuple[str, str]], calls: int, warmup: int = 200
) -> dict[str, Any]:
    """tasks/get of a random waiting task and a full MRTR call, in turn on each of TIMING
    connections, `calls` of each in all (after `warmup` of each, not counted)."""
    gets: list[float] = []
    rounds: list[float] = []
    pick = random.Random(17)
    counter = iter(range(1, 10**9))

    async def worker(share: int, measure: bool) -> None:
        conn = _connection(url)
        await conn.open()
        conn.auth = f"Authorization: Bearer {token}\r\n"  # the MRTR calls' principal
        try:
            for _ in range(share):
                owner, task_id = pick.choice(waiting)
                start = time.perf_counter()
                task = await _get(conn, owner, task_id, next(counter))
                took = time.perf_counter() - start
                assert task["status"] == "input_required", task
                await ask_once(conn, "user_ask", next(counter), rounds if measure else [])
                if measure:
                    gets.append(took)
        finally:
            conn.writer.close()

    await asyncio.gather(*(worker(warmup // TIMING, False) for _ in range(TIMING)))
    await asyncio.gather(*(worker(calls // TIMING, True) for _ in range(TIMING)))
    get, rnd = _percentiles(gets), _percentiles(rounds)
    return {
        "tasks_get": get,
        "mrtr_round": rnd,
        "get_over_round_p50": round(get["p50_ms"] / rnd["p50_ms"], 2),
        "get_over_round_p99": round(get["p99_ms"] / rnd["p99_ms"], 2),
    }


__all__ = ["PER_PRINCIPAL", "create", "issue_tokens", "latency", "warm"]
