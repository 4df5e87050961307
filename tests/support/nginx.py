"""Debian's nginx in front of live workers, configured by the docs' own ```nginx block; knows nothing of what the workers serve.

The block is read out of docs/deploy/workers.md (Deploying without losing a question) and changed
only where a test machine must differ from ask.example.com: the listening port (bound to
loopback), the certificate paths, the upstream addresses and `server_name`. Each change must find
its text exactly once, so a docs edit that moves one of them fails here instead of testing
something else. The test's own master process
runs from a temporary prefix (`nginx -p`), never the machine's nginx service, and is stopped by
its id. Missing nginx skips the test with a reason, or fails it under
ASKSERVER_REQUIRE_SERVICES=1 (CI).
"""

from __future__ import annotations

import getpass
import os
import re
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest

from tests.support.live import ROOT, terminate

NGINX: Final = Path("/usr/sbin/nginx")
"""Debian's nginx (`apt-get install nginx`; .ci/run installs it)."""
OPENSSL: Final = "openssl"
"""Makes the self-signed certificate (Debian's openssl, on every machine nginx is)."""
DEPLOY_PAGE: Final = ROOT / "docs" / "deploy" / "workers.md"
"""Where the block is read from: the deploy page is what runs."""
START_TIMEOUT: Final = 15.0
"""Seconds nginx may take to listen: it reads its configuration and binds in well under one."""


def require_nginx() -> None:
    """Skip without Debian's nginx; under ASKSERVER_REQUIRE_SERVICES=1 (CI) fail instead."""
    if NGINX.is_file() and os.access(NGINX, os.X_OK):
        return
    reason = f"{NGINX} is missing; the proxy tests run Debian's nginx (apt-get install nginx)"
    if os.environ.get("ASKSERVER_REQUIRE_SERVICES") == "1":
        pytest.fail(reason)
    # Outside CI a machine without nginx still runs everything else; CI (the flag above) fails.
    pytest.skip(reason)


def documented_block() -> str:
    """The deploy page's one ```nginx block, as written."""
    text = DEPLOY_PAGE.read_text()
    blocks = re.findall(r"^```nginx\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)
    page = DEPLOY_PAGE.relative_to(ROOT)
    assert len(blocks) == 1, f"{page} must hold exactly one ```nginx block, found {len(blocks)}"
    return str(blocks[0])


def _replace_once(text: str, pattern: str, replacement: str) -> str:
    changed, count = re.subn(pattern, replacement, text)
    assert count == 1, f"the deploy page's nginx block must contain {pattern!r} exactly once"
    return changed


def localised(
    block: str, *, port: int, certificate: Path, key: Path, upstreams: list[str], server_name: str
) -> str:
    """`block` with only the allowed changes: port, certificate paths, upstreams, server_name."""
    block = _replace_once(block, r"listen 443 ssl;", f"listen 127.0.0.1:{port} ssl;")
    block = _replace_once(block, r"ssl_certificate +\S+;", f"ssl_certificate {certificate};")
    block = _replace_once(block, r"ssl_certificate_key +\S+;", f"ssl_certificate_key {key};")
    block = _replace_once(block, r"server_name +\S+;", f"server_name {server_name};")
    servers = " ".join(f"server {address};" for address in upstreams)
    return _replace_once(
        block, r"upstream askserver \{[^}]*\}", f"upstream askserver {{ {servers} }}"
    )


def self_signed(directory: Path, host: str) -> tuple[Path, Path]:
    """A certificate for `host` (and 127.0.0.1) and its key, made by openssl for one day."""
    certificate, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            OPENSSL, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-days", "1", "-subj", f"/CN={host}",
            "-addext", f"subjectAltName=DNS:{host},IP:127.0.0.1",
            "-keyout", str(key), "-out", str(certificate),
        ],
        check=True,
        capture_output=True,
        timeout=30,
    )  # fmt: skip
    return certificate, key


@dataclass
class Nginx:
    """One nginx master of the test's own, serving `block` from `prefix`."""

    prefix: Path
    port: int
    process: subprocess.Popen[bytes]

    @property
    def error_log(self) -> Path:
        return self.prefix / "error.log"

    def log(self) -> str:
        return self.error_log.read_text(errors="replace") if self.error_log.exists() else ""

    def stop(self) -> None:
        # nginx's fast stop (SIGTERM): a graceful one (QUIT) would wait for any stream still open.
        terminate(self.process)


def main_config(prefix: Path) -> str:
    """nginx.conf around `block`, as Debian's wraps sites-enabled/: logs and temp files in `prefix`."""
    temp = {name: prefix / name for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")}
    for path in temp.values():
        path.mkdir(exist_ok=True)
    # As root the workers would run as nobody, who cannot write the private tmp folder; as
    # anyone else nginx ignores the directive with a notice.
    return f"""user {getpass.getuser()};
worker_processes 1;
pid {prefix / "nginx.pid"};
error_log {prefix / "error.log"} info;
events {{ worker_connections 1024; }}
http {{
    access_log {prefix / "access.log"};
    client_body_temp_path {temp["client_body"]};
    proxy_temp_path {temp["proxy"]};
    fastcgi_temp_path {temp["fastcgi"]};
    uwsgi_temp_path {temp["uwsgi"]};
    scgi_temp_path {temp["scgi"]};
    include {prefix / "askserver.conf"};
}}
"""


def start(prefix: Path, block: str, port: int) -> Nginx:
    """Check the configuration (`nginx -t`), start the master in the foreground, wait to listen."""
    (prefix / "askserver.conf").write_text(block)
    conf = prefix / "nginx.conf"
    conf.write_text(main_config(prefix))
    command = [str(NGINX), "-p", str(prefix), "-c", str(conf)]
    tested = subprocess.run([*command, "-t"], capture_output=True, text=True, timeout=30)
    assert tested.returncode == 0, f"nginx -t refused the deploy page's block:\n{tested.stderr}"
    with open(prefix / "stderr.log", "wb") as stderr:
        process = subprocess.Popen([*command, "-g", "daemon off;"], stdout=stderr, stderr=stderr)
    server = Nginx(prefix, port, process)
    deadline = time.monotonic() + START_TIMEOUT
    # nginx says nothing when it listens, so its port is tried every 50 ms, for 15 s at most;
    # a master that exited (a port taken meanwhile) ends the wait at once with its log.
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"nginx exited ({process.returncode}):\n{server.log()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server
        except OSError:
            if time.monotonic() > deadline:
                server.stop()
                raise RuntimeError(f"nginx did not listen on {port}:\n{server.log()}") from None
            time.sleep(0.05)
