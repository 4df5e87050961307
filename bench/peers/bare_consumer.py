"""The ceiling: a bare Channels consumer doing an MRTR ask call's wire work and nothing else.

No auth, no database, no parked handler: the first tools/call is answered `input_required` with
an HMAC-sealed requestState, the retry is checked and answered with the form's content. What
askserver spends beyond this is the product (auth, recording, the elicitation table).

    daphne -b 127.0.0.1 -p 9002 bench.peers.bare_consumer:application
    uvicorn bench.peers.bare_consumer:application --port 9002
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from typing import Any

import django
from django.conf import settings

if not settings.configured:
    settings.configure(
        DEBUG=False,
        ALLOWED_HOSTS=["*"],
        SECRET_KEY="bench-bare-consumer",
        INSTALLED_APPS=["channels"],
        USE_TZ=True,
    )
    django.setup()

from channels.generic.http import AsyncHttpConsumer
from channels.routing import ProtocolTypeRouter, URLRouter
from django.urls import path

KEY = b"bench-bare-consumer-state-key"


def _seal(data: dict[str, Any]) -> str:
    body = base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode())
    tag = hmac.new(KEY, body, hashlib.sha256).digest()
    return (body + b"." + base64.urlsafe_b64encode(tag)).decode()


def _open(state: str) -> dict[str, Any] | None:
    body, _, tag = state.encode().partition(b".")
    if not hmac.compare_digest(
        base64.urlsafe_b64decode(tag), hmac.new(KEY, body, hashlib.sha256).digest()
    ):
        return None
    opened: dict[str, Any] = json.loads(base64.urlsafe_b64decode(body))
    return opened


class AskConsumer(AsyncHttpConsumer):  # type: ignore[misc]
    async def handle(self, body: bytes) -> None:
        message = json.loads(body)
        params = message["params"]
        if "requestState" not in params:
            key = secrets.token_hex(8)
            result: dict[str, Any] = {
                "resultType": "input_required",
                "inputRequests": {
                    key: {
                        "method": "elicitation/create",
                        "params": {
                            "mode": "form",
                            "message": params["arguments"]["message"],
                            "requestedSchema": {
                                "type": "object",
                                "properties": {"answer": {"type": "string"}},
                                "required": ["answer"],
                            },
                        },
                    }
                },
                "requestState": _seal({"k": key, "n": params["name"]}),
            }
        else:
            state = _open(params["requestState"])
            if state is None:
                result = {"content": [{"type": "text", "text": "bad state"}], "isError": True}
            else:
                answer = params["inputResponses"][state["k"]]["content"]
                text = json.dumps(answer, separators=(",", ":"))
                result = {"content": [{"type": "text", "text": text}], "isError": False}
        reply = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
        await self.send_response(
            200,
            reply,
            headers=[(b"content-type", b"application/json")],
        )


application = ProtocolTypeRouter({"http": URLRouter([path("mcp", AskConsumer.as_asgi())])})
