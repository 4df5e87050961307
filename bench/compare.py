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
import statistics
import tempfile
from pathlib import Path
from typing import Any

from bench.run import (
    ROOT,
    SDK_VENV,
    Askserver,
    asgi_command,
    cpu_seconds,
    free_port,
    load,
    serving,
)

SERVERS = ("daphne", "uvicorn")
CONCURRENCY = (4, 16)


def compare(before: Path, rounds: int, seconds: float) -> dict[str, Any]:
    trees = {"before": before.resolve(), "after": ROOT}
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        targets: dict[str, tuple[str, str | None, int]] = {}
        port = free_port()
        sdk = [str(SDK_VENV / "python"), str(ROOT / "bench" / "peers" / "sdk_server.py")]
        peer = stack.enter_context(serving([*sdk, "--port", str(port)], dict(os.environ), port))
        targets["sdk"] = (f"http://127.0.0.1:{port}/mcp", None, peer.pid)
        for name, tree in trees.items():
            workdir = Path(tmp) / name
            workdir.mkdir()
            product = Askserver(workdir, tree=tree)
            for server in SERVERS:
                port = free_port()
                argv = asgi_command(server, Askserver.APP, port, venv=tree / ".venv" / "bin")
                process = stack.enter_context(serving(argv, product.env, port, cwd=tree))
                targets[f"{name} {server}"] = (
                    f"http://127.0.0.1:{port}/mcp",
                    product.token,
                    process.pid,
                )
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
