"""The built wheel, installed into a fresh virtual environment (not editable), serves the whole product.

Slow (a build and an install from the package index, about a minute): marked `slow`, and still
part of `make test`. The wheel is built from a copy of the working tree, so setuptools' build
folder in the tree can neither feed nor take from it. The installed server runs from an empty
folder with nothing of the checkout on its path: its templates (the project's sign-in, 403 and
404 pages too), static files and migrations must all come from the wheel, and its data from
ASKSERVER_VAR_DIR.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest

from tests.support.live import ROOT
from tests.support.wire import headers_for, request_body

pytestmark = pytest.mark.slow

SKIP: tuple[str, ...] = (
    ".git", ".venv", "var", "build", "dist", "*.egg-info", "test-output", ".cache", "bench",
    "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", "node_modules",
)  # fmt: skip
"""What the copy of the tree leaves out: nothing the wheel is built from."""


@dataclass
class Installed:
    venv: Path
    home: Path
    data: Path
    env: dict[str, str]

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)

    def run(self, *args: str) -> str:
        done = subprocess.run(
            [self.bin("askserver"), *args],
            cwd=self.home,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*SKIP))
    dist = work / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "-w",
            str(dist),
            str(source),
        ],
        check=True,
        timeout=300,
    )
    (wheel,) = dist.glob("askserver-*.whl")
    venv = work / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True, timeout=120)
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", f"{wheel}[uvicorn]"],
        check=True,
        timeout=600,
    )
    home = work / "elsewhere"
    home.mkdir()
    data = work / "data"
    env = {
        "PATH": f"{venv / 'bin'}:/usr/bin:/bin",
        "HOME": str(home),
        "ASKSERVER_VAR_DIR": str(data),
    }
    return Installed(venv, home, data, env)


@contextlib.contextmanager
def serving(installed: Installed, server: str) -> Iterator[str]:
    """The installed daphne or uvicorn on a loopback socket; yields its base URL."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    os.set_inheritable(listener.fileno(), True)
    fd = str(listener.fileno())
    command = {
        "daphne": [installed.bin("daphne"), "--fd", fd],
        "uvicorn": [installed.bin("uvicorn"), "--fd", fd, "--no-access-log"],
    }[server]
    log = installed.home / f"{server}.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [*command, "askserver.asgi:application"],
            cwd=installed.home,
            env=installed.env,
            pass_fds=(listener.fileno(),),
            stdout=out,
            stderr=out,
        )
    listener.close()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def test_the_installed_wheel_serves_sign_in_inbox_static_files_and_mcp(
    installed: Installed,
) -> None:
    installed.run("migrate", "--noinput", "-v0")
    out = installed.run("quickstart", "--url", "http://127.0.0.1/")
    password = re.search(r"Password:\s+(\S+)", out)
    token = re.search(r"MCP token:\s+(askmcp_\S+)", out)
    assert password and token, out
    # The data folder is the one named, and nothing was written into the installation.
    assert (installed.data / "db.sqlite3").exists()
    assert (installed.data / "secret_key").exists()
    assert not list(installed.venv.rglob("db.sqlite3"))
    config = installed.run("askserver_config")
    assert re.search(rf"ASKSERVER_VAR_DIR\s+{re.escape(str(installed.data))}\s", config)

    with serving(installed, "daphne") as base, httpx2.Client(base_url=base, timeout=120) as http:
        login = http.get("/accounts/login/")  # the project's own sign-in page, from the wheel
        assert login.status_code == 200 and "Sign in" in login.text, login.text
        signed_in = http.post(
            "/accounts/login/",
            data={
                "username": "admin",
                "password": password.group(1),
                "csrfmiddlewaretoken": str(http.cookies["csrftoken"]),
                "next": "/",
            },
        )
        assert signed_in.status_code == 302 and signed_in.headers["location"] == "/"
        inbox = http.get("/")
        assert inbox.status_code == 200 and "inbox" in inbox.text.lower()
        missing = http.get("/no/such/page/")
        assert missing.status_code == 404 and "Back to the inbox" in missing.text  # 404.html
        assert http.get("/static/ask_mcp/inbox.css").status_code == 200
        assert http.get("/static/admin/css/base.css").status_code == 200
        assert http.get("/admin/").status_code == 200
        assert http.get("/health/ready").json()["status"] == "ok"
        body = request_body("tools/list", {})
        listed = http.post(
            "/mcp",
            json=body,
            headers={**headers_for(body), "authorization": f"Bearer {token.group(1)}"},
        )
        assert listed.status_code == 200, listed.text
        assert [tool["name"] for tool in listed.json()["result"]["tools"]] == ["user_ask"]

    with serving(installed, "uvicorn") as base, httpx2.Client(base_url=base, timeout=120) as http:
        assert http.get("/accounts/login/").status_code == 200
        assert http.get("/static/ask_mcp/inbox.css").status_code == 200
        assert http.get("/static/admin/css/base.css").status_code == 200


def test_the_wheel_carries_the_project_pages_and_the_migrations(installed: Installed) -> None:
    listing = subprocess.run(
        [
            installed.bin("python"),
            "-c",
            "import importlib.resources as r;"
            "print(*sorted(str(p) for p in r.files('askserver').joinpath('templates').rglob('*.html')));"
            "print(*sorted(p.name for p in r.files('ask_mcp').joinpath('migrations').iterdir()))",
        ],
        cwd=installed.home,
        env=installed.env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    for page in ("403.html", "404.html", "registration/login.html"):
        assert f"templates/{page}" in listing
    assert "0001_initial.py" in listing
