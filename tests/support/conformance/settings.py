"""Settings for the official conformance suite's runs: the project's settings plus the Conformance fixture toolkit.

`make conformance` (.ci/conformance.py) starts the server with these, with the repository root
on PYTHONPATH so that the fixture, which is no part of the wheel, imports by its dotted path; the
default server never loads it.
"""

from __future__ import annotations

from askserver.settings import *  # noqa: F403
from tests.support.conformance import TOOLKIT

# The suite connects without a token from loopback, and expects the bare protocol: no inbox, so a
# client without form elicitation is told so (-32021) rather than held for a browser answer.
ASK_MCP = {"TOOLKITS": {"Ask": {}, TOOLKIT: {}}, "ALLOW_ANONYMOUS_LOOPBACK": True}
