"""Fixtures: live servers per configuration, and the official SDK client's helpers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.live import LiveServer, LiveServers

PROBE_CONFIG: dict[str, Any] = {
    "TOOLKITS": {"Ask": {}, "tests.support.probe.Probe": {}},
    "OBSERVER": "tests.support.probe.observer",
    "ALLOW_ANONYMOUS_LOOPBACK": True,
}


@pytest.fixture(scope="session")
def live_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServers]:
    servers = LiveServers(tmp_path_factory.mktemp("live"))
    yield servers
    servers.close()


@pytest.fixture(scope="session")
def live(live_servers: LiveServers) -> LiveServer:
    """The default live server: user_ask plus the probe toolkit."""
    return live_servers.get(PROBE_CONFIG)


@pytest.fixture(scope="session")
def mcp_url(live: LiveServer) -> str:
    return live.mcp_url
