"""The benchmark: askserver against the official SDK, side by side in one run, as ratios.

Each server is pinned to CPU 0; the load generator (bench/load.py) runs pinned to CPU 1, and
loads one server at a time. askserver runs as the product does by default: asks recorded,
requestState sealed, bearer-token auth on. The throughput table also has the ceiling: a bare
Channels consumer doing only the wire work (bench/peers/bare_consumer.py). Results go to stdout
as a table and to bench/results/<suite>-<time>.json.

    python -m bench.run throughput      # MRTR calls/s and round latency, daphne and uvicorn
    python -m bench.run memory          # resident memory per parked call; drift over 100,000 asks
    python -m bench.run resume          # browser answer to resumed call: one process, two workers
    python -m bench.run held            # 1,000 held browser-fallback calls at once, all answered
    python -m bench.run soak            # 20 minutes at a steady rate: memory and open files flat
    python -m bench.run durability      # 1,000 asks across the routes, SIGKILL, restart: 0 lost
    python -m bench.run ops             # throughput with metrics and logs off, default, and all on
    python -m bench.run tasks           # 100,000 user_ask tasks waiting; tasks/get vs an MRTR round
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, Final

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv" / "bin"
SDK_VENV = ROOT / "bench" / ".venv-sdk" / "bin"
RESULTS = ROOT / "bench" / "results"
SERVER_CPU, CLIENT_CPU = 0, 1
REDIS_URL = "redis://127.0.0.1:6379/0"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_port(port: int, process: subprocess.Popen[bytes], bound: float = 60.0) -> None:
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)  # the benchmark may poll: it is not the test suite
    raise RuntimeError(f"nothing listening on {port} after {bound} s")


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


BENCH_LIMIT: Final = 1_000_000
"""PENDING_ASKS_PER_PRINCIPAL and NEW_ASKS_PER_MINUTE for the bench's token: no load reaches them."""


