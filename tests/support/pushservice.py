"""A push service on loopback, as a browser vendor's would take a server's pushes: it checks the VAPID signature (RFC 8292) and decrypts each message (RFC 8291).

A `Device` is what a browser holds after `PushManager.subscribe`: a P-256 key pair, an auth
secret and an endpoint on this service, made here or handed over from a real browser (its keys
exported from WebCrypto). The service keeps every push it gets (the headers, the plaintext
JSON, whether the VAPID token verified against the key the subscription was made for) and
answers with scripted statuses per device (201 by default; 404 or 410 mean "gone"). A forward
hook lets a test hand each plaintext on to a real browser (DevTools'
`ServiceWorker.deliverPushMessage`). Written from the RFCs, not from the server's code:
http_ece (the RFC 8188 reference library) decrypts, `cryptography` verifies the ES256 token.
"""

from __future__ import annotations

import base64
import http.server
import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Device:
    """A subscription as a browser holds it: the endpoint, the receiving key pair, the auth secret."""

    endpoint: str
    private_key: ec.EllipticCurvePrivateKey
    auth: bytes
    server_key: str = ""
    """The applicationServerKey it was subscribed with (RFC 8292 4: pushes must be signed by it)."""
    statuses: list[int] = field(default_factory=lambda: [201])

    @property
    def p256dh(self) -> str:
        point = self.private_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return b64url(point)

    def subscription(self, name: str) -> dict[str, Any]:
        """What `PushSubscription.toJSON()` gives, with the name Settings adds."""
        return {
            "endpoint": self.endpoint,
            "keys": {"p256dh": self.p256dh, "auth": b64url(self.auth)},
            "name": name,
        }


@dataclass
class Push:
    """One push the service got."""

    device: Device
    headers: dict[str, str]
    status: int
    vapid: str
    """"ok", or why the token was refused."""
    payload: dict[str, Any] | None
    """The decrypted JSON; None when it could not be decrypted."""


def verify_vapid(authorization: str, audience: str, server_key: str) -> str:
    """ "ok" when `authorization` is a valid `vapid t=…, k=…` for `audience`, signed by `server_key`."""
    scheme, _, rest = authorization.partition(" ")
    if scheme.lower() != "vapid":
        return f"scheme {scheme!r} is not vapid"
    parts = dict(p.strip().split("=", 1) for p in rest.split(",") if "=" in p)
    token, key = parts.get("t", ""), parts.get("k", "")
    if server_key and key != server_key:
        return "k is not the key the subscription was made with"
    try:
        header_b64, claims_b64, signature_b64 = token.split(".")
        header = json.loads(unb64url(header_b64))
        claims = json.loads(unb64url(claims_b64))
        public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(key))
        raw = unb64url(signature_b64)
        signature = encode_dss_signature(
            int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")
        )
        public.verify(signature, f"{header_b64}.{claims_b64}".encode(), ec.ECDSA(hashes.SHA256()))
    except (ValueError, InvalidSignature) as exc:
        return f"bad token: {type(exc).__name__} {exc}"
    if header.get("alg") != "ES256":
        return f"alg {header.get('alg')!r}"
    if claims.get("aud") != audience:
        return f"aud {claims.get('aud')!r} is not {audience!r}"
    if not time.time() < claims.get("exp", 0) <= time.time() + 86_400:
        return f"exp {claims.get('exp')!r} is not within 24 hours"
    if not str(claims.get("sub", "")).startswith(("mailto:", "https://")):
        return f"sub {claims.get('sub')!r}"
    return "ok"


class PushService:
    """A loopback HTTP push service; `pushes` keeps what arrived."""

    def __init__(self) -> None:
        self.devices: dict[str, Device] = {}
        self.pushes: list[Push] = []
        self.arrived = threading.Condition()
        self.forward: Callable[[Device, bytes], None] | None = None
        service = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                device = service.devices.get(self.path.rsplit("/", 1)[-1])
                if device is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                headers = {key.lower(): value for key, value in self.headers.items()}
                vapid = verify_vapid(
                    headers.get("authorization", ""), service.origin, device.server_key
                )
                plaintext: bytes | None = None
                if headers.get("content-encoding") == "aes128gcm":
                    try:
                        plaintext = http_ece.decrypt(
                            body,
                            private_key=device.private_key,
                            auth_secret=device.auth,
                            version="aes128gcm",
                        )
                    except Exception:  # recorded as undecryptable: the test's assertion fails
                        plaintext = None
                statuses = device.statuses
                status = statuses.pop(0) if len(statuses) > 1 else statuses[0]
                payload = json.loads(plaintext) if plaintext is not None else None
                with service.arrived:
                    service.pushes.append(Push(device, headers, status, vapid, payload))
                    service.arrived.notify_all()
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()
                if status < 300 and plaintext is not None and service.forward is not None:
                    service.forward(device, plaintext)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def device(self, server_key: str, *, statuses: list[int] | None = None) -> Device:
        """A new subscription, as a browser makes one for a server with `server_key`."""
        made = Device(
            endpoint=f"{self.origin}/push/{uuid.uuid4().hex}",
            private_key=ec.generate_private_key(ec.SECP256R1()),
            auth=uuid.uuid4().bytes,
            server_key=server_key,
            statuses=statuses or [201],
        )
        return self.adopt(made)

    def adopt(self, device: Device) -> Device:
        """Serve `device` (one whose keys a browser made)."""
        self.devices[device.endpoint.rsplit("/", 1)[-1]] = device
        return device

    def of(self, device: Device) -> list[Push]:
        return [push for push in self.pushes if push.device is device]

    def wait_for(self, test: Callable[[list[Push]], bool], timeout: float = 20.0) -> list[Push]:
        """Wait (bounded) until `test(pushes)` holds; the pushes then."""
        with self.arrived:
            self.arrived.wait_for(lambda: test(self.pushes), timeout)
            return list(self.pushes)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
