"""Example: a Streamable HTTP server whose questions go to the client's form, or else to this terminal.

    python examples/ask_server.py --port 8000

A client that declares form elicitation gets user_ask's form over the wire (2026-07-28
multi round-trip requests, or a pushed elicitation/create for initialize-era clients); one
that does not sends the question here, to the terminal the server was started from, through
a terminal-prompt on_elicit. Both paths can be watched side by side. HTTP rather than stdio,
because a stdio server has already spent stdin and stdout on the protocol.
"""

from __future__ import annotations

import argparse

from ask_mcp import MCPServer
from ask_mcp.cli.terminal import TerminalPrompt


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--host", default="127.0.0.1")
    options.add_argument("--port", type=int, default=8000)
    args = options.parse_args()
    server = MCPServer(
        name="ask-server-example",
        instructions="Ask before guessing.",
        tools={"Ask": {"timeout": 300}},
        on_elicit=TerminalPrompt(),
    )
    server.run("http", host=args.host, port=args.port)


if __name__ == "__main__":
    main()
