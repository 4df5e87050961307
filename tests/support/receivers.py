"""A webhook receiver on loopback, verifying signatures as docs/answering/reach.md tells receivers to.

It keeps every request it gets (headers, raw body, whether the signature verified) and answers
with scripted statuses; a status of 3xx answers with a Location header. Its verification is
written here from that page's description, not imported from the server.
"""

from __future__ import annotations

import hashlib
import hmac
import http.server
import json
import threading
import time
from dataclasses import dataclass
from typing import Any


def verify(secret: str, header: str, body: bytes, *, tolerance: float = 300.0) -> bool:
    """The docs' recipe: HMAC-SHA256 over "<t>." + body; refuse timestamps off by > tolerance."""
    fields = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    try:
        timestamp = int(fields["t"])
    except (KeyError, ValueError):
        return False
    if abs(time.time() - timestamp) > tolerance:
        return False
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return hmac.compare_digest(expected.hexdigest(), fields.get("v1", ""))


@dataclass
class Received:
    headers: dict[str, str]
    raw: bytes
    verified: bool | None

    @property
    def body(self) -> dict[str, Any]:
        parsed: dict[str, Any] = json.loads(self.raw)
        return parsed


class Receiver:
    """A loopback HTTP server that records what it is sent and answers with scripted statuses."""

    def __init__(self, statuses: list[int], *, secret: str | None = None) -> None:
        self.statuses = statuses
        self.secret = secret
        self.received: list[Received] = []
        self.got = threading.Event()
        self.arrived = threading.Condition()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers["content-length"])
                raw = self.rfile.read(length)
                headers = {key.lower(): value for key, value in self.headers.items()}
                verified = None
                if receiver.secret is not None:
                    verified = verify(receiver.secret, headers.get("askserver-signature", ""), raw)
                with receiver.arrived:
                    receiver.received.append(Received(headers, raw, verified))
                    receiver.arrived.notify_all()
                statuses = receiver.statuses
                status = statuses.pop(0) if len(statuses) > 1 else statuses[0]
                self.send_response(status)
                if 300 <= status < 400:
                    self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
                self.send_header("Content-Length", "0")
                self.end_headers()
                receiver.got.set()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [each.body for each in self.received]

    def wait_for(self, count: int, timeout: float) -> bool:
        """Wait (bounded) until `count` requests arrived."""
        with self.arrived:
            return self.arrived.wait_for(lambda: len(self.received) >= count, timeout)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
