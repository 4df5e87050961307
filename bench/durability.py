"""The durability suite: 1,000 asks pending across the routes, SIGKILL, restart, answer them all.

One daphne process on SQLite (as `make run`) holds asks on the three routes: MRTR questions at
the client's form (the first round's requestState kept), held calls waiting for the browser
inbox (their streams die with the process), and URL-mode questions (their page's URL kept).
The process is killed with SIGKILL and started again on the same port and database. Then every
ask is answered as its route's user would: the MRTR client retries with its state and the
answer; a person answers each inbox ask on its page and the client calls the same again; a
person answers each URL page and the client retries with its consent. The figures: how many
answers reached a call (0 lost is the target), and the time from the restart until every call
has its answer. Run by `python -m bench.run durability`.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import sys
import time
import uuid
from typing import Any

import httpx2

from ask_mcp.web.formfields import PREFIX

MODERN = "2026-07-28"
FORMS: dict[str, Any] = {"elicitation": {"form": {}}}
URLS: dict[str, Any] = {"elicitation": {"url": {}}}
ASK_URL = re.compile(r"/asks/([0-9a-f-]{36})/")


def _body(message: str, caps: dict[str, Any], **params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "user_ask",
            "arguments": {"message": message},
            **params,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientInfo": {"name": "bench-durable", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": caps,
                "progressToken": "p",
            },
        },
    }


def _headers(token: str) -> dict[str, str]:
    return {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "user_ask",
        "authorization": f"Bearer {token}",
    }


async def _reply(response: httpx2.Response) -> dict[str, Any]:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
        parsed: dict[str, Any] = json.loads(data[-1])
        return parsed
    parsed = response.json()
    return parsed


HOLDING = asyncio.Semaphore(32)
"""Held calls being opened at once (each stays open once its ask is reported)."""
LIMIT = asyncio.Semaphore(64)
"""Requests in flight at once outside the held calls: daphne's listen backlog is Twisted's 50,
and 600 connections opened at once were reset (the server is measured, not its backlog)."""


async def _first_round(
    http: httpx2.AsyncClient, url: str, token: str, message: str, caps: dict[str, Any]
) -> dict[str, Any]:
    async with LIMIT:
        response = await http.post(url, json=_body(message, caps), headers=_headers(token))
    result: dict[str, Any] = (await _reply(response))["result"]
    assert result["resultType"] == "input_required", result
    return result


async def _held(
    http: httpx2.AsyncClient,
    url: str,
    token: str,
    message: str,
    ready: asyncio.Queue[tuple[str, str]],
) -> None:
    """A held inbox call: report its ask id, then wait until the connection dies."""
    await HOLDING.acquire()  # opened a few at a time; held open all together
    reported = False
    try:
        async with http.stream(
            "POST", url, json=_body(message, {}), headers=_headers(token)
        ) as response:
            async for line in response.aiter_lines():
                if not reported and (found := ASK_URL.search(line)):
                    await ready.put((message, uuid.UUID(found.group(1)).hex))
                    reported = True
                    HOLDING.release()
    except (httpx2.HTTPError, httpx2.StreamError):
        pass  # the server was killed: the client's connection died with it
    finally:
        if not reported:
            HOLDING.release()


async def _signed_in(base: str, username: str, password: str) -> httpx2.AsyncClient:
    person = httpx2.AsyncClient(base_url=base, timeout=60.0)
    await person.get("/accounts/login/")
    done = await person.post(
        "/accounts/login/",
        data={
            "username": username,
            "password": password,
            "csrfmiddlewaretoken": str(person.cookies["csrftoken"]),
            "next": "/",
        },
    )
    assert done.status_code == 302, done.text
    return person


async def _answer(person: httpx2.AsyncClient, ask_hex: str, answer: str) -> None:
    data = {
        "action": "accept",
        PREFIX + "answer": answer,
        "csrfmiddlewaretoken": str(person.cookies["csrftoken"]),
    }
    response = await person.post(f"/asks/{uuid.UUID(ask_hex)}/", data=data)
    assert response.status_code == 200, response.text[:300]


def _check(reply: dict[str, Any], answer: str) -> bool | str:
    """True when the call got its answer; else what it got instead (for the report)."""
    text = _text(reply)
    return (
        True
        if text == json.dumps({"answer": answer}, separators=(",", ":"))
        else f"{answer}: {text}"
    )


def _say(text: str) -> None:
    print(f"durability: {text}", file=sys.stderr, flush=True)


def _text(reply: dict[str, Any]) -> str:
    return str(reply.get("result", {}).get("content", [{}])[0].get("text", reply))


async def run(
    *,
    base: str,
    token: str,
    username: str,
    password: str,
    counts: dict[str, int],
    process: subprocess.Popen[bytes],
    restart: Any,
) -> dict[str, Any]:
    """Ask, kill, restart (`restart()` returns the new process), answer; the figures."""
    url = base + "/mcp"
    limits = httpx2.Limits(max_connections=None, max_keepalive_connections=100)
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(60.0, read=600.0), limits=limits) as http:
        _say("asking")
        mrtr = await asyncio.gather(
            *(_first_round(http, url, token, f"mrtr {i}", FORMS) for i in range(counts["mrtr"]))
        )
        url_rounds = await asyncio.gather(
            *(_first_round(http, url, token, f"url {i}", URLS) for i in range(counts["url"]))
        )
        ready: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        holders = [
            asyncio.ensure_future(_held(http, url, token, f"inbox {i}", ready))
            for i in range(counts["inbox"])
        ]
        reported = dict([await asyncio.wait_for(ready.get(), 120) for _ in holders])
        inbox_ids = [reported[f"inbox {i}"] for i in range(len(holders))]
        _say(f"{len(mrtr) + len(url_rounds) + len(inbox_ids)} asks pending: SIGKILL")
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        await asyncio.gather(*holders)
        restarted_at = time.monotonic()
        new_process = restart()
        _say("restarted: answering")
        person = await _signed_in(base, username, password)
        try:

            async def finish_mrtr(i: int, first: dict[str, Any]) -> bool | str:
                responses = {"user_ask": {"action": "accept", "content": {"answer": f"m{i}"}}}
                body = _body(
                    f"mrtr {i}", FORMS, inputResponses=responses, requestState=first["requestState"]
                )
                async with LIMIT:
                    reply = await _reply(await http.post(url, json=body, headers=_headers(token)))
                return _check(reply, f"m{i}")

            async def finish_inbox(i: int, ask_hex: str) -> bool | str:
                async with LIMIT:
                    await _answer(person, ask_hex, f"b{i}")
                    reply = await _reply(
                        await http.post(url, json=_body(f"inbox {i}", {}), headers=_headers(token))
                    )
                return _check(reply, f"b{i}")

            async def finish_url(i: int, first: dict[str, Any]) -> bool | str:
                page = first["inputRequests"]["user_ask"]["params"]["url"]
                ask_hex = uuid.UUID(page.rstrip("/").rsplit("/", 1)[1]).hex
                responses = {"user_ask": {"action": "accept"}}
                body = _body(
                    f"url {i}", URLS, inputResponses=responses, requestState=first["requestState"]
                )
                async with LIMIT:
                    await _answer(person, ask_hex, f"u{i}")
                    reply = await _reply(await http.post(url, json=body, headers=_headers(token)))
                return _check(reply, f"u{i}")

            outcomes = await asyncio.gather(
                *(finish_mrtr(i, first) for i, first in enumerate(mrtr)),
                *(finish_inbox(i, ask) for i, ask in enumerate(inbox_ids)),
                *(finish_url(i, first) for i, first in enumerate(url_rounds)),
                return_exceptions=True,
            )
            elapsed = time.monotonic() - restarted_at
        finally:
            await person.aclose()
    delivered = sum(1 for outcome in outcomes if outcome is True)
    failures = [str(outcome)[:200] for outcome in outcomes if outcome is not True][:8]
    return {
        "asks": sum(counts.values()),
        "by_route": counts,
        "delivered": delivered,
        "lost": sum(counts.values()) - delivered,
        "seconds_from_restart_until_every_call_has_its_answer": round(elapsed, 2),
        "first_failures": failures,
        "process": new_process.pid,
    }


__all__ = ["run"]
