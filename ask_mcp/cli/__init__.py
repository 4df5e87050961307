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
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from ask_mcp.cli.runner import is_loopback
from ask_mcp.server.app import MCPServer
from ask_mcp.toolkits import ToolkitConfigError, available

CONFIG_KEYS: Final = ("name", "version", "instructions", "tools")
DEFAULT_TOOLS: Final[dict[str, Any]] = {"Ask": {}}
"""What a server without any configured toolkit offers: user_ask."""
DEFAULT_NAME: Final = "ask-mcp"
DEFAULT_HTTP_PORT: Final = 8000


class ConfigError(ValueError):
    """A config file or flag that cannot be used; the message says where and why."""


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


def read_config(path: str) -> dict[str, Any]:
    """The config file at `path`, checked.

    Raises:
        ConfigError: unreadable, not JSON (with line and column), unknown keys, wrong types.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config file ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: the config file is not UTF-8 text") from exc
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from exc
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: the config must be a JSON object with {_keys()}")
    unknown = sorted(set(config) - set(CONFIG_KEYS))
    if unknown:
        raise ConfigError(
            f"{path}: unknown key(s) {', '.join(map(repr, unknown))}; valid keys: {_keys()}"
        )
    for key in ("name", "version", "instructions"):
        if key in config and not isinstance(config[key], str):
            raise ConfigError(f"{path}: {key!r} must be a string")
    tools = config.get("tools", {})
    if not isinstance(tools, dict):
        raise ConfigError(f"{path}: 'tools' must be an object mapping toolkit names to settings")
    return config


def read_tool_flag(flag: str) -> tuple[str, dict[str, Any]]:
    """`NAME` or `NAME=JSON-object` from one --tool flag.

    Raises:
        ConfigError: no name, or settings that are not a JSON object (with the column).
    """
    name, _, raw = flag.partition("=")
    name = name.strip()
    if not name:
        raise ConfigError(f"--tool {flag!r}: give a toolkit name, as in --tool='Ask={{}}'")
    if not raw.strip():
        return name, {}
    try:
        settings = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"--tool {name}: invalid JSON at column {exc.colno}: {exc.msg} (in {raw!r})"
        ) from exc
    if not isinstance(settings, dict):
        raise ConfigError(f"--tool {name}: settings must be a JSON object, got {raw!r}")
    return name, settings


def build_server(options: argparse.Namespace) -> MCPServer:
    """The server the options describe.

    Raises:
        ConfigError: a bad config file or flag.
        ToolkitConfigError: an unknown toolkit or setting.
    """
    config = read_config(options.config) if options.config else {}
    tools: dict[str, Any] = dict(config.get("tools", {}))
    for flag in options.tool:
        name, settings = read_tool_flag(flag)
        tools[name] = settings
    return MCPServer(
        name=options.name or config.get("name") or DEFAULT_NAME,
        version=config.get("version", "0.1.0"),
        instructions=config.get("instructions"),
        tools=tools or DEFAULT_TOOLS,
    )


def run(options: argparse.Namespace, fail: Any) -> None:
    """Build and serve; `fail(message)` reports a usage error and does not return."""
    if options.inbox and options.transport != "stdio":
        fail("--inbox goes with --transport=stdio; over HTTP the inbox is served anyway")
    if options.inbox and not is_loopback(options.host):
        fail(f"--inbox serves on loopback only; {options.host!r} is not a loopback address")
    try:
        server = build_server(options)
    except (ConfigError, ToolkitConfigError) as exc:
        fail(str(exc))
        return
    port = options.port
    if port is None:
        port = 0 if options.inbox else DEFAULT_HTTP_PORT
    if options.transport == "http" and not is_loopback(options.host):
        print(
            f"ask-mcp: warning: serving on {options.host}, not loopback: put authentication "
            "and TLS in front of it and list the host in ASKSERVER_ALLOWED_HOSTS",
            file=sys.stderr,
        )
    server.run(options.transport, host=options.host, port=port, inbox=options.inbox)


def _keys() -> str:
    return ", ".join(CONFIG_KEYS)


def main(argv: Sequence[str] | None = None) -> None:
    command = parser()
    options = command.parse_args(argv)
    run(options, command.error)


if __name__ == "__main__":
    main()
