"""The engine's closed vocabulary and the Ask row's choices: the same values, mapped in one place."""

from __future__ import annotations

from typing import get_args

import pytest

from ask_mcp.models import Ask, storable
from ask_mcp.protocol.forms import Action
from ask_mcp.records.choices import CLOSED_AS, ROUTES, STATUS_FOR_ACTION, closed_as
from ask_mcp.server.eras.tasks import TASK_STATUSES, TERMINAL, task_status
from ask_mcp.server.question import Ending, Route


def test_every_route_is_the_ask_route_of_the_same_value() -> None:
    assert set(get_args(Route)) == set(Ask.Route.values)
    assert set(ROUTES) == set(get_args(Route))
    assert all(choice == route for route, choice in ROUTES.items())


def test_an_ending_closes_its_ask_with_the_status_of_its_name_or_leaves_it_pending() -> None:
    endings = set(get_args(Ending))
    assert set(CLOSED_AS) == endings - {"detached", "stopped"}
    assert all(status == ending for ending, status in CLOSED_AS.items())
    assert set(Ask.Status.values) == {*CLOSED_AS.values(), Ask.Status.PENDING}
    assert closed_as("detached") is None and closed_as("stopped") is None


def test_a_replys_action_decides_its_ask_to_the_status_its_question_ends_with() -> None:
    assert set(STATUS_FOR_ACTION) == set(get_args(Action))
    assert STATUS_FOR_ACTION == {
        "accept": Ask.Status.ACCEPTED,
        "decline": Ask.Status.DECLINED,
        "cancel": Ask.Status.CANCELLED,
    }


def test_a_tasks_status_reads_back_from_its_rows_text_and_nothing_else_does() -> None:
    assert TASK_STATUSES == ("working", "input_required", "completed", "failed", "cancelled")
    assert {"completed", "failed", "cancelled"} == TERMINAL
    assert [task_status(text) for text in TASK_STATUSES] == list(TASK_STATUSES)
    with pytest.raises(ValueError, match="no task status"):
        task_status("done")


def test_what_is_stored_holds_no_nul_and_no_number_json_cannot_carry() -> None:
    # Either one failed the whole batch of records it was written with (PostgreSQL refuses both).
    assert storable({"n": float("inf"), "m": [float("nan"), 1.5], "t": "a\x00b"}) == {
        "n": None,
        "m": [None, 1.5],
        "t": "a\ufffdb",
    }
