"""The engine's exceptions: the words a caller reads, staff's reason folded in, and the counts they name."""

from __future__ import annotations

import asyncio

import pytest

from ask_mcp.server.errors import (
    CLIENT_CANCELLED,
    NO_LONGER_WAITING_TEXT,
    PEOPLE_ONLY_TEXT,
    REASON_LIMIT,
    TIMED_OUT_TEXT,
    ElicitationCapacityExceeded,
    ElicitationEnded,
    ElicitationTimedOut,
    ElicitationUnavailable,
    MissingClientCapability,
    NoValidAnswer,
    PeopleOnly,
    PrincipalShareExceeded,
    QuestionNoLongerWaiting,
    ToolError,
    cancelled_by_client,
    with_reason,
)


def test_staffs_reason_follows_the_first_sentence_as_one_line() -> None:
    assert with_reason(TIMED_OUT_TEXT, "") == TIMED_OUT_TEXT
    assert with_reason(TIMED_OUT_TEXT, "  \n ") == TIMED_OUT_TEXT
    assert with_reason(TIMED_OUT_TEXT, "the release\nwas called off") == (
        "The user did not answer in time: the release was called off. Carry on without the "
        "answer, or stop and explain what you still need."
    )
    assert with_reason("Cancelled.", "Done!") == "Cancelled: Done!"


def test_a_long_reason_is_cut_to_the_limit() -> None:
    said = with_reason("Stopped.", "x" * (REASON_LIMIT * 3))
    assert said == "Stopped: " + "x" * REASON_LIMIT + "."


def test_a_timeout_reads_the_plain_text_or_the_text_with_the_reason() -> None:
    assert str(ElicitationTimedOut()) == TIMED_OUT_TEXT == ElicitationTimedOut().text
    expired = ElicitationTimedOut("no longer needed")
    assert expired.reason == "no longer needed"
    assert expired.text.startswith("The user did not answer in time: no longer needed.")
    assert isinstance(expired, ElicitationEnded)


def test_endings_carry_their_own_words() -> None:
    assert QuestionNoLongerWaiting().text == NO_LONGER_WAITING_TEXT
    assert ElicitationEnded("custom").text == "custom"
    invalid = NoValidAnswer(3, "'age' must be an integer")
    assert "after 3 attempts" in invalid.text and "'age' must be an integer" in invalid.text


def test_unavailable_names_what_is_missing_and_the_capability_it_needs() -> None:
    plain = ElicitationUnavailable()
    people = ElicitationUnavailable(people_only=True)
    assert isinstance(plain, MissingClientCapability)
    assert plain.required == people.required == {"elicitation": {"form": {}}}
    assert "did not declare the elicitation capability" in plain.message
    assert "people only" in people.message and "on_elicit" in people.message


def test_capacity_errors_count_in_words_and_are_tool_errors() -> None:
    assert str(ElicitationCapacityExceeded(1)).startswith("1 question is already waiting")
    assert str(ElicitationCapacityExceeded(5)).startswith("5 questions are already waiting")
    share = PrincipalShareExceeded(1)
    assert str(share).startswith("You already have 1 question waiting")
    assert share.waiting == 1 and isinstance(share, ElicitationCapacityExceeded)
    assert "2 questions" in str(PrincipalShareExceeded(2))
    assert isinstance(share, ToolError)


def test_people_only_reads_the_rule_and_the_detail() -> None:
    refused = PeopleOnly("the tool asked for sampling")
    assert refused.message == f"{PEOPLE_ONLY_TEXT}; the tool asked for sampling"
    assert isinstance(refused, ToolError)


async def test_only_the_clients_own_cancel_counts_as_cancelled_by_the_client() -> None:
    async def forever() -> None:
        await asyncio.Event().wait()

    for message, by_client in ((CLIENT_CANCELLED, True), ("dropped", False), (None, False)):
        task = asyncio.ensure_future(forever())
        await asyncio.sleep(0)  # let it start, so the cancel reaches its await
        task.cancel(message)
        with pytest.raises(asyncio.CancelledError) as cancelled:
            await task
        assert cancelled_by_client(cancelled.value) is by_client
