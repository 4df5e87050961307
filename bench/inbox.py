"""The inbox under load: its page with 1,000 pending asks against 10, and a new ask reaching 100 open sockets.

inbox_page: each size gets a fresh SQLite database (migrated, one staff user, N pending browser asks), then
the inbox page is requested through Django's test client, which runs the whole view, template
and middleware stack without a socket: what is timed is the server's own work. The median of
ROUNDS requests per size is reported with the ratio; the issue's bound is a ratio under 3.

fan_out: one daphne server; a signed-in chromium page opens 1, then 100, inbox sockets; each
new ask is timed from the moment its `tools/call` is sent to its card's arrival on every socket
(the same machine's clock on both sides), and p50/p99 are reported per socket count.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
SIZES: Final = (10, 1000)
"""The two inbox sizes compared (pending asks)."""
ROUNDS: Final = 30
"""Requests timed per size, after WARMUP untimed ones."""
WARMUP: Final = 5
"""Untimed requests first: template loading and the first queries' caches."""


def _one_size(pending: int) -> dict[str, Any]:
    """Run in a child process: a fresh database of `pending` asks, the page timed ROUNDS times."""
    import django
    from django.core.management import call_command
    from django.test import Client

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)
    from django.contrib.auth.models import Permission, User

    from ask_mcp.models import Ask

    user = User.objects.create_user("bench", password="bench-password-0123", is_staff=True)
    # The asks are addressed to nobody: only a person who may answer every ask sees them (being
    # staff alone no longer does, so the page was timed empty, 3,227 bytes at either size).
    user.user_permissions.add(Permission.objects.get(codename="answer_every_ask"))
    now = dt.datetime.now(dt.UTC)
    Ask.objects.bulk_create(
        Ask(
            created=now,
            message=f"Question {n}: may I **deploy** build {n}?\n\n```\nmake deploy\n```",
            schema={"type": "object", "properties": {"answer": {"type": "string"}}},
            tool="user_ask",
            client_name="bench",
            route=Ask.Route.BROWSER,
            expires_at=now + dt.timedelta(seconds=600 + n),
        )
        for n in range(pending)
    )
    client = Client()
    client.force_login(user)
    timings = []
    for index in range(WARMUP + ROUNDS):
        started = time.perf_counter()
        response = client.get("/", HTTP_HOST="127.0.0.1")
        elapsed = time.perf_counter() - started
        assert response.status_code == 200, response.status_code
        if index >= WARMUP:
            timings.append(elapsed)
    return {
        "pending": pending,
        "median_ms": round(statistics.median(timings) * 1000, 2),
        "p90_ms": round(sorted(timings)[int(len(timings) * 0.9) - 1] * 1000, 2),
        "bytes": len(response.content),
    }


def inbox_page() -> dict[str, Any]:
    """Both sizes, one after the other in one run, each in its own process and database."""
    rows = []
    for pending in SIZES:
        with tempfile.TemporaryDirectory() as tmp:
            env = {
                **os.environ,
                "DJANGO_SETTINGS_MODULE": "tests.settings",
                "ASKSERVER_TEST_DB": str(Path(tmp) / "bench.sqlite3"),
            }
            code = f"import json, bench.inbox as b; print(json.dumps(b._one_size({pending})))"
            out = subprocess.run(
                [sys.executable, "-c", code], cwd=ROOT, env=env, check=True, capture_output=True
            )
            rows.append(json.loads(out.stdout.decode().strip().splitlines()[-1]))
    small, large = rows
    return {
        "suite": "inbox",
        "sizes": rows,
        "ratio": round(large["median_ms"] / small["median_ms"], 2),
        "bound": 3,
    }


SOCKETS: Final = (1, 100)
"""Open inbox sockets compared: one, and a hundred (a team's worth of open tabs)."""
ASKS_PER_RUN: Final = 10
"""Asks made one after another per socket count; each arrival on each socket is one sample."""
ARRIVAL_BOUND_S: Final = 30.0
"""How long one ask may take to reach every socket before the run fails."""
_OPEN_SOCKETS: Final = """async ([count, path]) => {
  window.__arrivals = [];
  const opened = [];
  for (let i = 0; i < count; i++) {
    opened.push(new Promise((resolve, reject) => {
      const socket = new WebSocket(`ws://${location.host}${path}`);
      socket.onmessage = (event) => {
        if (event.data.includes('class="ask-card"')) window.__arrivals.push(Date.now());
        resolve();  // the first message is the list sent on connect
      };
      socket.onclose = () => reject(new Error("socket closed"));
    }));
  }
  await Promise.all(opened);
}"""


def fan_out() -> dict[str, Any]:
    """A new ask reaching 1 and 100 open inbox sockets, in one run against one server."""
    import asyncio

    from bench.run import Askserver, free_port, serving

    with tempfile.TemporaryDirectory() as tmp:
        product = Askserver(Path(tmp), {"ON_ELICIT": "ask_mcp.web.elicit.on_elicit"})
        port = free_port()
        with serving(product.command("daphne", port), product.env, port):
            return asyncio.run(_fan_out(f"http://127.0.0.1:{port}", product))


async def _fan_out(base_url: str, product: Any) -> dict[str, Any]:
    import asyncio

    import httpx2
    from playwright.async_api import async_playwright

    from bench.browser import LEGACY_FREE_META

    results: dict[str, Any] = {}
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox"]
        )
        # The site's CSP forbids eval, which wait_for_function's expression needs; the bench's
        # own script is not what the policy guards against.
        page = await browser.new_page(base_url=base_url, bypass_csp=True)
        await page.goto("/accounts/login/")
        await page.fill("#id_username", "bench")
        await page.fill("#id_password", product.PASSWORD)
        await page.click("button[type=submit]")
        await page.wait_for_url(base_url + "/")
        headers = {
            "authorization": f"Bearer {product.token}",
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "user_ask",
        }
        async with httpx2.AsyncClient(timeout=60) as client:
            for count in SOCKETS:
                await page.reload()
                await page.evaluate(_OPEN_SOCKETS, [count, "/ws/inbox/"])
                samples: list[float] = []
                for n in range(ASKS_PER_RUN):
                    await page.evaluate("window.__arrivals = []")
                    body = {
                        "jsonrpc": "2.0",
                        "id": n,
                        "method": "tools/call",
                        "params": {
                            "name": "user_ask",
                            "arguments": {"message": f"fan-out {count}/{n}"},
                            "_meta": LEGACY_FREE_META,
                        },
                    }
                    started = time.time() * 1000
                    call = asyncio.create_task(
                        client.post(f"{base_url}/mcp", json=body, headers=headers)
                    )
                    await page.wait_for_function(
                        f"window.__arrivals.length >= {count}",
                        timeout=ARRIVAL_BOUND_S * 1000,
                    )
                    arrivals = await page.evaluate("window.__arrivals")
                    samples += [arrival - started for arrival in arrivals]
                    call.cancel()  # the client leaves: the ask is withdrawn
                    with contextlib.suppress(BaseException):  # the cancelled post itself
                        await call
                samples.sort()
                results[f"{count}_sockets"] = {
                    "samples": len(samples),
                    "p50_ms": round(statistics.median(samples), 1),
                    "p99_ms": round(samples[max(0, int(len(samples) * 0.99) - 1)], 1),
                }
        await browser.close()
    return results
