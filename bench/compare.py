"""Throughput of this checkout against another, back to back in one run, as ratios to the SDK.

For a change that must not slow the hot path (a re-cut, a rename): both trees' askserver serve at
once under daphne and uvicorn, beside the official SDK, and take turns under the same load round
after round, so a slow spell on this shared machine falls on both alike. Each round's calls/s is
divided by that round's SDK figure; the table shows the median ratio, the server CPU per call,
and after/before for each server and concurrency.

    python -m bench.compare --before ../askserver-main --rounds 7 --seconds 6

`--before` names a checkout whose own `.venv` is installed (`make venv` there); this checkout is
"after". Everything runs on loopback, pinned as the throughput suite pins it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import statistics
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.run import (
    ROOT,
    SDK_VENV,
    SERVER_CPU,
    Askserver,
    cpu_seconds,
    free_port,
    load,
    wait_for_port,
)

SERVERS = ("daphne", "uvicorn")
CONCURRENCY = (4, 16)


def prepared(tree: Path, workdir: Path) -> tuple[dict[str, str], str]:
    """`tree`'s askserver with a fresh database, a user and a token, as the throughput suite has."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "bench.settings",
        "ASKSERVER_VAR_DIR": str(workdir),
        "ASKSERVER_SECRET_KEY": "bench-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz",
        "ASKSERVER_LOG_LEVEL": "WARNING",
        "ASKSERVER_BENCH_CONFIG": "{}",
    }
    manage = [str(tree / ".venv" / "bin" / "python"), "manage.py"]
    subprocess.run([*manage, "migrate", "--noinput", "-v0"], cwd=tree, env=env, check=True)
    create = (
        "from django.contrib.auth.models import User; User.objects.get_or_create(username='bench')"
    )
    subprocess.run(
        [*manage, "shell", "-c", create], cwd=tree, env=env, check=True, capture_output=True
    )
    token = subprocess.run(
        [*manage, "createtoken", "bench"],
        cwd=tree,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return env, token


def command(tree: Path, server: str, port: int) -> list[str]:
    """`tree`'s askserver under `server`, as bench.run.asgi_command serves this checkout's."""
    venv = tree / ".venv" / "bin"
    if server == "daphne":
        return [str(venv / "daphne"), "-b", "127.0.0.1", "-p", str(port), "-v", "0", Askserver.APP]
    return [
        str(venv / "uvicorn"),
        Askserver.APP,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--log-level",
        "warning",
        "--no-access-log",
        "--http",
        "httptools",
        "--loop",
        "uvloop",
    ]


@contextlib.contextmanager
def serving(argv: list[str], env: dict[str, str], cwd: Path, port: int) -> Iterator[int]:
    """A server pinned to the server CPU, from its own tree; yields its pid."""
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=lambda: os.sched_setaffinity(0, {SERVER_CPU}),
        )
        try:
            wait_for_port(port, process)
            yield process.pid
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


def compare(before: Path, rounds: int, seconds: float) -> dict[str, Any]:
    trees = {"before": before.resolve(), "after": ROOT}
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        targets: dict[str, tuple[str, str | None, int]] = {}
        port = free_port()
        sdk = [str(SDK_VENV / "python"), str(ROOT / "bench" / "peers" / "sdk_server.py")]
        pid = stack.enter_context(
            serving([*sdk, "--port", str(port)], dict(os.environ), ROOT, port)
        )
        targets["sdk"] = (f"http://127.0.0.1:{port}/mcp", None, pid)
        for name, tree in trees.items():
            workdir = Path(tmp) / name
            workdir.mkdir()
            env, token = prepared(tree, workdir)
            for server in SERVERS:
                port = free_port()
                pid = stack.enter_context(serving(command(tree, server, port), env, tree, port))
                targets[f"{name} {server}"] = (f"http://127.0.0.1:{port}/mcp", token, pid)
        calls: dict[str, dict[int, list[float]]] = {
            n: {c: [] for c in CONCURRENCY} for n in targets
        }
        cpu: dict[str, dict[int, list[float]]] = {n: {c: [] for c in CONCURRENCY} for n in targets}
        for _ in range(rounds):
            for concurrency in CONCURRENCY:
                for name, (url, bearer, pid) in targets.items():
                    spent = cpu_seconds(pid)
                    result = load(url, concurrency=concurrency, seconds=seconds, token=bearer)
                    cpu[name][concurrency].append((cpu_seconds(pid) - spent) / result["calls"])
                    calls[name][concurrency].append(float(result["calls_per_s"]))
    rows: dict[str, Any] = {}
    for name in targets:
        for concurrency in CONCURRENCY:
            ratios = [
                mine / sdk
                for mine, sdk in zip(
                    calls[name][concurrency], calls["sdk"][concurrency], strict=True
                )
            ]
            rows[f"{name} c{concurrency}"] = {
                "ratio": statistics.median(ratios),
                "cpu_us_per_call": statistics.median(cpu[name][concurrency]) * 1e6,
                "rounds": [round(ratio, 2) for ratio in ratios],
            }
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--before", type=Path, required=True, help="the other checkout")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=6.0, help="each load window")
    options = parser.parse_args()
    rows = compare(options.before, options.rounds, options.seconds)
    for name, row in rows.items():
        print(
            f"{name:18} x SDK {row['ratio']:5.2f}   {row['cpu_us_per_call']:7.0f} us CPU/call"
            f"   rounds {row['rounds']}"
        )
    for server in SERVERS:
        for concurrency in CONCURRENCY:
            before, after = (
                rows[f"before {server} c{concurrency}"],
                rows[f"after {server} c{concurrency}"],
            )
            print(
                f"{server} c{concurrency}: after/before x SDK {after['ratio'] / before['ratio']:.3f},"
                f" CPU per call {after['cpu_us_per_call'] / before['cpu_us_per_call']:.3f}"
            )


if __name__ == "__main__":
    main()
