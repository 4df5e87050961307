"""The asks' record as the one place an ask is decided across restarts: open or attach, decide, reattach; no queue.

Four statement sequences, each run on the recorder's writer thread in one transaction:

- :func:`open_ask`: a question for the browser (inbox or URL page) gets its row, unless a call
  asking the same (its attach key) left an ask pending, or decided and not yet collected: then
  the call attaches to that ask instead, and no second card appears. Two identical calls at once
  race on the key's unique index; the loser attaches to the winner's ask. A new ask past one of
  its principal's flood limits (:mod:`ask_mcp.records.limits`) gets no row at all.
- :func:`decide_ask`: a call finished from the record (its parked handler is gone) decides the
  ask with its reply, conditionally, and collects the decision; a decision made first (an admin,
  a person on the ask's page) and not yet collected is what it takes instead; one already
  collected means the state is being replayed.
- :func:`withdraw_ask`: a task's cancel (or a revoked credential) withdraws the ask unless a
  decision was written first, which then stands.
- :func:`reattach_ask`: a URL-mode retry that reached a worker without its parked call makes
  that worker the one holding the ask, or takes the decision waiting for it.

Knows nothing of the queue and batching (:mod:`ask_mcp.records.recorder`) or of the call.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from django.db import connection, transaction

from ask_mcp.models import DECIDED, Ask, AskEvent, event_for_status
from ask_mcp.protocol.forms import REASON_KEY
from ask_mcp.records import limits, sql
from ask_mcp.records.choices import STATUS_FOR_ACTION
from ask_mcp.server.errors import REASON_LIMIT, ElicitationTimedOut, QuestionNoLongerWaiting
from ask_mcp.server.request_state import InvalidState

FROM_RECORD: Final = "the person at the client (finished from the record)"
"""The history's label for a decision a call brought back after its worker was gone."""


@dataclass(frozen=True, slots=True)
class Opened:
    """Which ask a question for the browser is: its own new one, or one it attached to."""

    id: str
    attached: bool = False
    previous_worker: str = ""
    """The worker that held the ask before (its calls are passed the settlement on)."""
    settled: Mapping[str, Any] | None = None
    """The decision waiting for a call, when the ask was decided and not collected."""
    refused: limits.Refusal | None = None
    """The flood limit that refused a new ask (it has no row: nobody was told of it)."""


def _reply(status: str, answer: Any, reason: str = "") -> dict[str, Any]:
    """The settlement an ask's decision is for a call: its action, answer, and staff's reason."""
    action = {Ask.Status.ACCEPTED: "accept", Ask.Status.DECLINED: "decline"}.get(
        Ask.Status(status), "cancel"
    )
    reply: dict[str, Any] = {"action": action}
    if action == "accept":
        reply["content"] = answer or {}
    elif reason:
        reply[REASON_KEY] = reason  # an admin's cancel, with what they told the model
    return reply


def _event(ask_id: uuid.UUID, kind: str, at: dt.datetime, label: str, route: str) -> None:
    AskEvent.objects.create(ask_id=ask_id, kind=kind, at=at, actor_label=label[:200], route=route)


def _insert(row: Mapping[str, Any]) -> bool:
    """Insert the ask's row unless one conflicts (its id, or a live attach key)."""
    statements = sql.statements()
    with connection.cursor() as cursor:
        cursor.execute(statements.insert_ask, statements.ask_values(dict(row)))
        return bool(cursor.rowcount == 1)


def open_ask(row: Mapping[str, Any], now: dt.datetime) -> Opened:
    """The ask a browser question is: a new row, or the one a call asking the same left."""
    key = row["attach_key"]
    with transaction.atomic():
        if (refused := limits.refusal(row, now)) is not None:
            limits.count_refused(row["principal"], refused.limit, row["message"], now)
            return Opened(row["id"].hex, refused=refused)
        for _ in range(3):  # a key freed or taken meanwhile: look again, a bounded few times
            if _insert(row):
                return _created(row)
            if not key:
                break
            found = Ask.objects.filter(attach_key=key).values(
                "id", "status", "answer", "expires_at", "worker", "route", "reason"
            )
            holder = found.first()
            if holder is None:
                continue
            if holder["expires_at"] <= now:  # the sweeper has not reached it yet
                Ask.objects.filter(pk=holder["id"], attach_key=key).update(attach_key="")
                continue
            if holder["status"] in DECIDED:
                return Opened(
                    holder["id"].hex,
                    True,
                    "",
                    _reply(holder["status"], holder["answer"], holder["reason"]),
                )
            took = Ask.objects.filter(pk=holder["id"], status=Ask.Status.PENDING).update(
                worker=row["worker"], call_id=row["call_id"], detached_at=None
            )
            if took:
                label = f"{row['client_name'] or 'a client'} asked the same again"
                _event(holder["id"], AskEvent.Kind.ATTACHED, now, label, holder["route"])
                return Opened(holder["id"].hex, True, holder["worker"])
        # The key kept changing hands: ask anew rather than not at all.
        unkeyed = {**row, "attach_key": ""}
        if not _insert(unkeyed):
            raise RuntimeError(f"ask {row['id'].hex} could not be written")
        return _created(unkeyed)


