"""The `ask-mcp` configuration: a config file and `--tool` flags read and checked, each mistake naming where and why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ask_mcp.cli.config import CONFIG_KEYS, ConfigError, read_config, read_tool_flag


def written(tmp_path: Path, content: str | bytes) -> str:
    path = tmp_path / "assistant.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return str(path)


def test_a_config_file_with_the_known_keys_is_read_as_given(tmp_path: Path) -> None:
    config = {"name": "helper", "version": "2", "instructions": "Be brief.", "tools": {"Ask": {}}}
    assert read_config(written(tmp_path, json.dumps(config))) == config
    assert set(config) == set(CONFIG_KEYS)


@pytest.mark.parametrize(
    "content, words",
    [
        (b"\xff\xfe", "is not UTF-8 text"),
        ('{"name": "x",\n  "tools": }', "invalid JSON at line 2 column 12"),
        ("[]", "must be a JSON object with name, version, instructions, tools"),
        ('{"nmae": "x"}', "unknown key(s) 'nmae'; valid keys: name, version"),
        ('{"version": 2}', "'version' must be a string"),
        ('{"tools": ["Ask"]}', "'tools' must be an object"),
    ],
)
def test_a_config_file_that_cannot_be_used_says_where_and_why(
    tmp_path: Path, content: Any, words: str
) -> None:
    path = written(tmp_path, content)
    with pytest.raises(ConfigError) as refused:
        read_config(path)
    assert str(refused.value).startswith(f"{path}: ") and words in str(refused.value)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the config file"):
        read_config(str(tmp_path / "nope.json"))


def test_a_tool_flag_is_a_name_with_optional_json_settings() -> None:
    assert read_tool_flag("Ask") == ("Ask", {})
    assert read_tool_flag(" FileSystem = ") == ("FileSystem", {})
    assert read_tool_flag('FileSystem={"root": "/srv"}') == ("FileSystem", {"root": "/srv"})


@pytest.mark.parametrize(
    "flag, words",
    [
        ("={}", "give a toolkit name"),
        ("Ask={timeout: 3}", "--tool Ask: invalid JSON at column 2"),
        ("Ask=[1]", "settings must be a JSON object, got '[1]'"),
    ],
)
def test_a_tool_flag_that_cannot_be_used_is_named(flag: str, words: str) -> None:
    with pytest.raises(ConfigError) as refused:
        read_tool_flag(flag)
    assert words in str(refused.value)
