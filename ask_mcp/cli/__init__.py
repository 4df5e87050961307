"""The `ask-mcp` command: a server from a config file and `--tool` flags, served on stdio or HTTP.

    ask-mcp --config=assistant.json
    ask-mcp --tool='Ask={"timeout":120}' --tool='FileSystem={"root":"/srv/notes"}'
    ask-mcp --transport=http --port=8000
    ask-mcp --inbox                  # stdio, plus the browser inbox on loopback for questions

A config file is a JSON object with `name`, `version`, `instructions` and `tools` (toolkit
name -> settings, `"prefix"` beside them). `--tool` entries are added to (and replace the same
toolkit in) the file's. Mistakes end the command with exit status 2 and a message naming the
line and column of bad JSON, the unknown key, or the toolkit and its valid settings.
`python manage.py ask_mcp` takes the same options inside a Django project.

The package holds the command (options here, `config` reading them, `runner` building the
server and serving it) and the terminal prompt. It imports the facade and what lies below it,
never the wiring above.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from ask_mcp.cli.config import DEFAULT_HTTP_PORT, DEFAULT_NAME
from ask_mcp.cli.runner import run

__all__ = ["add_arguments", "main", "parser", "run"]
from ask_mcp.toolkits import available


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `ask-mcp`, shared with `manage.py ask_mcp`."""
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="JSON file with name, version, instructions and tools",
    )
    parser.add_argument(
        "--tool",
        metavar="NAME[=JSON]",
        action="append",
        default=[],
        help="plug a toolkit with its settings, e.g. 'Ask={\"timeout\":120}' (repeatable); "
        f"toolkits: {', '.join(sorted(available()))}, or a dotted path",
    )
    parser.add_argument("--name", help=f"the server's name (default {DEFAULT_NAME!r})")
    parser.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio (default): JSON-RPC on stdin/stdout; http: the askserver /mcp endpoint",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="HTTP address to bind (default 127.0.0.1)"
    )
    parser.add_argument(
        "--port",
        type=int,
        help=f"HTTP port (default {DEFAULT_HTTP_PORT} for --transport=http; a free port for "
        "--inbox; 0 picks a free one)",
    )
    parser.add_argument(
        "--inbox",
        action="store_true",
        help="with stdio: also serve the browser inbox over HTTP on loopback and send "
        "questions there (the URL is printed on stderr)",
    )


def parser() -> argparse.ArgumentParser:
    command = argparse.ArgumentParser(
        prog="ask-mcp",
        description="Serve an MCP server whose user_ask tool puts questions to a person.",
        epilog="Logs and messages go to stderr; with stdio, stdout carries only the protocol.",
    )
    add_arguments(command)
    return command


def main(argv: Sequence[str] | None = None) -> None:
    command = parser()
    options = command.parse_args(argv)
    run(options, command.error)


if __name__ == "__main__":
    main()
