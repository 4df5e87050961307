"""Settings for the official conformance suite's runs: the project's settings plus the Conformance fixture toolkit.

`make conformance` (.ci/conformance) starts the server with these; the default server never
loads the fixture.
"""

from __future__ import annotations

from askserver.settings import *  # noqa: F403

# The suite connects without a token from loopback, and expects the bare protocol: no inbox, so a
# client without form elicitation is told so (-32021) rather than held for a browser answer.
ASK_MCP = {"TOOLKITS": {"Ask": {}, "Conformance": {}}, "ALLOW_ANONYMOUS_LOOPBACK": True}
