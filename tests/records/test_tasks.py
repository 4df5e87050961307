"""The tasks' store on the Task model, and the task settings' checks E060-E062."""

from __future__ import annotations

import time

import pytest
from django.core.checks import run_checks
from django.test import override_settings

from ask_mcp.records.tasks import TaskRows
from ask_mcp.server.eras.tasks import TaskRecord
from ask_mcp.server.identity import TOKEN, Credential, Identity


@pytest.mark.parametrize(
    "setting, check_id",
    [
        ({"TASK_TTL": 0}, "ask_mcp.E060"),
        ({"TASK_TTL": "a day"}, "ask_mcp.E060"),
        ({"TASK_RETENTION": -1}, "ask_mcp.E061"),
        ({"TASK_LIMIT": 0}, "ask_mcp.E062"),
        ({"TASK_LIMIT": True}, "ask_mcp.E062"),
    ],
)
def test_bad_task_settings_are_reported(setting: object, check_id: str) -> None:
    with override_settings(ASK_MCP=setting):
        assert check_id in [message.id for message in run_checks(databases=[])]


def _task(task_id: str, *, expires_in: float = 60.0, principal: str = "user:1") -> TaskRecord:
    now = time.time()
    return TaskRecord(
        id=task_id,
        who=Identity(principal, "group:2", Credential(TOKEN, "5", "ci (askmcp_Ab12…)")),
        tool="user_ask",
        arguments={"message": "Go?"},
        status="input_required",
        created_at=now,
        updated_at=now,
        ttl_ms=int(expires_in * 1000),
        expires_at=now + expires_in,
        input_requests={"user_ask": {"method": "elicitation/create", "params": {}}},
        ask_id="0190f0f0f0f07000800000000000abcd",
    )


@pytest.mark.django_db(transaction=True)
async def test_a_task_round_trips_its_row_and_a_terminal_status_is_final() -> None:
    rows = TaskRows()
    task = _task("t-round-trip")
    await rows.create(task)
    assert await rows.load("t-round-trip") == task
    assert await rows.open_count("user:1") == 1
    task.status, task.result, task.input_requests = "completed", {"content": []}, {}
    assert await rows.save(task)
    task.status = "cancelled"
    assert not await rows.save(task), "a terminal status never changes again"
    loaded = await rows.load("t-round-trip")
    assert loaded is not None and loaded.status == "completed" and loaded.result == {"content": []}
    assert await rows.open_count("user:1") == 0
    assert await rows.load("no-such-task") is None


@pytest.mark.django_db(transaction=True)
async def test_tasks_past_their_time_to_live_are_purged_and_others_kept() -> None:
    rows = TaskRows()
    await rows.create(_task("t-old", expires_in=0.001))
    await rows.create(_task("t-new"))
    assert await rows.purge(time.time() + 1) == 1
    assert await rows.load("t-old") is None and await rows.load("t-new") is not None


@pytest.mark.django_db(transaction=True)
async def test_a_row_written_before_the_credential_was_kept_reads_back_with_none() -> None:
    from ask_mcp.models import Task
    from ask_mcp.records.tasks import _row

    row = _row(_task("t-before"))
    del row["state"]["credential"]  # as rows were written before the identity was one value
    row["state"]["people_only"] = True
    await Task.objects.acreate(**row)
    loaded = await TaskRows().load("t-before")
    assert loaded is not None
    assert loaded.who == Identity("user:1", "group:2", None, people_only=True)


@pytest.mark.django_db(transaction=True)
async def test_a_task_past_its_time_to_live_holds_no_place_before_the_sweeper_purges_it() -> None:
    # Creating a task no longer purges first (the sweeper does): the limit's count leaves out
    # what a purge would have removed.
    rows = TaskRows()
    await rows.create(_task("t-lapsed", expires_in=0.001))
    await rows.create(_task("t-open"))
    later = time.time() + 1
    assert await rows.open_count("user:1", later) == 1
    assert await rows.load("t-lapsed") is not None, "still there until the sweeper comes"
