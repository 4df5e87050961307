"""The `ask-mcp` command's configuration: the config file and `--tool` flags, read and checked.

Pure: it reads JSON and names what is wrong (the line and column of bad JSON, the unknown key);
the toolkit registry checks the toolkits' own settings when the server is built.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final


class ConfigError(ValueError):
    """A config file or flag that cannot be used; the message says where and why."""


CONFIG_KEYS: Final = ("name", "version", "instructions", "tools")
DEFAULT_TOOLS: Final[dict[str, Any]] = {"Ask": {}}
"""What a server without any configured toolkit offers: user_ask."""
DEFAULT_NAME: Final = "ask-mcp"
DEFAULT_HTTP_PORT: Final = 8000


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


def _keys() -> str:
    return ", ".join(CONFIG_KEYS)
