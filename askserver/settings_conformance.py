"""Settings for the official conformance suite's runs: the project's settings plus the Conformance fixture toolkit.

`make conformance` (.ci/conformance) starts the server with these; the default server never
loads the fixture.
"""

from __future__ import annotations

from askserver.settings import *  # noqa: F403

ASK_MCP = {"TOOLKITS": {"Ask": {}, "Conformance": {}}}
