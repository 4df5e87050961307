"""The browser-fallback suites: how fast a submitted form resumes a held call, and many held at once.

A held call is a `tools/call` from a client without form elicitation: the server keeps the
response open as SSE while the question waits in the inbox. This module is the load side,
run in its own process pinned to the client CPU; it prints one JSON line of results.

    resume: one held call at a time; the time from sending the answer form (as a signed-in
            person's browser would, with session cookie and CSRF token) to the held call's
            result frame. `--answer-url` may name another worker than `--mcp-url`.
    held:   `--calls` held calls open at once, keep-alive comments counted on every stream,
            then each answered through the form with its own answer and checked.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2

from ask_mcp.web.formfields import PREFIX

LEGACY_FREE_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench-browser", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},  # no form elicitation: the inbox answers
}
ANSWER_URL = re.compile(r"/asks/([0-9a-f-]{36})/")
FIELD = PREFIX + "answer"
"""The input of the one field a question without questions has."""


class Person:
    """A signed-in browser session: the session cookie and the CSRF token its forms carry."""

    def __init__(self, client: httpx2.AsyncClient, base_url: str) -> None:
        self.client = client
        self.base_url = base_url
        self.csrf = ""

    async def sign_in(self, username: str, password: str) -> None:
        page = await self.client.get(f"{self.base_url}/accounts/login/")
        page.raise_for_status()
        self.csrf = self.client.cookies["csrftoken"]
        done = await self.client.post(
            f"{self.base_url}/accounts/login/",
            data={"username": username, "password": password, "csrfmiddlewaretoken": self.csrf},
        )
        if done.status_code != 302:
            raise RuntimeError(f"sign-in failed: {done.status_code} {done.text[:300]}")
        self.csrf = self.client.cookies["csrftoken"]  # rotated at sign-in

    async def answer(self, ask_id: str, text: str) -> None:
        reply = await self.client.post(
            f"{self.base_url}/asks/{ask_id}/",
            data={"csrfmiddlewaretoken": self.csrf, "action": "accept", FIELD: text},
        )
        if reply.status_code >= 400:
            raise RuntimeError(f"answer refused: {reply.status_code} {reply.text[:300]}")


class HeldCall:
    """One held `user_ask` call, read frame by frame."""

    def __init__(self, lines: AsyncIterator[str], request_id: int) -> None:
        self.lines = lines
        self.request_id = request_id
        self.keepalives = 0

    async def frame(self) -> dict[str, Any]:
        """The next JSON-RPC message on the stream; keep-alive comments are counted."""
        async for line in self.lines:
            if line.startswith(":"):
                self.keepalives += 1
            elif line.startswith("data:"):
                message: dict[str, Any] = json.loads(line[5:])
                return message
        raise RuntimeError("the stream ended without a result")

    async def ask_id(self) -> str:
        message = await self.frame()
        found = ANSWER_URL.search(json.dumps(message))
        if not found:
            raise RuntimeError(f"expected progress naming the answer URL, got {message}")
        return found.group(1)

    async def result(self) -> dict[str, Any]:
        while True:
            message = await self.frame()
            if message.get("id") == self.request_id:
                if "result" not in message:
                    raise RuntimeError(f"the held call failed: {message}")
                result: dict[str, Any] = message["result"]
                return result


@asynccontextmanager
async def held_call(
    client: httpx2.AsyncClient, mcp_url: str, token: str, n: int
) -> AsyncIterator[HeldCall]:
    body = {
        "jsonrpc": "2.0",
        "id": n,
        "method": "tools/call",
        "params": {
            "name": "user_ask",
            "arguments": {"message": f"Held question {n}?"},
            "_meta": {**LEGACY_FREE_META, "progressToken": f"p{n}"},
        },
    }
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "user_ask",
    }
    async with client.stream("POST", mcp_url, json=body, headers=headers) as response:
        if response.status_code != 200:
            raise RuntimeError(f"held call refused: {response.status_code}")
        yield HeldCall(response.aiter_lines(), n)


def _expect_answer(result: dict[str, Any], text: str) -> None:
    got = result["content"][0]["text"]
    if result.get("isError") or json.loads(got) != {"answer": text}:
        raise RuntimeError(f"held call resumed with {result}, expected the answer {text!r}")


async def resume(args: argparse.Namespace) -> dict[str, Any]:
    latencies: list[float] = []
    timeout = httpx2.Timeout(30.0)
    async with (
        httpx2.AsyncClient(timeout=timeout) as mcp,
        httpx2.AsyncClient(timeout=timeout) as browser,
    ):
        person = Person(browser, args.answer_url)
        await person.sign_in(args.username, args.password)
        for n in range(args.warmup + args.calls):
            async with held_call(mcp, args.mcp_url, args.token, n) as call:
                ask_id = await call.ask_id()
                text = f"resume {n}"
                started = time.perf_counter()
                posting = asyncio.ensure_future(person.answer(ask_id, text))
                result = await call.result()
                resumed = time.perf_counter()
                await posting
            _expect_answer(result, text)
            if n >= args.warmup:
                latencies.append((resumed - started) * 1000)
    latencies.sort()
    return {
        "calls": len(latencies),
        "resume_p50_ms": round(statistics.median(latencies), 3),
        "resume_p99_ms": round(latencies[int(0.99 * (len(latencies) - 1))], 3),
        "resume_max_ms": round(latencies[-1], 3),
    }


async def held(args: argparse.Namespace) -> dict[str, Any]:
    limits = httpx2.Limits(max_connections=args.calls + 10, max_keepalive_connections=0)
    timeout = httpx2.Timeout(120.0)
    async with (
        httpx2.AsyncClient(timeout=timeout, limits=limits) as mcp,
        httpx2.AsyncClient(timeout=timeout) as browser,
    ):
        person = Person(browser, args.answer_url)
        await person.sign_in(args.username, args.password)
        all_open = asyncio.Event()
        opened: list[str] = []
        answers: dict[str, str] = {}
        keepalives: list[int] = []

        # Calls open 50 at a time (daphne listens with a backlog of 50): all are held at once.
        opening = asyncio.Semaphore(50)

        async def one(n: int) -> None:
            await opening.acquire()
            async with held_call(mcp, args.mcp_url, args.token, n) as call:
                ask_id = await call.ask_id()
                opening.release()
                answers[ask_id] = f"held {n}"
                opened.append(ask_id)
                if len(opened) == args.calls:
                    all_open.set()
                _expect_answer(await call.result(), f"held {n}")
                keepalives.append(call.keepalives)

        started = time.perf_counter()
        calls = [asyncio.ensure_future(one(n)) for n in range(args.calls)]
        await asyncio.wait_for(all_open.wait(), timeout=300)
        opened_s = time.perf_counter() - started
        rss_held = _rss_kb(args.server_pid) if args.server_pid else None
        # Hold them all through several keep-alive periods, then answer every one.
        await asyncio.sleep(args.hold)  # the benchmark holds on purpose: it is not the suite
        semaphore = asyncio.Semaphore(16)

        async def answer(ask_id: str) -> None:
            async with semaphore:
                await person.answer(ask_id, answers[ask_id])

        answering = time.perf_counter()
        await asyncio.gather(*(answer(ask_id) for ask_id in opened))
        await asyncio.wait_for(asyncio.gather(*calls), timeout=300)
        answered_s = time.perf_counter() - answering
    return {
        "held_calls": args.calls,
        "resumed_correctly": len(keepalives),
        "seconds_to_open_all": round(opened_s, 2),
        "seconds_to_answer_all": round(answered_s, 2),
        "keepalives_per_call_min": min(keepalives),
        "keepalives_per_call_median": statistics.median(keepalives),
        "rss_while_held_kb": rss_held,
    }


def _rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("suite", choices=["resume", "held"])
    parser.add_argument("--mcp-url", required=True)
    parser.add_argument("--answer-url", required=True, help="the site root the person answers on")
    parser.add_argument("--token", required=True)
    parser.add_argument("--username", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--hold", type=float, default=3.0, help="seconds to hold (held suite)")
    parser.add_argument("--server-pid", type=int, default=None)
    parser.add_argument("--cpu", type=int, default=None, help="pin this process to one CPU")
    args = parser.parse_args()
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    suite = resume if args.suite == "resume" else held
    print(json.dumps(asyncio.run(suite(args))))


if __name__ == "__main__":
    main()
