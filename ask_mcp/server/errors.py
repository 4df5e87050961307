"""Exceptions a handler or the elicitation table raises, with the words its caller sees; knows no wire codes.

They are translated into JSON-RPC errors in one place, the dispatch boundary
(:meth:`ask_mcp.server.core.Server._answer`), and into results by each method's finish
(:mod:`ask_mcp.server.catalog.results` for tools). Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

TIMED_OUT_TEXT: Final = (
    "The user did not answer in time. Carry on without the answer, or stop and explain what "
    "you still need."
)
"""What a call reads when nobody answered its question in time."""
REASON_LIMIT: Final = 300
"""The most characters of staff's reason for a cancel or an expire that reach the model: two or
three sentences say why; the model reads the reason as part of its result, so a longer paste
would only crowd its context (the admin's field stops at this length, and this cut is kept for
every other way a reason is given)."""


def with_reason(text: str, reason: str) -> str:
    """A plain result with staff's reason after its first sentence (the text as it was when none).

    The reason is one line, cut to REASON_LIMIT, so it reads as what staff said, not as more of
    the server's own words."""
    said = " ".join(reason.split())[:REASON_LIMIT]
    if not said:
        return text
    first, _, rest = text.partition(". ")
    end = "" if said[-1] in ".!?" else "."
    return f"{first.rstrip('.')}: {said}{end}" + (f" {rest}" if rest else "")


NO_LONGER_WAITING_TEXT: Final = (
    "That question is no longer waiting for an answer (the server restarted or the question was "
    "withdrawn). Ask again if you still need it."
)
"""What a call reads when the question it waits on is gone."""


CLIENT_CANCELLED: Final = "notifications/cancelled"
"""The message a transport cancels a call's task with when its client cancelled it explicitly;
any other cancellation (a dropped connection) leaves the call's ask answerable for a while."""


def cancelled_by_client(exc: BaseException) -> bool:
    """Whether a CancelledError comes from the client's explicit cancel (see CLIENT_CANCELLED)."""
    return bool(exc.args) and exc.args[0] == CLIENT_CANCELLED


class ToolError(Exception):
    """A failure the model can fix and retry: becomes an `isError: true` tool result."""


class MissingClientCapability(Exception):
    """The request needs a client capability the client did not declare (-32021)."""

    def __init__(self, message: str, required: Mapping[str, Any]) -> None:
        super().__init__(message)
        self.message = message
        self.required = dict(required)


class ElicitationUnavailable(MissingClientCapability):
    """Nobody can be asked: the client shows no forms and the server has no `on_elicit`."""

    def __init__(self, *, people_only: bool = False) -> None:
        if people_only:
            message = (
                "This tool needs to ask the user a question, and nobody can be asked: the token's "
                "asks go to people only, and the server has no on_elicit fallback (the inbox) to "
                "put them in. Configure on_elicit on the server, or clear the token's 'Asks go "
                "to people only' setting."
            )
        else:
            message = (
                "This tool needs to ask the user a question, and nobody can be asked: the client "
                "did not declare the elicitation capability (form mode) and the server has no "
                "on_elicit fallback. Use a client that declares elicitation, or configure "
                "on_elicit on the server."
            )
        super().__init__(message, {"elicitation": {"form": {}}})


PEOPLE_ONLY_TEXT: Final = (
    "asks made with this token go to people in the askserver inbox only (its 'Asks go to people "
    "only' setting): the client may not answer them"
)
"""Why a people-only caller's own answer is refused, wherever it tries to give one."""


class PeopleOnly(ToolError):
    """A people-only caller's question would reach its client (a raw elicitation request): as a
    tool result the model reads; the eras refuse a client's own answers with the same words."""

    def __init__(self, detail: str) -> None:
        super().__init__(f"{PEOPLE_ONLY_TEXT}; {detail}")
        self.message = str(self)


class ElicitationEnded(Exception):
    """The question ended without an answer; the call finishes with a plain, non-error result."""

    text: str = ""

    def __init__(self, text: str | None = None) -> None:
        super().__init__(text or self.text)
        if text is not None:
            self.text = text


class ElicitationTimedOut(ElicitationEnded):
    """Nobody answered before the question's deadline (or staff expired it, maybe saying why)."""

    text = TIMED_OUT_TEXT

    def __init__(self, reason: str = "") -> None:
        super().__init__(with_reason(TIMED_OUT_TEXT, reason) if reason else None)
        self.reason = reason


class QuestionNoLongerWaiting(ElicitationEnded):
    """The parked call a retry names is gone (the server restarted) or the ask was withdrawn."""

    text = NO_LONGER_WAITING_TEXT


class NoValidAnswer(ElicitationEnded):
    """Every attempt at the form came back not matching its schema."""

    def __init__(self, attempts: int, last_problem: str) -> None:
        super().__init__(
            f"No valid answer came after {attempts} attempts (last problem: {last_problem}). "
            "Carry on without it, or ask again more simply."
        )


class ElicitationCapacityExceeded(ToolError):
    """The elicitation table is full; the question is refused rather than queued."""

    def __init__(self, waiting: int) -> None:
        questions = "1 question is" if waiting == 1 else f"{waiting} questions are"
        super().__init__(
            f"{questions} already waiting for answers, the most this server holds at once. "
            "Try again after some are answered, or carry on without asking."
        )
        self.waiting = waiting


class PrincipalShareExceeded(ElicitationCapacityExceeded):
    """The caller already holds its fair share of the table; others may still ask."""

    def __init__(self, held: int) -> None:
        questions = "1 question" if held == 1 else f"{held} questions"
        ToolError.__init__(
            self,
            f"You already have {questions} waiting for answers, your share of this server "
            "(ASK_MCP['ELICITATION_PER_PRINCIPAL']); other people can still ask. Wait for some "
            "to be answered, or carry on without asking.",
        )
        self.waiting = held
