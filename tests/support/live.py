"""Live servers (daphne, or uvicorn) on loopback, one per configuration, for tests that drive the real endpoint.

The listening socket is bound here and handed to the server (`--fd`), so a client may connect at
once: its request waits in the backlog until the server is up. `start` returns after one such
request was answered, because importing the project can outlast a test client's 10 s timeout on
a busy machine. No polling, no sleeps.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

ROOT = Path(__file__).resolve().parents[2]
DAPHNE = Path(sys.executable).with_name("daphne")
UVICORN = Path(sys.executable).with_name("uvicorn")
READY_TIMEOUT = 120.0
"""Seconds a new server may take to answer its first request."""
PROBE_CONFIG: dict[str, Any] = {
    "TOOLKITS": {"Ask": {}, "tests.support.probe.Probe": {}},
    "OBSERVER": "tests.support.probe.observer",
    "ALLOW_ANONYMOUS_LOOPBACK": True,
}
"""The default live server (the `live` fixture): user_ask plus the probe toolkit, anonymous from
loopback."""
SECURED: dict[str, Any] = {**PROBE_CONFIG, "ALLOW_ANONYMOUS_LOOPBACK": False}
"""The default live server with a bearer token required on /mcp."""


@dataclass
class LiveServer:
    base_url: str
    process: subprocess.Popen[bytes]
    log_path: Path
    config: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict, repr=False)
    db: Path | None = None

    @property
    def mcp_url(self) -> str:
        return self.base_url + "/mcp"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def log_once(self, pattern: str, bound: float = 30.0) -> str:
        """The log once `pattern` (a regular expression) is in it: the server writes its log on
        a thread of its own, a little after what it logs happened (at most `bound` seconds)."""
        deadline = time.monotonic() + bound
        while re.search(pattern, text := self.log()) is None:
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{pattern!r} not logged in {bound} s; the log:\n{text[-3000:]}"
                )
            time.sleep(0.05)  # poll interval: `bound` above bounds the wait
        return text

    def warm(self) -> None:
        """Wait for the first answer (Django's start-up), so tests' own bounds time behaviour only.

        Any HTTP answer will do: this request may be refused (no token), it just has to be served.
        """

        try:
            httpx2.get(self.base_url + "/mcp", timeout=120.0)
        except httpx2.HTTPError as exc:
            raise RuntimeError(f"live server did not start; its log:\n{self.log()}") from exc

    def manage(self, *args: str, env: dict[str, str] | None = None) -> str:
        """Run a manage.py command against this server's database; returns its output."""
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout


class LiveServers:
    """Starts servers lazily per configuration and stops them all at the end."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self._servers: dict[str, LiveServer] = {}
        self._template_db: Path | None = None

    def environment(self, config: dict[str, Any], db: Path) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            DJANGO_SETTINGS_MODULE="tests.settings",
            ASKSERVER_TEST_CONFIG=json.dumps(config),
            ASKSERVER_TEST_DB=str(db),
            ASKSERVER_VAR_DIR=str(self.workdir / "var"),
            PYTHONPATH=str(ROOT),
        )
        return env

    def migrate(self, env: dict[str, str]) -> None:
        """Migrate the database `env` names (its DATABASE_URL, PostgreSQL) before workers start on
        it, as a deploy runs `manage.py migrate` before its workers."""
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
            cwd=ROOT,
            env={**self.environment({}, self.workdir / "unused.sqlite3"), **env},
            check=True,
            timeout=180,
        )

    def template_db(self) -> Path:
        if self._template_db is None:
            db = self.workdir / "template.sqlite3"
            subprocess.run(
                [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
                cwd=ROOT,
                env=self.environment({}, db),
                check=True,
                timeout=120,
            )
            self._template_db = db
        return self._template_db

    def get(self, config: dict[str, Any]) -> LiveServer:
        key = json.dumps(config, sort_keys=True)
        server = self._servers.get(key)
        if server is None or server.process.poll() is not None:
            server = self._servers[key] = self.start(config)
        return server

    def start(
        self,
        config: dict[str, Any],
        *,
        extra_env: dict[str, str] | None = None,
        db: Path | None = None,
        server: str = "daphne",
        port: int = 0,
        access_log: bool = True,
    ) -> LiveServer:
        """Start a server; with `db`, on that database (a restart), else on a fresh copy.

        `server` is daphne (the default, as `make run`) or uvicorn (`make run SERVER=uvicorn`);
        without `access_log` its log holds only what the application logs (the log tests).
        With `port`, on that port (a restart where clients keep their URL, as `make run` again).
        PUBLIC_URL is the server's own address unless `config` or `extra_env` say otherwise.
        """
        index = len(list(self.workdir.glob("server-*.log")))
        if db is None:
            db = self.workdir / f"server-{index}.sqlite3"
            shutil.copyfile(self.template_db(), db)
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(512)
        port = listener.getsockname()[1]
        os.set_inheritable(listener.fileno(), True)
        log_path = self.workdir / f"server-{index}.log"
        env = self.environment(config, db)
        # As `make run`: the links people follow come from PUBLIC_URL alone. A test names another
        # in `extra_env`, or leaves it out with `"PUBLIC_URL": None` in `config`.
        env["ASKSERVER_PUBLIC_URL"] = f"http://127.0.0.1:{port}"
        env.update(extra_env or {})
        with open(log_path, "wb") as log:
            fd = str(listener.fileno())
            command = {
                "daphne": [str(DAPHNE), "--fd", fd, *(["--access-log", "-"] if access_log else [])],
                "uvicorn": [str(UVICORN), "--fd", fd, "--log-level", "info"],
            }[server]
            process = subprocess.Popen(
                [*command, "tests.support.asgi:application"],
                cwd=ROOT,
                env=env,
                pass_fds=(listener.fileno(),),
                stdout=log,
                stderr=log,
            )
        listener.close()
        live = LiveServer(f"http://127.0.0.1:{port}", process, log_path, config, env, db)
        try:
            live.warm()
        except RuntimeError:
            # A server refused at start-up (a failed system check) may still hold its socket:
            # stopped here, so no process outlives the test that meant it not to start.
            terminate(process)
            raise
        return live

    def stop(self, server: LiveServer) -> None:
        terminate(server.process)

    def close(self) -> None:
        for server in self._servers.values():
            self.stop(server)


def terminate(process: subprocess.Popen[bytes]) -> None:
    """Stop a server the test started: SIGTERM (its own clean shutdown), SIGKILL after 10 s."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
