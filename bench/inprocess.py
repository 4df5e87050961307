"""CPU per MRTR call inside the application alone: no HTTP server, no sockets, no other process.

Drives `askserver.asgi.application` with ASGI scopes directly, so the figure is the product's
own cost (auth, parsing, sealing, the elicitation table, the recorder's writes), repeatable on a
noisy machine where a socket benchmark is not. CPU time counts every thread, the recorder's
writer included; the recorder is flushed before the clock stops.

    python -m bench.inprocess                  # CPU µs per call, full product
    python -m bench.inprocess --observer none  # without the recorder
    python -m bench.inprocess --profile loop   # plus a cProfile of the event loop's thread
    python -m bench.inprocess --logs           # CPU per call with logs off, plain, JSON + metrics
    python -m bench.inprocess --logs --tree ../askserver-main   # the same, another checkout's code
    python -m bench.inprocess --tasks 300      # CPU per user_ask task created (8 clients)

With `--logs` the process switches its logging between the variants block after block (the
project's own LOGGING, its level and format changed, metrics on for the last), so a slow spell
falls on every variant alike; each block's CPU is divided by the block of logs off just before
it, and the medians of those ratios are printed. daphne's access log is not in it (no server).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
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


TASK_META: dict[str, Any] = {
    **META,
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}},
        "elicitation": {"form": {}},
    },
}
"""A client that declares the Tasks extension and shows forms (as bench/tasks.py's)."""


async def _create_tasks(app: Any, token: str, count: int, concurrency: int) -> float:
    """CPU µs per `user_ask` task created by `concurrency` clients (every thread counted, the
    background planning of each ask's deliveries included: the loop idles until it is done)."""

    async def create(serial: Iterator[int]) -> None:
        for n in serial:
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
            reply = await _post(app, token, body)
            assert reply["result"]["resultType"] == "task", reply

    await create(iter(range(50)))  # warm: the token cache, the store's and planner's connections
    await asyncio.sleep(1.0)  # bench only: the warm-up's background planning ends untimed
    serial = iter(range(50, 50 + count))
    started = time.process_time()
    await asyncio.gather(*(create(serial) for _ in range(concurrency)))
    await asyncio.sleep(1.0)  # the last asks' planning, on its thread
    return (time.process_time() - started) / count * 1e6


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


LOG_VARIANTS: dict[str, tuple[str, str, bool]] = {
    "off": ("WARNING", "plain", False),
    "plain request lines": ("INFO", "plain", False),
    "JSON request lines + metrics": ("INFO", "json", True),
}
"""Logging variants of --logs: the `ask_mcp` level, the console format, metrics on."""


def _use_logging(level: str, form: str, metrics_on: bool, log_file: Any) -> None:
    import copy
    import logging.config

    from django.conf import settings

    from ask_mcp.ops import metrics

    for handler in logging.getLogger().handlers:
        handler.flush()
        handler.close()
    config = copy.deepcopy(settings.LOGGING)
    config["handlers"]["console"]["formatter"] = form
    config["handlers"]["console"]["stream"] = log_file
    config["loggers"]["ask_mcp"]["level"] = level
    logging.config.dictConfig(config)
    metrics._enabled = False
    if metrics_on:
        metrics.enable()


async def _logs(token: str, application: Any, blocks: int, calls: int, log_path: Path) -> None:
    """CPU per call of each logging variant, block after block in this process, the log
    written to `log_path` (a server's log goes to a file too)."""
    import logging

    log_file = log_path.open("a", buffering=1)
    for n in range(200):  # warm every path
        await _call(application, token, n)
    per_call: dict[str, list[float]] = {name: [] for name in LOG_VARIANTS}
    ratios: dict[str, list[float]] = {name: [] for name in LOG_VARIANTS}
    serial = iter(range(1000, 10**9))
    for _ in range(blocks):
        for name, (level, form, metrics_on) in LOG_VARIANTS.items():
            _use_logging(level, form, metrics_on, log_file)
            started = time.process_time()
            for _ in range(calls):
                await _call(application, token, next(serial))
            for handler in logging.getLogger().handlers:
                handler.flush()  # the lines of the block are written within it
            per_call[name].append((time.process_time() - started) / calls * 1e6)
            ratios[name].append(per_call[name][-1] / per_call["off"][-1])
    for name in LOG_VARIANTS:
        cpu = statistics.median(per_call[name])
        ratio = statistics.median(ratios[name])
        print(
            f"{name:32} {cpu:>9.1f} us/call  {ratio:.3f}x off  (blocks: "
            f"{', '.join(f'{r:.3f}' for r in ratios[name])})"
        )
    log_file.close()
    lines = len(log_path.read_text().splitlines())
    print(f"log: {lines} lines for {blocks * calls * (len(LOG_VARIANTS) - 1)} calls logged")


def main() -> None:
    global ROOT
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
    parser.add_argument("--logs", action="store_true", help="logging variants side by side")
    parser.add_argument("--blocks", type=int, default=15, help="--logs: blocks per variant")
    parser.add_argument("--block", type=int, default=100, help="--logs: MRTR calls per block")
    parser.add_argument("--tasks", type=int, default=0, help="CPU per task created, N tasks")
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose code runs")
    args = parser.parse_args()
    ROOT = args.tree.resolve()
    sys.path.insert(0, str(ROOT))
    if args.tasks:  # one principal creates them all: no TASK_LIMIT in the way
        os.environ["ASKSERVER_BENCH_CONFIG"] = json.dumps({"TASK_LIMIT": 10**6})
    with tempfile.TemporaryDirectory() as tmp:
        token = _prepare(Path(tmp), args.observer)
        import django

        django.setup()
        if args.tasks:
            application = _load(args.app)
            per_task = asyncio.run(_create_tasks(application, token, args.tasks, 8))
            print(json.dumps({"cpu_us_per_task_created": round(per_task, 1)}))
            return
        if args.logs:
            application = _load(args.app)
            asyncio.run(_logs(token, application, args.blocks, args.block, Path(tmp) / "log"))
            return
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
