"""Ask ids are RFC 9562 version 7 UUIDs: unique, unguessable, and ordered by creation time."""

from __future__ import annotations

import time
import uuid

from ask_mcp.server.ids import new_ask_id


def test_an_ask_id_is_a_version_7_uuid_carrying_the_time_it_was_made() -> None:
    before = time.time_ns() // 1_000_000
    made = new_ask_id()
    after = time.time_ns() // 1_000_000
    assert made.version == 7 and made.variant == uuid.RFC_4122
    assert before <= made.int >> 80 <= after
    assert uuid.UUID(made.hex) == made  # round-trips as the hex the wire and the inbox use


def test_ids_made_in_later_milliseconds_sort_after_earlier_ones() -> None:
    made = [new_ask_id()]
    while len(made) < 5:  # a new millisecond each time: no clock to wait on, only a bound
        latest = new_ask_id()
        if latest.int >> 80 > made[-1].int >> 80:
            made.append(latest)
    assert made == sorted(made)
    assert [each.hex for each in made] == sorted(each.hex for each in made)


def test_ids_within_one_millisecond_differ_in_their_random_bits() -> None:
    made = {new_ask_id() for _ in range(10_000)}
    assert len(made) == 10_000
    assert len({each.int & ((1 << 62) - 1) for each in made}) == 10_000
