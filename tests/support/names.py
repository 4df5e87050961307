"""Names no other test uses: every live suite shares one server and its database, so a test finds its own asks by a message nobody else wrote."""

from __future__ import annotations

import uuid


def unique(text: str) -> str:
    """`text` with a random tag, e.g. "Ship it? [1f3a9c0e]"."""
    return f"{text} [{uuid.uuid4().hex[:8]}]"
