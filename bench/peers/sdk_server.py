"""The official SDK's MCPServer with a Resolve-based ask tool: the peer every figure is compared to.

Run with the SDK's own venv: `python sdk_server.py --port 9001` (uvicorn, one process).
"""

from __future__ import annotations

import argparse
import json
from typing import Annotated

import uvicorn
from mcp.server.mcpserver import AcceptedElicitation, Elicit, ElicitationResult, MCPServer, Resolve
from pydantic import BaseModel

server = MCPServer("sdk-peer", version="2.3.0")


class AskForm(BaseModel):
    answer: str


async def ask_user(message: str) -> Elicit[AskForm]:
    return Elicit(message, AskForm)


@server.tool()
async def user_ask(
    message: str, reply: Annotated[ElicitationResult[AskForm], Resolve(ask_user)]
) -> str:
    """Ask the user a question and wait for the answer."""
    if isinstance(reply, AcceptedElicitation):
        return json.dumps({"answer": reply.data.answer}, separators=(",", ":"))
    return f"The user {reply.action}d."


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    app = server.streamable_http_app(json_response=True, host="127.0.0.1")
    # The same uvicorn stack as askserver's peers in bench/run.py: named, so a missing package
    # fails here instead of quietly falling back to the slower pure-Python defaults.
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=args.port,
        log_level="warning",
        access_log=False,
        http="httptools",
        loop="uvloop",
    )
