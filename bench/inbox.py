"""The inbox page's server time with 1,000 pending asks against 10, measured in one run, in process.

Each size gets a fresh SQLite database (migrated, one staff user, N pending browser asks), then
the inbox page is requested through Django's test client, which runs the whole view, template
and middleware stack without a socket: what is timed is the server's own work. The median of
ROUNDS requests per size is reported with the ratio; the issue's bound is a ratio under 3.
"""

from __future__ import annotations

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
    from django.contrib.auth.models import User

    from ask_mcp.models import Ask

    user = User.objects.create_user("bench", password="bench-password-0123", is_staff=True)
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
