"""The package root, the engine and the protocol import without Django or Channels."""

from __future__ import annotations

import json
import os
import subprocess
import sys

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
