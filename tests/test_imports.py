"""The package root, the engine and the protocol import without Django or Channels; the one-release aliases still import."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

import pytest

CODE = """
import json, sys
import ask_mcp, ask_mcp.server, ask_mcp.protocol, ask_mcp.mcpserver
print(json.dumps(sorted(m for m in sys.modules if m.startswith(("django", "channels")))))
"""


def test_importing_the_engine_loads_neither_django_nor_channels() -> None:
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    out = subprocess.run(
        [sys.executable, "-c", CODE],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=True,
    )
    assert json.loads(out.stdout) == []


@pytest.mark.parametrize(
    "old, new, name",
    [
        ("ask_mcp.inbox", "ask_mcp.web.elicit", "on_elicit"),
        ("ask_mcp.recorder", "ask_mcp.records.recorder", "recorder"),
        ("ask_mcp.terminal", "ask_mcp.cli.terminal", "TerminalPrompt"),
    ],
)
def test_the_old_paths_still_work_for_one_release_and_say_where_things_went(
    old: str, new: str, name: str
) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        alias = importlib.import_module(old)
    assert getattr(alias, name) is getattr(importlib.import_module(new), name)
