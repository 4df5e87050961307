"""The machine's Redis and PostgreSQL for multi-worker tests: found, or skipped with a reason.

`make test` skips these tests when a service is down; CI sets ASKSERVER_REQUIRE_SERVICES=1 so a
missing service fails instead of skipping.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

REDIS = ("127.0.0.1", 6379)
POSTGRES = ("127.0.0.1", 5432)


def _reachable(address: tuple[str, int]) -> bool:
    try:
        with socket.create_connection(address, timeout=2):
            return True
    except OSError:
        return False


def require_services() -> None:
    missing = [
        name
        for name, address in (("Redis", REDIS), ("PostgreSQL", POSTGRES))
        if not _reachable(address)
    ]
    if not missing:
        return
    reason = (
        f"{' and '.join(missing)} not reachable on 127.0.0.1; multi-worker tests need both "
        "(.ci/run starts them)"
    )
    if os.environ.get("ASKSERVER_REQUIRE_SERVICES") == "1":
        pytest.fail(reason)
    # Outside CI a laptop without Redis/PostgreSQL still runs everything else; CI sets the
    # variable above, so there a missing service fails the run instead of skipping.
    pytest.skip(reason)


@contextmanager
def postgres_database() -> Iterator[str]:
    """A fresh, empty PostgreSQL database for one test session; dropped afterwards."""
    import psycopg

    name = f"askmcp_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(
        host=POSTGRES[0], port=POSTGRES[1], user="postgres", dbname="postgres", autocommit=True
    ) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgres://postgres@{POSTGRES[0]}:{POSTGRES[1]}/{name}"
    finally:
        with psycopg.connect(
            host=POSTGRES[0], port=POSTGRES[1], user="postgres", dbname="postgres", autocommit=True
        ) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
