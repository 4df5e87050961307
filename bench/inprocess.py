"""CPU per MRTR call inside the application alone: no HTTP server, no sockets, no other process.

Drives `askserver.asgi.application` with ASGI scopes directly, so the figure is the product's
own cost (auth, parsing, sealing, the elicitation table, the recorder's writes), repeatable on a
noisy machine where a socket benchmark is not. CPU time counts every thread, the recorder's
writer included; the recorder is flushed before the clock stops.

    python -m bench.inprocess                  # CPU µs per call, full product
    python -m bench.inprocess --observer none  # without the recorder
    python -m bench.inprocess --profile loop   # plus a cProfile of the event loop's thread
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}


def _prepare(workdir: Path, observer: str | None) -> str:
    """Migrate a fresh database, create a user and return a token for it."""
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    os.environ["ASKSERVER_VAR_DIR"] = str(workdir)
    os.environ["ASKSERVER_SECRET_KEY"] = "bench-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz"
    os.environ["ASKSERVER_LOG_LEVEL"] = "WARNING"
    if observer == "none":
        os.environ["ASKSERVER_BENCH_CONFIG"] = json.dumps({"OBSERVER": None})
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "--noinput", "-v0"], cwd=ROOT, check=True)
    subprocess.run(
        [
            *manage,
            "shell",
            "-c",
            "from django.contrib.auth.models import User; "
            "User.objects.get_or_create(username='bench')",
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    done = subprocess.run(
        [*manage, "createtoken", "bench"], cwd=ROOT, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


async def _post(app: Any, token: str, body: dict[str, Any]) -> dict[str, Any]:
    payload = json.dumps(body, separators=(",", ":")).encode()
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", b"application/json"),
            (b"accept", b"application/json, text/event-stream"),
            (b"mcp-protocol-version", MODERN.encode()),
            (b"mcp-method", b"tools/call"),
            (b"mcp-name", b"user_ask"),
            (b"authorization", f"Bearer {token}".encode()),
            (b"content-length", str(len(payload)).encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    sent = False
    chunks: list[bytes] = []
    done = asyncio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": payload, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                done.set()

    await app(scope, receive, send)
    reply: dict[str, Any] = json.loads(b"".join(chunks))
    return reply


async def _call(app: Any, token: str, n: int) -> None:
    arguments = {"message": f"Proceed with step {n}?"}
    params: dict[str, Any] = {"name": "user_ask", "arguments": arguments, "_meta": META}
    first = await _post(
        app, token, {"jsonrpc": "2.0", "id": 2 * n, "method": "tools/call", "params": params}
    )
    result = first["result"]
    assert result["resultType"] == "input_required", first
    key = next(iter(result["inputRequests"]))
    retry = {
        **params,
        "requestState": result["requestState"],
        "inputResponses": {key: {"action": "accept", "content": {"answer": "yes"}}},
    }
    final = await _post(
        app, token, {"jsonrpc": "2.0", "id": 2 * n + 1, "method": "tools/call", "params": retry}
    )
    assert "yes" in final["result"]["content"][0]["text"], final


def _load(app_path: str) -> Any:
    """Import the ASGI application before any event loop runs, as daphne and uvicorn do: the
    project's asgi module runs the system checks at import, and a check that reads the database
    (a JSONField's on SQLite) is refused inside a running loop."""
    import importlib

    module, _, name = app_path.partition(":")
    return getattr(importlib.import_module(module), name)


async def _run(
    token: str, calls: int, concurrency: int, profile: str | None, application: Any
) -> tuple[float, float]:
    from ask_mcp import runtime

    async def flush() -> None:
        observer = runtime.get_server().table.observer
        if observer is not None and hasattr(observer, "flush"):
            await observer.flush()

    for n in range(200):  # warm every path, the token cache and the recorder's connection
        await _call(application, token, n)
    await flush()
    counter = iter(range(1000, 1000 + calls))

    async def worker() -> None:
        for n in counter:
            await _call(application, token, n)

    from ask_mcp.records import sql as recorder

    # The writer thread's own CPU time, so the recorder's share is known apart from the loop's.
    writer_cpu = 0.0
    write = recorder.write

    def timed_write(*args: Any) -> Any:
        nonlocal writer_cpu
        started = time.thread_time()
        try:
            return write(*args)
        finally:
            writer_cpu += time.thread_time() - started

    recorder.write = timed_write  # type: ignore[assignment]
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
        if profile == "writer":
            recorder.write = lambda *args: profiler.runcall(timed_write, *args)  # type: ignore[assignment,union-attr]
        else:
            profiler.enable()
    started = time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    await flush()
    spent = time.process_time() - started
    if profiler is not None:
        import pstats

        if profile == "loop":
            profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(45)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(30)
    return spent / calls, writer_cpu / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument(
        "--app",
        default="askserver.asgi:application",
        help="the ASGI application (bench.peers.bare_consumer:application for the ceiling)",
    )
    parser.add_argument("--observer", choices=["recorder", "none"], default="recorder")
    parser.add_argument(
        "--profile",
        choices=["loop", "writer"],
        default=None,
        help="cProfile the event loop's thread or the recorder's writer thread (one at a time: "
        "Python 3.12 allows one profiler per process)",
    )
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        token = _prepare(Path(tmp), args.observer)
        import django

        django.setup()
        per_call, writer = asyncio.run(
            _run(token, args.calls, args.concurrency, args.profile, _load(args.app))
        )
    print(
        json.dumps(
            {
                "cpu_us_per_call": round(per_call * 1e6, 1),
                "writer_cpu_us_per_call": round(writer * 1e6, 1),
                "observer": args.observer,
            }
        )
    )


if __name__ == "__main__":
    main()
