"""Benchmark settings: the product's own settings, plus the overrides a suite passes as JSON."""

from __future__ import annotations

import json
import os

from askserver.settings import *  # noqa: F403

ASK_MCP = {**ASK_MCP, **json.loads(os.environ.get("ASKSERVER_BENCH_CONFIG", "{}"))}  # noqa: F405
