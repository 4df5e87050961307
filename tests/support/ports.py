"""Loopback ports for servers a test starts itself but cannot hand a bound socket to."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port on 127.0.0.1 that was free a moment ago.

    For servers that bind their own socket (nginx, aiosmtpd, the CLI's inbox, the test proxy);
    a live askserver is handed its bound socket instead (tests/support/live.py), which cannot race.
    """
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