def _created(row: Mapping[str, Any]) -> Opened:
    statements = sql.statements()
    with connection.cursor() as cursor:
        cursor.executemany(statements.insert_event, sql.created_events(statements, dict(row)))
    return Opened(row["id"].hex)


def decide_ask(
    row: Mapping[str, Any], reply: Mapping[str, Any], collector: str, now: dt.datetime
) -> dict[str, Any]:
    """Decide the ask with `reply` from the record and collect it; returns the decision taken.

    Raises:
        InvalidState: "used": a call already collected the ask's decision.
        ElicitationTimedOut: the ask expired unanswered.
        QuestionNoLongerWaiting: the ask was withdrawn.
    """
    status = STATUS_FOR_ACTION[reply["action"]]
    content = reply.get("content") if reply["action"] == "accept" else None
    ask_id: uuid.UUID = row["id"]
    with transaction.atomic():
        decided = Ask.objects.filter(pk=ask_id, status=Ask.Status.PENDING).update(
            status=status,
            answer=content,
            answered_at=now,
            collected_at=now,
            collected_by=collector[:200],
            attach_key="",
        )
        if decided:
            _event(ask_id, event_for_status(status), now, FROM_RECORD, row["route"])
            _event(ask_id, AskEvent.Kind.DELIVERED, now, collector, row["route"])
            return dict(reply)
        held = _held(ask_id).first()
        if held is None:  # the crash took the row before it was written: write it decided
            fresh = {**row, "status": status, "answer": content, "answered_at": now}
            fresh.update(collected_at=now, collected_by=collector[:200], attach_key="")
            if _insert(fresh):
                _event(ask_id, event_for_status(status), now, FROM_RECORD, row["route"])
                return dict(reply)
            held = _held(ask_id).get()
        return _take(ask_id, held, collector, now, row["route"])


def _held(ask_id: uuid.UUID) -> Any:
    """What :func:`_take` reads of an ask: its decision, whether it was collected, and why."""
    return Ask.objects.filter(pk=ask_id).values("status", "answer", "collected_at", "reason")


def _take(
    ask_id: uuid.UUID, held: Mapping[str, Any], collector: str, now: dt.datetime, route: str
) -> dict[str, Any]:
    """The decision an ask holds, collected now; or why there is none to take."""
    if held["status"] in DECIDED:
        if held["collected_at"] is None and Ask.objects.filter(
            pk=ask_id, collected_at__isnull=True
        ).update(collected_at=now, collected_by=collector[:200], attach_key=""):
            _event(ask_id, AskEvent.Kind.DELIVERED, now, collector, route)
            return _reply(held["status"], held["answer"], held["reason"])
        raise InvalidState("used")
    if held["status"] == Ask.Status.EXPIRED:
        raise ElicitationTimedOut(held["reason"])  # staff's reason, if they expired it
    raise QuestionNoLongerWaiting


def withdraw_ask(ask_id: uuid.UUID, reason: str, label: str, now: dt.datetime) -> bool:
    """Withdraw the ask if it still waits, in one conditional write; whether it is withdrawn now.

    A decision written first (a tasks/update, a person, an admin, the sweeper) stands, and the
    caller ends as it says: a task was cancelled while its ask was recorded accepted.
    """
    with transaction.atomic():
        if Ask.objects.filter(pk=ask_id, status=Ask.Status.PENDING).update(
            status=Ask.Status.WITHDRAWN, attach_key="", reason=reason[:REASON_LIMIT]
        ):
            route = Ask.objects.filter(pk=ask_id).values_list("route", flat=True).first() or ""
            _event(ask_id, AskEvent.Kind.WITHDRAWN, now, label, route)
            return True
        return Ask.objects.filter(pk=ask_id, status=Ask.Status.WITHDRAWN).exists()


def reattach_ask(row: Mapping[str, Any], now: dt.datetime) -> Opened:
    """Make this worker the one holding the ask (by id), or take its uncollected decision.

    Raises:
        InvalidState, ElicitationTimedOut, QuestionNoLongerWaiting: as :func:`decide_ask`.
    """
    ask_id: uuid.UUID = row["id"]
    with transaction.atomic():
        held = (
            Ask.objects.filter(pk=ask_id)
            .values("status", "answer", "collected_at", "expires_at", "worker", "route", "reason")
            .first()
        )
        if held is None:
            _insert(row)
            return Opened(ask_id.hex)
        if held["status"] in DECIDED:
            if held["collected_at"] is not None:
                raise InvalidState("used")
            return Opened(
                ask_id.hex, True, "", _reply(held["status"], held["answer"], held["reason"])
            )
        if held["status"] != Ask.Status.PENDING:
            _take(ask_id, held, "", now, held["route"])  # raises why there is nothing to take
        if held["expires_at"] <= now:
            raise ElicitationTimedOut
        Ask.objects.filter(pk=ask_id, status=Ask.Status.PENDING).update(
            worker=row["worker"], detached_at=None
        )
        if held["worker"] != row["worker"]:
            label = f"{row['client_name'] or 'a client'} came back for the answer"
            _event(ask_id, AskEvent.Kind.ATTACHED, now, label, held["route"])
        return Opened(ask_id.hex, True, held["worker"])
