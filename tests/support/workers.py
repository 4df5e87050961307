"""Several workers on one PostgreSQL database and one Redis, as a deploy runs them; services a test can cut.

`shared_services` makes what workers share: a fresh PostgreSQL database, migrated as a deploy
migrates before its workers start, and a Redis key prefix of its own, both named in the
environment the workers are started with; with `cuttable`, each service is reached through
a loopback proxy (tests/support/proxy.py) the test can cut and restore. `started` starts
workers on that environment and stops them afterwards; `shared_workers` is the two together.
Skipped with a reason when Redis or PostgreSQL is not running (tests/support/services.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

from tests.support.live import LiveServer, LiveServers
from tests.support.proxy import TcpProxy
from tests.support.services import POSTGRES, REDIS, postgres_database, require_services


@dataclass
class Services:
    """What the workers share, as their environment names it."""

    env: dict[str, str]
    """DATABASE_URL, ASKSERVER_REDIS_URL, ASKSERVER_REDIS_PREFIX and the caller's own variables."""
    proxies: tuple[TcpProxy, TcpProxy] | None = None

    @property
    def redis(self) -> TcpProxy:
        """The proxy in front of Redis (services made with `cuttable`)."""
        assert self.proxies is not None, "made without cuttable=True: nothing to cut"
        return self.proxies[0]

    @property
    def postgres(self) -> TcpProxy:
        """The proxy in front of PostgreSQL (services made with `cuttable`)."""
        assert self.proxies is not None, "made without cuttable=True: nothing to cut"
        return self.proxies[1]


@dataclass
class SharedWorkers:
    """Workers started on the same services, in the order they started."""

    servers: tuple[LiveServer, ...]
    services: Services

    @property
    def a(self) -> LiveServer:
        return self.servers[0]

    @property
    def b(self) -> LiveServer:
        return self.servers[1]

    @property
    def env(self) -> dict[str, str]:
        return self.services.env

    @property
    def redis(self) -> TcpProxy:
        return self.services.redis

    @property
    def postgres(self) -> TcpProxy:
        return self.services.postgres


@contextmanager
def shared_services(
    live_servers: LiveServers,
    *,
    prefix: str = "askmcp-test",
    cuttable: bool = False,
    env: Mapping[str, str] | None = None,
) -> Iterator[Services]:
    """A fresh, migrated PostgreSQL database and a Redis prefix (`prefix` plus a random tag);
    `env` adds variables every worker gets. The database is dropped afterwards."""
    require_services()
    with ExitStack() as stack:
        redis_at, postgres_at = REDIS, POSTGRES
        proxies = None
        if cuttable:
            proxies = (TcpProxy(REDIS), TcpProxy(POSTGRES))
            for proxy in proxies:
                stack.callback(proxy.close)  # closed last, after the database is dropped
                proxy.restore()
            redis_at, postgres_at = ("127.0.0.1", proxies[0].port), ("127.0.0.1", proxies[1].port)
        database_url = stack.enter_context(postgres_database())
        shared = {
            "DATABASE_URL": database_url.replace(f":{POSTGRES[1]}/", f":{postgres_at[1]}/"),
            "ASKSERVER_REDIS_URL": f"redis://{redis_at[0]}:{redis_at[1]}/0",
            "ASKSERVER_REDIS_PREFIX": f"{prefix}-{uuid.uuid4().hex[:8]}",
            **(env or {}),
        }
        live_servers.migrate(shared)
        yield Services(shared, proxies)


@contextmanager
def started(
    live_servers: LiveServers, config: dict[str, Any], env: dict[str, str], *, count: int = 2
) -> Iterator[tuple[LiveServer, ...]]:
    """`count` workers with `config` on the services `env` names, started one by one (so those
    that started are stopped when the next one fails to), all stopped afterwards."""
    servers: list[LiveServer] = []
    try:
        for _ in range(count):  # one by one, so `servers` holds every one to stop
            servers.append(live_servers.start(config, extra_env=env))  # noqa: PERF401
        yield tuple(servers)
    finally:
        for server in servers:
            live_servers.stop(server)


@contextmanager
def shared_workers(
    live_servers: LiveServers,
    config: dict[str, Any],
    *,
    count: int = 2,
    prefix: str = "askmcp-test",
    cuttable: bool = False,
    env: Mapping[str, str] | None = None,
) -> Iterator[SharedWorkers]:
    """`count` workers with `config` on fresh shared services (see `shared_services`)."""
    with (
        shared_services(live_servers, prefix=prefix, cuttable=cuttable, env=env) as services,
        started(live_servers, config, services.env, count=count) as servers,
    ):
        yield SharedWorkers(servers, services)