class Askserver:
    """The product with a fresh SQLite database, a user and a token."""

    PASSWORD = "bench-password-not-secret"
    APP = "askserver.asgi:application"
    """The ASGI application daphne and uvicorn serve."""

    def __init__(
        self,
        workdir: Path,
        ask_mcp: dict[str, Any] | None = None,
        *,
        database_url: str | None = None,
        redis_url: str | None = None,
        tree: Path = ROOT,
    ) -> None:
        """`tree` is the checkout served, with its own `.venv` (another one for bench.compare)."""
        self.workdir = workdir
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "bench.settings",
            "ASKSERVER_VAR_DIR": str(workdir),
            "ASKSERVER_SECRET_KEY": "bench-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz",
            "ASKSERVER_LOG_LEVEL": "WARNING",
            "ASKSERVER_BENCH_CONFIG": json.dumps(ask_mcp or {}),
            # One token drives every suite at full speed (thousands of inbox asks a minute):
            # the flood limits are set past any suite's load so no throughput run is refused.
            # As variables, not BENCH_CONFIG keys: a checkout from before them (bench.compare)
            # ignores a variable it does not know, but would refuse an unknown ASK_MCP key.
            "ASKSERVER_PENDING_ASKS_PER_PRINCIPAL": str(BENCH_LIMIT),
            "ASKSERVER_NEW_ASKS_PER_MINUTE": str(BENCH_LIMIT),
        }
        if database_url:
            self.env["DATABASE_URL"] = database_url
        if redis_url:
            self.env["ASKSERVER_REDIS_URL"] = redis_url
            self.env["ASKSERVER_REDIS_PREFIX"] = f"askbench{os.getpid()}"
        manage = [str(tree / ".venv" / "bin" / "python"), "manage.py"]
        subprocess.run([*manage, "migrate", "--noinput", "-v0"], cwd=tree, env=self.env, check=True)
        subprocess.run(
            [
                *manage,
                "shell",
                "-c",
                "from django.contrib.auth.models import User; "
                "user, _ = User.objects.get_or_create(username='bench'); "
                f"user.set_password({self.PASSWORD!r}); user.save()",
            ],
            cwd=tree,
            env=self.env,
            check=True,
            capture_output=True,
        )
        self.token = subprocess.run(
            [*manage, "createtoken", "bench"],
            cwd=tree,
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()

    def command(self, server: str, port: int) -> list[str]:
        return asgi_command(server, self.APP, port)


def asgi_command(
    server: str, app: str, port: int, venv: Path = VENV, *, quiet: bool = True
) -> list[str]:
    """Serve an ASGI application under daphne or uvicorn on loopback, without an access log and,
    under uvicorn, with its C parser and event loop named (as the SDK peer runs); from `venv`'s
    executables (another checkout's, for bench.compare). Not `quiet`, daphne runs as `make run`
    runs it (verbosity 1: its access log on); uvicorn runs as `make run SERVER=uvicorn` does
    either way (no access log of its own)."""
    if server == "daphne":
        verbosity = ["-v", "0"] if quiet else []
        return [str(venv / "daphne"), "-b", "127.0.0.1", "-p", str(port), *verbosity, app]
    return [
        str(venv / "uvicorn"),
        app,
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


@contextmanager
def serving(
    command: list[str], env: dict[str, str], port: int, cwd: Path = ROOT
) -> Iterator[subprocess.Popen[bytes]]:
    """A server pinned to the server CPU, run from `cwd`; its log goes to a file (a pipe nobody
    reads fills up)."""
    log = tempfile.NamedTemporaryFile(  # noqa: SIM115  (kept open for the server's lifetime)
        prefix="bench-server-", suffix=".log", delete=False
    )
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        preexec_fn=lambda: os.sched_setaffinity(0, {SERVER_CPU}),
    )
    try:
        wait_for_port(port, process)
        yield process
    except BaseException:
        print(f"server log ({log.name}), last lines:", file=sys.stderr)
        print(Path(log.name).read_text(errors="replace")[-3000:], file=sys.stderr)
        raise
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def load(
    url: str, *, concurrency: int, seconds: float, token: str | None, rate: float | None = None
) -> dict[str, Any]:
    command = [
        str(VENV / "python"),
        "-m",
        "bench.load",
        "--url",
        url,
        "--concurrency",
        str(concurrency),
        "--seconds",
        str(seconds),
        "--cpu",
        str(CLIENT_CPU),
    ]
    if token:
        command += ["--token", token]
    if rate:
        command += ["--rate", str(rate)]
    done = subprocess.run(command, cwd=ROOT, check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _median_run(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median calls/s, with every round's calls/s beside it."""
    ordered = sorted(results, key=lambda result: float(result["calls_per_s"]))
    return {**ordered[len(ordered) // 2], "rounds": [r["calls_per_s"] for r in results]}


def throughput(seconds: float, rounds: int) -> dict[str, Any]:
    if not (SDK_VENV / "python").exists():
        raise SystemExit(
            "the SDK peer's venv is missing: run `make bench` (it creates bench/.venv-sdk)"
        )
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        product = Askserver(Path(tmp))

        def sdk_command(port: int) -> list[str]:
            peer = ROOT / "bench" / "peers" / "sdk_server.py"
            return [str(SDK_VENV / "python"), str(peer), "--port", str(port)]

        peers: list[tuple[str, Callable[[int], list[str]], dict[str, str], str | None]] = [
            ("official SDK MCPServer (uvicorn)", sdk_command, dict(os.environ), None),
            *(
                (
                    f"ceiling: bare consumer ({server})",
                    partial(asgi_command, server, "bench.peers.bare_consumer:application"),
                    dict(os.environ),
                    None,
                )
                for server in ("daphne", "uvicorn")
            ),
            *(
                (
                    f"askserver ({server}, logs off)",
                    partial(product.command, server),
                    product.env,
                    product.token,
                )
                for server in ("daphne", "uvicorn")
            ),
            # The headline: askserver as `make run` serves it (a request line each, daphne's
            # access log on for the rest).
            *(
                (
                    f"askserver ({server}, as shipped)",
                    partial(asgi_command, server, Askserver.APP, quiet=False),
                    {**product.env, "ASKSERVER_LOG_LEVEL": "INFO"},
                    product.token,
                )
                for server in ("daphne", "uvicorn")
            ),
        ]
        # All three serve at once (idle ones cost nothing) and take turns under the load, round
        # after round: a slow spell on this shared machine then falls on every peer alike.
        # Each figure is the median of the rounds.
        with contextlib.ExitStack() as stack:
            urls: dict[str, tuple[str, str | None]] = {}
            for name, command_for, env, token in peers:
                port = free_port()
                stack.enter_context(serving(command_for(port), env, port))
                urls[name] = (f"http://127.0.0.1:{port}/mcp", token)
            runs: dict[str, dict[str, list[dict[str, Any]]]] = {
                name: {"c4": [], "c16": []} for name in urls
            }
            for _ in range(rounds):
                for concurrency in (4, 16):
                    for name, (url, token) in urls.items():
                        runs[name][f"c{concurrency}"].append(
                            load(url, concurrency=concurrency, seconds=seconds, token=token)
                        )
            for name, by_level in runs.items():
                rows[name] = {level: _median_run(results) for level, results in by_level.items()}
    sdk = rows["official SDK MCPServer (uvicorn)"]
    for row in rows.values():
        row["ratio_c4"] = round(row["c4"]["calls_per_s"] / sdk["c4"]["calls_per_s"], 2)
        row["ratio_c16"] = round(row["c16"]["calls_per_s"] / sdk["c16"]["calls_per_s"], 2)
    return rows


OFF: Final = "off (WARNING, no metrics)"
"""The operations suite's baseline: what the throughput suite's logs-off rows measure."""
OPS_VARIANTS: dict[str, tuple[dict[str, str], bool]] = {
    OFF: ({"ASKSERVER_LOG_LEVEL": "WARNING"}, True),
    "shipped default (make run)": ({"ASKSERVER_LOG_LEVEL": "INFO"}, False),
    "metrics + JSON request lines": (
        {
            "ASKSERVER_LOG_LEVEL": "INFO",
            "ASKSERVER_LOG_FORMAT": "json",
            "ASKSERVER_METRICS": "1",
            "ASKSERVER_METRICS_TOKEN": "bench-metrics-token-0123456789",
        },
        False,
    ),
}
"""The operations suite's variants, each with its environment and whether daphne runs quiet
(`-v 0`): logs off (the request line below its level, metrics off, daphne's access log off, as
the throughput suite's logs-off rows); the shipped default, as `make run` serves it (a plain line
per request, daphne's access log on); and everything on."""
OPS_CPU_TARGET: Final = 1.05
"""Issue 33: each logging variant costs at most 5 % more server CPU per call than logs off."""
CEILING_TARGETS: Final = {"daphne": 1.0, "uvicorn": 0.85}
"""Issue 33: askserver's calls/s as a share of the bare Channels consumer's on the same server."""
TAIL_TARGET: Final = 3.0
"""Issue 33: a round's p99 at most this many times its p50."""
TASKS_GET_TARGET: Final = 1.5
"""Issue 33: tasks/get of a waiting task at most this many times an MRTR round (p50 and p99)."""


def target(met: bool, text: str) -> None:
    """One line a later run can be compared on: the target, and whether this run met it."""
    print(f"target {'met' if met else 'MISSED'}: {text}")


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a process has used (what contention on the machine cannot inflate)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ops(seconds: float, rounds: int, before: Path | None = None) -> dict[str, Any]:
    """MRTR throughput and server CPU per call of askserver with logs off, as shipped, and all on.

    Every variant serves at once and they take turns under the load, round after round, so a
    slow spell on the shared machine falls on all alike; each figure is the median round. With
    `before` (another checkout with its own `.venv`), its askserver serves every variant too,
    interleaved with this one's: before and after in one run.
    """
    trees = {"": ROOT} if before is None else {"before ": before.resolve(), "": ROOT}
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        urls: dict[str, tuple[str, int, str]] = {}
        for tree_name, tree in trees.items():
            workdir = Path(tmp) / (tree_name.strip() or "after")
            workdir.mkdir()
            product = Askserver(workdir, tree=tree)
            for server in ("daphne", "uvicorn"):
                for variant, (overrides, quiet) in OPS_VARIANTS.items():
                    port = free_port()
                    env = {**product.env, **overrides}
                    argv = asgi_command(
                        server, Askserver.APP, port, venv=tree / ".venv" / "bin", quiet=quiet
                    )
                    process = stack.enter_context(serving(argv, env, port, cwd=tree))
                    urls[f"{tree_name}{server}: {variant}"] = (
                        f"http://127.0.0.1:{port}/mcp",
                        process.pid,
                        product.token,
                    )
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in urls}
        for _ in range(rounds):
            for name, (url, pid, token) in urls.items():
                spent = cpu_seconds(pid)
                result = load(url, concurrency=16, seconds=seconds, token=token)
                result["cpu_us_per_call"] = round(
                    (cpu_seconds(pid) - spent) / max(1, result["calls"]) * 1e6, 1
                )
                runs[name].append(result)
        for name, results in runs.items():
            cpu = sorted(r["cpu_us_per_call"] for r in results)
            rows[name] = {"c16": _median_run(results), "cpu_us_per_call": cpu[len(cpu) // 2]}
            rows[name]["cpu_rounds"] = [r["cpu_us_per_call"] for r in results]
    for tree_name in trees:
        for server in ("daphne", "uvicorn"):
            prefix = f"{tree_name}{server}: "
            base = rows[prefix + OFF]
            for name, row in rows.items():
                if name.startswith(prefix):
                    row["ratio_to_off"] = round(
                        row["c16"]["calls_per_s"] / base["c16"]["calls_per_s"], 3
                    )
                    row["cpu_ratio_to_off"] = round(
                        row["cpu_us_per_call"] / base["cpu_us_per_call"], 3
                    )
    return rows


def print_ops(rows: dict[str, Any]) -> None:
    print(f"{'server: variant':52} {'calls/s':>8} {'x off':>6} {'CPU us/call':>12} {'x off':>6}")
    for name, row in rows.items():
        print(
            f"{name:52} {row['c16']['calls_per_s']:>8} {row['ratio_to_off']:>6} "
            f"{row['cpu_us_per_call']:>12} {row['cpu_ratio_to_off']:>6}  "
            f"calls/s {row['c16']['rounds']}, CPU {row['cpu_rounds']}"
        )
    for name, row in rows.items():
        if name.startswith("before ") or name.endswith(OFF):
            continue
        target(
            row["cpu_ratio_to_off"] <= OPS_CPU_TARGET,
            f"{name} costs {row['cpu_ratio_to_off']}x the server CPU per call of logs off "
            f"(at most {OPS_CPU_TARGET})",
        )


def print_throughput(rows: dict[str, Any]) -> None:
    print(
        f"{'server':36} {'calls/s c4':>11} {'xSDK':>6} {'p50 ms':>8} {'p99 ms':>8} "
        f"{'calls/s c16':>12} {'xSDK':>6}"
    )
    for name, row in rows.items():
        c4, c16 = row["c4"], row["c16"]
        print(
            f"{name:36} {c4['calls_per_s']:>11} {row['ratio_c4']:>6} {c4['round_p50_ms']:>8} "
            f"{c4['round_p99_ms']:>8} {c16['calls_per_s']:>12} {row['ratio_c16']:>6}"
        )
    for server, share in CEILING_TARGETS.items():
        bare = rows[f"ceiling: bare consumer ({server})"]
        for variant in ("logs off", "as shipped"):
            row = rows[f"askserver ({server}, {variant})"]
            for level in ("c4", "c16"):
                reached = round(row[level]["calls_per_s"] / bare[level]["calls_per_s"], 2)
                target(
                    reached >= share,
                    f"askserver ({server}, {variant}) at {level}: {reached} of the bare "
                    f"consumer's calls/s (at least {share})",
                )
            tail = round(row["c4"]["round_p99_ms"] / row["c4"]["round_p50_ms"], 1)
            target(
                tail <= TAIL_TARGET,
                f"askserver ({server}, {variant}) at c4: p99 {tail}x p50 (at most {TAIL_TARGET})",
            )


async def _park(url: str, token: str, count: int, concurrency: int) -> None:
    from urllib.parse import urlsplit

    from bench.load import META, Connection

    parts = urlsplit(url)
    queue = iter(range(count))

    async def worker() -> None:
        conn = Connection(parts.hostname or "127.0.0.1", parts.port or 80, parts.path, token)
        await conn.open()
        for n in queue:
            reply = await conn.post(
                {
                    "jsonrpc": "2.0",
                    "id": n,
                    "method": "tools/call",
                    "params": {
                        "name": "user_ask",
                        "arguments": {"message": f"Parked {n}?"},
                        "_meta": META,
                    },
                },
                "user_ask",
            )
            assert reply["result"]["resultType"] == "input_required", reply
        conn.writer.close()

    await asyncio.gather(*(worker() for _ in range(concurrency)))


def memory(parked: int, cycles: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        product = Askserver(
            Path(tmp), {"ELICITATION_CAPACITY": parked * 2, "ELICITATION_TTL": 3600}
        )
        port = free_port()
        command = product.command("daphne", port)
        with serving(command, product.env, port) as process:
            url = f"http://127.0.0.1:{port}/mcp"
            load(url, concurrency=4, seconds=2, token=product.token)  # warm every code path
            before = rss_kb(process.pid)
            asyncio.run(_park(url, product.token, parked, 8))
            after = rss_kb(process.pid)
        per_call = (after - before) * 1024 / parked
        port = free_port()
        command = product.command("daphne", port)
        with serving(command, product.env, port) as process:
            url = f"http://127.0.0.1:{port}/mcp"
            rss = []
            done = 0
            for target in (cycles // 10, cycles):
                while done < target:
                    result = load(url, concurrency=8, seconds=5, token=product.token)
                    done += result["calls"]
                rss.append((done, rss_kb(process.pid)))
    drift = (rss[1][1] - rss[0][1]) / rss[0][1]
    return {
        "parked": parked,
        "rss_before_kb": before,
        "rss_parked_kb": after,
        "bytes_per_parked_call": round(per_call),
        "cycles_rss_kb": rss,
        "drift_after_cycles": round(drift, 4),
    }


def browser_load(suite: str, product: Askserver, mcp_url: str, answer_url: str, *extra: str) -> Any:
    command = [
        str(VENV / "python"),
        "-m",
        "bench.browser",
        suite,
        "--mcp-url",
        mcp_url,
        "--answer-url",
        answer_url,
        "--token",
        product.token,
        "--username",
        "bench",
        "--password",
        product.PASSWORD,
        "--cpu",
        str(CLIENT_CPU),
        *extra,
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"bench.browser {suite} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def resume(calls: int) -> dict[str, Any]:
    """Form POST to result frame: one process, then two workers sharing Redis and PostgreSQL."""
    from tests.support.services import postgres_database

    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        product = Askserver(Path(tmp))
        port = free_port()
        with serving(product.command("daphne", port), product.env, port):
            base = f"http://127.0.0.1:{port}"
            rows["one process (daphne, in-memory layer, SQLite)"] = browser_load(
                "resume", product, base + "/mcp", base, "--calls", str(calls)
            )
    with tempfile.TemporaryDirectory() as tmp, postgres_database() as database_url:
        product = Askserver(Path(tmp), database_url=database_url, redis_url=REDIS_URL)
        ports = free_port(), free_port()
        with (
            serving(product.command("daphne", ports[0]), product.env, ports[0]),
            serving(product.command("daphne", ports[1]), product.env, ports[1]),
        ):
            held_on, answered_on = (f"http://127.0.0.1:{port}" for port in ports)
            rows["two workers (daphne x2, Redis, PostgreSQL)"] = browser_load(
                "resume", product, held_on + "/mcp", answered_on, "--calls", str(calls)
            )
    return rows


def held(calls: int) -> dict[str, Any]:
    """Many held browser-fallback calls in one process, keep-alives flowing, all answered."""
    with tempfile.TemporaryDirectory() as tmp:
        product = Askserver(
            Path(tmp),
            {"ELICITATION_CAPACITY": calls * 2, "ELICITATION_TTL": 3600, "KEEPALIVE_SECONDS": 1},
        )
        port = free_port()
        with serving(product.command("daphne", port), product.env, port) as process:
            base = f"http://127.0.0.1:{port}"
            load(base + "/mcp", concurrency=2, seconds=1, token=product.token)  # warm up
            before = rss_kb(process.pid)
            result: dict[str, Any] = browser_load(
                "held",
                product,
                base + "/mcp",
                base,
                "--calls",
                str(calls),
                "--hold",
                "3",
                "--server-pid",
                str(process.pid),
            )
            result["rss_before_kb"] = before
            result["bytes_per_held_call"] = round(
                (result["rss_while_held_kb"] - before) * 1024 / calls
            )
    return result


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def soak(minutes: float, rate: float) -> dict[str, Any]:
    """MRTR asks at a steady rate for a long time: resident memory and open files stay flat."""
    samples: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        product = Askserver(Path(tmp))
        port = free_port()
        with serving(product.command("daphne", port), product.env, port) as process:
            url = f"http://127.0.0.1:{port}/mcp"
            started = time.monotonic()
            calls = 0
            while time.monotonic() - started < minutes * 60:
                result = load(url, concurrency=2, seconds=60, token=product.token, rate=rate)
                calls += result["calls"]
                samples.append(
                    {
                        "minute": round((time.monotonic() - started) / 60, 1),
                        "calls": calls,
                        "rss_kb": rss_kb(process.pid),
                        "open_files": open_files(process.pid),
                    }
                )
                print(json.dumps(samples[-1]), flush=True)
    first, last = samples[min(1, len(samples) - 1)], samples[-1]  # minute 1: after warm-up
    return {
        "minutes": minutes,
        "rate_per_s": rate,
        "samples": samples,
        "rss_growth_after_first_minute": round(
            (last["rss_kb"] - first["rss_kb"]) / first["rss_kb"], 4
        ),
        "open_files_growth": last["open_files"] - first["open_files"],
    }


def durability(calls: int) -> dict[str, Any]:
    """1,000 asks pending across the routes, SIGKILL, restart on the same port and database,
    answer them all (bench/durability.py)."""
    from bench import durability as suite

    third = calls // 3
    counts = {"mrtr": calls - 2 * third, "inbox": third, "url": third}
    config = {
        "ELICITATION_CAPACITY": calls * 2,
        "ELICITATION_TTL": 3600,
        "ANSWER_URL": "ask_mcp.web.elicit.page_url",
        "ON_ELICIT": "ask_mcp.web.elicit.on_elicit",
    }
    with tempfile.TemporaryDirectory() as tmp:
        product = Askserver(Path(tmp), config)
        port = free_port()
        command = product.command("daphne", port)
        process = subprocess.Popen(command, cwd=ROOT, env=product.env, stdout=subprocess.DEVNULL)
        wait_for_port(port, process)
        started: list[subprocess.Popen[bytes]] = []

        def restart() -> subprocess.Popen[bytes]:
            again = subprocess.Popen(command, cwd=ROOT, env=product.env, stdout=subprocess.DEVNULL)
            started.append(again)
            wait_for_port(port, again)
            return again

        try:
            result = asyncio.run(
                suite.run(
                    base=f"http://127.0.0.1:{port}",
                    token=product.token,
                    username="bench",
                    password=product.PASSWORD,
                    counts=counts,
                    process=process,
                    restart=restart,
                )
            )
        finally:
            for each in [process, *started]:
                if each.poll() is None:
                    each.send_signal(signal.SIGTERM)
                    each.wait(timeout=30)
    return result


def _database_bytes(workdir: Path) -> int:
    """The SQLite database's size on disk, its write-ahead log included."""
    return sum(path.stat().st_size for path in workdir.glob("*.sqlite3*"))


def tasks(count: int, calls: int) -> dict[str, Any]:
    """`count` `user_ask` tasks waiting on a person at once in one daphne process on SQLite
    (as `make run`): resident memory per task beyond its rows, then tasks/get against an MRTR
    round with all of them waiting (bench/tasks.py)."""
    from bench import tasks as suite

    principals = -(-count // suite.PER_PRINCIPAL)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        product = Askserver(workdir)
        manage = [str(VENV / "python"), "manage.py"]
        tokens = suite.issue_tokens(manage, str(ROOT), product.env, principals)
        port = free_port()
        with serving(product.command("daphne", port), product.env, port) as process:
            url = f"http://127.0.0.1:{port}/mcp"
            load(url, concurrency=4, seconds=2, token=product.token)  # warm the MRTR path
            mine = os.sched_getaffinity(0)
            os.sched_setaffinity(0, {CLIENT_CPU})  # the client, as bench.load, on the other CPU
            try:
                asyncio.run(suite.warm(url, product.token, tokens))
                before, disk_before = rss_kb(process.pid), _database_bytes(workdir)
                waiting, seconds = asyncio.run(suite.create(url, tokens, count))
                after, disk_after = rss_kb(process.pid), _database_bytes(workdir)
                timed = asyncio.run(suite.latency(url, product.token, waiting, calls))
                settled = rss_kb(process.pid)
            finally:
                os.sched_setaffinity(0, mine)
    return {
        "tasks": count,
        "principals": principals,
        "server": "daphne, SQLite (as make run), TASK_LIMIT as shipped (100)",
        "seconds_to_create": round(seconds, 1),
        "created_per_s": round(count / seconds, 1),
        "rss_before_kb": before,
        "rss_waiting_kb": after,
        "rss_after_latency_kb": settled,
        "bytes_per_waiting_task": round((after - before) * 1024 / count),
        "database_bytes_per_task": round((disk_after - disk_before) / count),
        **timed,
    }


def print_tasks(results: dict[str, Any]) -> None:
    get, rnd = results["tasks_get"], results["mrtr_round"]
    print(
        f"{results['tasks']:,} tasks waiting ({results['principals']:,} principals), "
        f"created in {results['seconds_to_create']} s ({results['created_per_s']}/s)\n"
        f"resident memory: {results['rss_before_kb']:,} KB before, "
        f"{results['rss_waiting_kb']:,} KB with them waiting: "
        f"{results['bytes_per_waiting_task']} bytes per task (target under 1,024); "
        f"their rows: {results['database_bytes_per_task']} bytes per task on disk\n"
        f"{'':24} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'count':>7}\n"
        f"{'tasks/get':24} {get['p50_ms']:>8} {get['p99_ms']:>8} {get['max_ms']:>8} "
        f"{get['count']:>7}\n"
        f"{'MRTR round':24} {rnd['p50_ms']:>8} {rnd['p99_ms']:>8} {rnd['max_ms']:>8} "
        f"{rnd['count']:>7}\n"
        f"{'tasks/get / round':24} {results['get_over_round_p50']:>8} "
        f"{results['get_over_round_p99']:>8}"
    )
    for at in ("p50", "p99"):
        ratio = results[f"get_over_round_{at}"]
        target(
            ratio <= TASKS_GET_TARGET,
            f"tasks/get of a waiting task at {at}: {ratio}x an MRTR round "
            f"(at most {TASKS_GET_TARGET})",
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "suite",
        choices=[
            "throughput",
            "memory",
            "resume",
            "held",
            "soak",
            "durability",
            "inbox",
            "ops",
            "tasks",
        ],
    )
    parser.add_argument("--seconds", type=float, default=8.0, help="each load window")
    parser.add_argument("--rounds", type=int, default=3, help="throughput: turns per server")
    parser.add_argument("--parked", type=int, default=10_000)
    parser.add_argument("--cycles", type=int, default=100_000)
    parser.add_argument(
        "--calls", type=int, default=None, help="resume: 300; held and durability: 1,000"
    )
    parser.add_argument(
        "--tasks", type=int, default=100_000, help="tasks: how many wait on a person at once"
    )
    parser.add_argument(
        "--gets", type=int, default=4_000, help="tasks: tasks/get calls (and as many MRTR calls)"
    )
    parser.add_argument(
        "--before", type=Path, default=None, help="ops: another checkout, served beside this one"
    )
    parser.add_argument("--minutes", type=float, default=20.0, help="soak duration")
    parser.add_argument("--rate", type=float, default=50.0, help="soak: MRTR calls per second")
    args = parser.parse_args()
    if len(os.sched_getaffinity(0)) < 2:
        raise SystemExit("the benchmark needs two CPUs: one for the server, one for the load")
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.suite == "throughput":
        results: Any = throughput(args.seconds, args.rounds)
        print_throughput(results)
    elif args.suite == "ops":
        results = ops(args.seconds, args.rounds, args.before)
        print_ops(results)
    elif args.suite == "memory":
        results = memory(args.parked, args.cycles)
        print(json.dumps(results, indent=2))
    elif args.suite == "resume":
        results = resume(args.calls or 300)
        print(json.dumps(results, indent=2))
    elif args.suite == "held":
        results = held(args.calls or 1000)
        print(json.dumps(results, indent=2))
    elif args.suite == "durability":
        results = durability(args.calls or 1000)
    elif args.suite == "tasks":
        results = tasks(args.tasks, args.gets)
        print_tasks(results)
    elif args.suite == "inbox":
        from bench.inbox import fan_out, inbox_page

        results = {"page": inbox_page(), "sockets": fan_out()}
        print(json.dumps(results, indent=2))
    else:
        results = soak(args.minutes, args.rate)
        print(json.dumps({k: v for k, v in results.items() if k != "samples"}, indent=2))
    out = RESULTS / f"{args.suite}-{time.strftime('%Y%m%dT%H%M%S')}.json"
    out.write_text(json.dumps(results, indent=2))
    shutil.copyfile(out, RESULTS / f"{args.suite}-latest.json")
    print(f"\nwritten: {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
