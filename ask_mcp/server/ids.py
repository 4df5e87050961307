"""Ask identifiers: UUID version 7 (RFC 9562), ordered by the time they were made; knows nothing else.

An ask's id is the primary key of its row and the first column of its events' index. Random
(version 4) ids put every insert on a random page of both B-trees, so each batch the recorder
wrote dirtied a page per row and the write-ahead log grew with the table; ids that grow with
time append at the right edge. The 74 random bits keep them unguessable all the same; what an id
does give away is the millisecond its ask was made, which the inbox shows anyway.
"""

from __future__ import annotations

import secrets
import time
import uuid

_VERSION = 0x7 << 76
_VARIANT = 0b10 << 62


def new_ask_id() -> uuid.UUID:
    """A fresh UUIDv7: 48 bits of Unix milliseconds, the version and variant, 74 random bits."""
    millis = time.time_ns() // 1_000_000
    rand = int.from_bytes(secrets.token_bytes(10), "big")  # 80 bits, 74 used
    return uuid.UUID(
        int=(millis & (1 << 48) - 1) << 80
        | _VERSION
        | (rand >> 62 & 0xFFF) << 64
        | _VARIANT
        | rand & (1 << 62) - 1
    )
