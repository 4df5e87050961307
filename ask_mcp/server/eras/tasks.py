"""The Tasks extension (io.modelcontextprotocol/tasks): tools/call answered by a task, tasks/get, update and cancel; knows no database.

A request that declares the extension gets, from a tool that runs as a task, a
``CreateTaskResult`` once the task is stored (:class:`TaskStore`; the Django one is
:mod:`ask_mcp.records.tasks`). Two kinds of task:

- a *record task*, for a tool whose result is a pure function of its arguments and the
  person's reply (:class:`~ask_mcp.server.catalog.toolkit.FromRecord`, as ``user_ask``'s is): its ask
  is written to the record before the handle leaves, and the task is nothing but its row and
  its ask's row. No handler runs and nothing is parked: ``tasks/get`` on any worker, after any
  restart, reads the rows; a person answering in the inbox decides the ask, and the next read
  completes the task with the tool's result for that reply; ``tasks/update`` decides it with
  the client's answer (checked against the form, re-asked under a new key when it does not fit).
- a *handler task*, for a toolkit tool that opts in (``task=`` on :func:`tool`): its handler
  runs here, in this worker, and every change is mirrored to the row; its input requests are
  answered only by ``tasks/update`` reaching this worker.

Task ids are random (192 bits) and bound to the creating principal: another principal's id
reads as unknown. It does not know the envelope ladder (:mod:`~ask_mcp.server.eras.modern` gates
each method on the request's own declaration) nor any transport. Pure asyncio.

Long: the extension is one protocol surface (create, get, update, cancel, and the status
machine they share); its two kinds of task answer the same four methods, and splitting them
would put one status machine in two files.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal, Protocol, get_args

from ask_mcp.protocol import mcp
from ask_mcp.protocol.forms import ElicitResult, check_form_schema, form_errors, read_elicit_result
from ask_mcp.protocol.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    JsonRpcError,
)
from ask_mcp.server.asking.table import MAX_REASKS, ElicitationTable
from ask_mcp.server.catalog.results import finish_tool_call
from ask_mcp.server.catalog.toolkit import FromRecord, Tool
from ask_mcp.server.context import Context
from ask_mcp.server.errors import (
    PEOPLE_ONLY_TEXT,
    ElicitationTimedOut,
    MissingClientCapability,
    NoValidAnswer,
    QuestionNoLongerWaiting,
    ToolError,
)
from ask_mcp.server.identity import Identity
from ask_mcp.server.ids import new_ask_id
from ask_mcp.server.ports import AskWithdrawals
from ask_mcp.server.question import Ending, Question
from ask_mcp.server.request_state import InvalidState

EXTENSION: Final = "io.modelcontextprotocol/tasks"
"""The extension's identifier, under `capabilities.extensions` on both sides."""
REQUIRED: Final[Mapping[str, Any]] = {"extensions": {EXTENSION: {}}}
"""The `requiredCapabilities` of every -32021 this module causes."""
RESULT_TASK: Final = "task"
"""The resultType of a CreateTaskResult, and of nothing else."""

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
"""A task's status, as the wire's `status` field and the task's row carry it."""
TASK_STATUSES: Final[tuple[TaskStatus, ...]] = get_args(TaskStatus)
"""Every status, in the order of the status machine."""
WORKING: Final[TaskStatus] = "working"
"""Being processed (or, without form elicitation, waiting on a person in the inbox)."""
INPUT_REQUIRED: Final[TaskStatus] = "input_required"
"""Blocked on the client's answers to `inputRequests`."""
COMPLETED: Final[TaskStatus] = "completed"
"""Ended with a result (an `isError` tool result included)."""
FAILED: Final[TaskStatus] = "failed"
"""Ended with a JSON-RPC error."""
CANCELLED: Final[TaskStatus] = "cancelled"
"""Ended by tasks/cancel."""
TERMINAL: Final[frozenset[TaskStatus]] = frozenset({COMPLETED, FAILED, CANCELLED})
"""Statuses that never change again."""
CANCELLED_MESSAGE: Final = "Cancelled by the client (tasks/cancel)."
"""The statusMessage of a task ended by tasks/cancel."""
REVOKED_MESSAGE: Final = "Cancelled: the token it was created with was revoked."
"""The statusMessage of a task its credential's revocation ended (its ask withdrawn with it)."""

POLL_INTERVAL_MS: Final = 2_000
"""Suggested poll interval: a person answers in seconds at best, so 2 s wastes little."""
INBOX_WAIT: Final = "Waiting for a person to answer in the askserver inbox."
"""The statusMessage of a record task whose client cannot show the form."""
PEOPLE_WAIT: Final = (
    "Waiting for a person to answer in the askserver inbox (its page, a mailed link or a "
    "notification's buttons): this token's asks go to people only, so the client is not offered "
    "the form."
)
"""The statusMessage of a people-only caller's record task, whatever its client shows."""


def declares_tasks(capabilities: Mapping[str, Any]) -> bool:
    """Whether a request's client capabilities declare the extension (decided per request)."""
    extensions = capabilities.get("extensions")
    if not extensions:  # most requests: no isinstance against the Mapping ABC (a slow check)
        return False
    return isinstance(extensions, Mapping) and isinstance(extensions.get(EXTENSION), Mapping)


def task_status(text: str) -> TaskStatus:
    """A status read back from where a task was stored (its row's text).

    Raises:
        ValueError: `text` names no status.
    """
    if text in TASK_STATUSES:
        return text
    raise ValueError(f"{text!r} is no task status (one of {', '.join(TASK_STATUSES)})")


def iso(seconds: float) -> str:
    """A time as the ISO 8601 UTC text the task's fields carry."""
    moment = dt.datetime.fromtimestamp(seconds, dt.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(slots=True)
class TaskRecord:
    """One task as its row holds it."""

    id: str
    who: Identity
    """Who created it: the creating request's identity (its principal alone may read it)."""
    tool: str
    arguments: dict[str, Any]
    status: TaskStatus
    created_at: float
    updated_at: float
    ttl_ms: int
    expires_at: float
    """When the task may be purged: creation plus its TTL."""
    poll_ms: int = POLL_INTERVAL_MS
    status_message: str = ""
    input_requests: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    ask_id: str | None = None
    """The ask of a record task (None: a handler task)."""
    ask_expires_at: float = 0.0
    attempt: int = 1
    client_name: str = ""
    toolkit: str = ""
    worker: str = ""
    ask_waiting: bool = False
    """Read with the row, never stored: its ask was pending, unexpired and held by no call then,
    so tasks/get has nothing to collect and writes nothing (False: look at the ask's record)."""

    # ------------------------------------------------------------------ the status machine

    def require_input(self, key: str, request: dict[str, Any]) -> None:
        """Wait for the client's answer to `request` under `key`, beside any others."""
        self.input_requests[key] = request
        self.status = INPUT_REQUIRED

    def input_given(self, key: str) -> None:
        """No longer wait on `key` (answered, or given up): working again once none is left."""
        self.input_requests.pop(key, None)
        if not self.input_requests and self.status == INPUT_REQUIRED:
            self.status = WORKING

    def ask_again(self, key: str, request: dict[str, Any]) -> None:
        """Wait for the client's answer to `request` under `key` instead of every earlier one
        (a record task's form asked again, never under a key used before)."""
        self.input_requests = {}
        self.require_input(key, request)

    def complete(self, result: dict[str, Any]) -> None:
        """End with `result` (an `isError` tool result included); nothing is waited on."""
        self.status = COMPLETED
        self.result = result
        self._settle("")

    def fail(self, error: dict[str, Any], message: str = "") -> None:
        """End with the JSON-RPC error `error`, saying `message` if there is one to say."""
        self.status = FAILED
        self.error = error
        self._settle(message)

    def cancel(self, message: str = CANCELLED_MESSAGE) -> None:
        """End by tasks/cancel (or by the server, saying why in `message`)."""
        self.status = CANCELLED
        self._settle(message)

    def _settle(self, message: str) -> None:
        """An ending waits on nothing: its input requests go, and its message is `message`."""
        self.input_requests = {}
        self.status_message = message

    # ------------------------------------------------------------------ the wire

    def wire(self) -> dict[str, Any]:
        """The Task fields every task message carries."""
        task: dict[str, Any] = {
            "taskId": self.id,
            "status": self.status,
            "createdAt": iso(self.created_at),
            "lastUpdatedAt": iso(self.updated_at),
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": self.poll_ms,
        }
        if self.status_message:
            task["statusMessage"] = self.status_message
        return task

    def detailed(self) -> dict[str, Any]:
        """What tasks/get answers: the fields and the payload of the status."""
        task = {"resultType": mcp.RESULT_COMPLETE, **self.wire()}
        if self.status == INPUT_REQUIRED:
            task["inputRequests"] = dict(self.input_requests)
        elif self.status == COMPLETED and self.result is not None:
            task["result"] = self.result
        elif self.status == FAILED and self.error is not None:
            task["error"] = self.error
        return task


class TaskStore(Protocol):
    """Where tasks are kept; every method is one atomic step on the task's row."""

    async def create(self, task: TaskRecord) -> None:
        """Store a new task; returns once a read from any worker finds it."""

    async def load(self, task_id: str) -> TaskRecord | None:
        """The task, or None when unknown or purged."""

    async def save(self, task: TaskRecord) -> bool:
        """Write the task's state unless its row is already terminal; whether it was written."""

    async def open_count(self, principal: str, now: float | None = None) -> int:
        """How many of `principal`'s tasks have not ended and are not past their time to live
        at `now` (the clock's time when None): a task the sweeper has yet to purge is not open."""

    async def purge(self, now: float) -> int:
        """Delete the tasks whose time to live has passed; how many."""


class MemoryTaskStore:
    """Tasks in this process only: the store of a server built without a database."""

    def __init__(self) -> None:
        self._tasks: dict[str, TaskRecord] = {}

    async def create(self, task: TaskRecord) -> None:
        await self.purge(task.created_at)  # no sweeper purges this store
        self._tasks[task.id] = replace(task)

    async def load(self, task_id: str) -> TaskRecord | None:
        held = self._tasks.get(task_id)
        return replace(held, input_requests=dict(held.input_requests)) if held else None

    async def save(self, task: TaskRecord) -> bool:
        held = self._tasks.get(task.id)
        if held is None or held.status in TERMINAL:
            return False
        self._tasks[task.id] = replace(task, input_requests=dict(task.input_requests))
        return True

    async def open_count(self, principal: str, now: float | None = None) -> int:
        at = time.time() if now is None else now
        return sum(
            1
            for t in self._tasks.values()
            if (t.who.principal or "") == principal
            and t.status not in TERMINAL
            and t.expires_at > at
        )

    async def purge(self, now: float) -> int:
        gone = [key for key, task in self._tasks.items() if task.expires_at <= now]
        for key in gone:
            del self._tasks[key]
        return len(gone)


def unknown_task(task_id: Any) -> JsonRpcError:
    """The -32602 for an unknown, purged or another principal's task (all read the same)."""
    return JsonRpcError(INVALID_PARAMS, f"Failed to retrieve task: Task not found ({task_id!r})")


def task_id_of(params: Mapping[str, Any]) -> str:
    """params.taskId, which must be a string.

    Raises:
        JsonRpcError: -32602 naming what was sent.
    """
    task_id = params.get("taskId")
    if not isinstance(task_id, str) or not task_id:
        raise JsonRpcError(INVALID_PARAMS, "params.taskId must be the taskId string a task gave")
    return task_id


class _Running:
    """A handler task's coroutine in this worker and the answers it awaits, by key."""

    __slots__ = ("job", "task", "waiting")

    def __init__(self, task: TaskRecord) -> None:
        self.task = task
        """The task's state as this worker holds it; the row mirrors it."""
        self.job: asyncio.Task[None] | None = None
        self.waiting: dict[str, asyncio.Future[Any]] = {}


class _TaskChannel:
    """The InputChannel of a handler task: a request becomes an entry of `inputRequests`."""

    def __init__(self, engine: TaskEngine, task: TaskRecord, running: _Running) -> None:
        self.engine = engine
        self.task = task
        self.running = running

    async def request(self, key: str, request: dict[str, Any], deadline: float) -> Any:
        task, running = self.task, self.running
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        running.waiting[key] = answer
        task.require_input(key, request)
        await self.engine.touch(task)
        try:
            async with asyncio.timeout(max(0.0, deadline - time.time())):
                return await answer
        except TimeoutError as exc:
            raise ElicitationTimedOut from exc
        finally:
            running.waiting.pop(key, None)
            task.input_given(key)


class TaskEngine:
    """Creates tasks and answers tasks/get, tasks/update and tasks/cancel from their store."""

    def __init__(self, table: ElicitationTable, tools: Mapping[str, Tool]) -> None:
        self.table = table
        self.tools = tools
        """The catalog's tools by name (a record task's tool gives its form and result)."""
        self.store: TaskStore = MemoryTaskStore()
        """Where tasks are kept; the Django runtime puts its database store here."""
        self.ttl: float = 86_400.0
        """Seconds a task's ask waits for its person (the ask expires with the task)."""
        self.retention: float = 86_400.0
        """Seconds a task stays readable after its ask's expiry, before it is purged."""
        self.limit: int = 100
        """Open tasks one principal may hold at once."""
        self.on_ask: Callable[[Question, Context], Awaitable[None]] | None = None
        """Told of a record task's new ask once its row exists (the Django runtime shows it in
        open inboxes and tells the people it reaches, as for a held call's ask)."""
        self._running: dict[str, _Running] = {}
        self._clock: Callable[[], float] = time.time

    def runs_as_task(self, tool: Tool) -> bool:
        """Whether a call of `tool` from a declaring request becomes a task."""
        return tool.task is not None or tool.from_record is not None

    async def touch(self, task: TaskRecord) -> bool:
        task.updated_at = self._clock()
        return await self.store.save(task)

    # ------------------------------------------------------------------ creating

    async def create_settled(
        self, ctx: Context, tool: Tool, result: dict[str, Any]
    ) -> dict[str, Any]:
        """The CreateTaskResult of a call whose input came by MRTR rounds first and whose
        outcome is `result` already: a task stored completed."""
        task = self._new(ctx, tool, self._clock())
        task.complete(result)
        await self.store.create(task)
        return {"resultType": RESULT_TASK, **task.wire()}

    def _new(self, ctx: Context, tool: Tool, now: float) -> TaskRecord:
        return TaskRecord(
            id=secrets.token_urlsafe(24),
            who=ctx.who,
            tool=tool.name,
            arguments=dict(ctx.arguments),
            status=WORKING,
            created_at=now,
            updated_at=now,
            ttl_ms=int((self.ttl + self.retention) * 1000),
            expires_at=now + self.ttl + self.retention,
            client_name=ctx.client_name or "",
            toolkit=ctx.toolkit or "",
            worker=self.table.worker,
        )

    async def create(self, ctx: Context, tool: Tool) -> dict[str, Any] | None:
        """The CreateTaskResult of a tools/call that runs as a task (None when the call cannot
        become one, as with a bad `questions` argument: the ordinary call answers it)."""
        now = self._clock()
        # Expired tasks are not counted rather than purged here: the sweeper purges them, and a
        # purge was one more query on the store's thread for every task created.
        if await self.store.open_count(ctx.who.principal or "", now) >= self.limit:
            raise ToolError(
                f"This principal already has {self.limit} open tasks (the limit, "
                "ASKSERVER_TASK_LIMIT): wait for some to end, or cancel them with tasks/cancel"
            )
        task = self._new(ctx, tool, now)
        recorded = tool.from_record
        if recorded is not None:
            try:
                message, schema = recorded.form(ctx.arguments)
                check_form_schema(schema)
            except Exception:  # bad arguments: the ordinary call gives the tool's own error
                return None
            await self._open_ask(ctx, task, recorded, message, schema)
            await self.store.create(task)
        else:
            await self.store.create(task)
            self._start(ctx, tool, task)
        return {"resultType": RESULT_TASK, **task.wire()}

    async def _open_ask(
        self,
        ctx: Context,
        task: TaskRecord,
        recorded: FromRecord,
        message: str,
        schema: Mapping[str, Any],
    ) -> None:
        """Write the task's ask to the record (the inbox shows it) and, when the client
        shows forms, offer the form as the task's first input request, under the key the
        tool's `recorded` declaration gives."""
        task.ask_id = new_ask_id().hex
        task.ask_expires_at = task.created_at + self.ttl
        question = self._question(task, message, schema)
        if self.table.observer is not None:
            await self.table.observer.asked(question)
        task.ask_id = question.id
        if self.on_ask is not None and not question.attached:
            await self.on_ask(question, ctx)
        if task.who.people_only:  # a person answers in the inbox, whatever the client shows
            task.status_message = PEOPLE_WAIT
        elif mcp.supports_form_elicitation(ctx.capabilities):  # nothing is parked: no channel
            task.require_input(recorded.input_key(task.attempt), _form_request(message, schema))
        else:
            task.status_message = INBOX_WAIT

    def _question(
        self, task: TaskRecord, message: str, schema: Mapping[str, Any], **extra: Any
    ) -> Question:
        assert task.ask_id is not None
        return Question(
            id=task.ask_id,
            message=message,
            schema=schema,
            tool=task.tool,
            who=task.who,
            route="browser",
            created_at=task.created_at,
            expires_at=task.ask_expires_at,
            client_name=task.client_name or None,
            attempt=task.attempt,
            worker="",
            toolkit=task.toolkit or None,
            collector=f"{task.client_name or 'a client'} (task {task.id[:8]})",
            in_task=True,
            **extra,
        )

    def _start(self, ctx: Context, tool: Tool, task: TaskRecord) -> None:
        """Run a handler task's handler here; its outcome is written to the row."""
        running = _Running(task)
        ctx.input_channel = _TaskChannel(self, task, running)
        self._running[task.id] = running

        async def run() -> None:
            try:
                value = await tool.handler(ctx, dict(task.arguments))
                task.complete(finish_tool_call(tool.name, value, None))
            except asyncio.CancelledError:
                raise
            except JsonRpcError as exc:
                task.fail(exc.to_dict(), exc.message)
            except MissingClientCapability as exc:
                task.fail({"code": MISSING_REQUIRED_CLIENT_CAPABILITY, "message": exc.message})
            except Exception as exc:  # the handler's failure, as a tools/call would show it
                try:
                    task.complete(finish_tool_call(tool.name, None, exc))
                except JsonRpcError as error:
                    task.fail(error.to_dict())
                except Exception:
                    task.fail({"code": INTERNAL_ERROR, "message": "Internal error"})
            finally:
                self._running.pop(task.id, None)
            await self.touch(task)

        running.job = asyncio.create_task(run(), name=f"ask_mcp task {task.id[:8]}")

    # ------------------------------------------------------------------ the methods

    async def _owned(self, task_id: str, principal: str | None) -> tuple[TaskRecord, Tool | None]:
        task = await self.store.load(task_id)
        if task is None or (task.who.principal or "") != (principal or ""):
            raise unknown_task(task_id)
        tool = self.tools.get(task.tool)
        return task, tool if tool is not None and tool.from_record is not None else None

    async def get(self, task_id: str, principal: str | None) -> dict[str, Any]:
        """tasks/get: the task as it is now (a record task first takes a person's decision)."""
        task, tool = await self._owned(task_id, principal)
        if (
            task.ask_id is not None
            and task.status not in TERMINAL
            and tool is not None
            and not task.ask_waiting  # the poll of a waiting task: one read, no write
        ):
            await self._collect(task, tool)
        return task.detailed()

    async def _collect(self, task: TaskRecord, tool: Tool) -> None:
        """Complete a record task whose ask a person (or the sweeper) decided."""
        assert tool.from_record is not None
        message, schema = tool.from_record.form(task.arguments)
        question = self._question(task, message, schema, attached=True)
        records = self.table.records
        if records is None:
            return
        try:
            await records.reattach(question)
            if question.settled is None:
                return
            decided = await records.decide(question, question.settled)
        except InvalidState:
            await self._reload_into(task)
            return
        except (ElicitationTimedOut, QuestionNoLongerWaiting) as exc:
            if isinstance(exc, ElicitationTimedOut):  # past its expiry, before the sweeper came
                self._withdraw(task, message, schema, "expired")
            await self._complete(task, finish_tool_call(task.tool, None, exc))
            return
        value = tool.from_record.result(task.arguments, decided)
        await self._complete(task, finish_tool_call(task.tool, value, None))

    async def _reload_into(self, task: TaskRecord) -> None:
        fresh = await self.store.load(task.id)
        if fresh is not None:
            for name in TaskRecord.__slots__:
                setattr(task, name, getattr(fresh, name))

    async def _complete(self, task: TaskRecord, result: dict[str, Any]) -> None:
        task.complete(result)
        if not await self.touch(task):
            await self._reload_into(task)

    async def update(
        self, task_id: str, principal: str | None, responses: Mapping[str, Any]
    ) -> dict[str, Any]:
        """tasks/update: answers for outstanding keys (others are ignored); an empty ack.

        Raises:
            JsonRpcError: -32602 for answers to a people-only caller's task (a person answers
                it in the inbox; the client never had an input request to answer).
        """
        task, tool = await self._owned(task_id, principal)
        if task.who.people_only and responses:
            raise JsonRpcError(
                INVALID_PARAMS,
                f"Invalid params: tasks/update refused for task {task.id!r}: "
                f"{PEOPLE_ONLY_TEXT}. Poll tasks/get; a person answers it in the inbox",
                {"reason": "people_only"},
            )
        if task.status in TERMINAL:
            return {}
        answered = {key: value for key, value in responses.items() if key in task.input_requests}
        if not answered:
            return {}
        if task.ask_id is not None and tool is not None and tool.from_record is not None:
            await self._answer_record(task, tool, next(iter(answered.values())))
            return {}
        running = self._running.get(task.id)
        if running is not None:
            task = running.task  # the handler's own copy: its next write must not undo this
        for key in answered:
            task.input_given(key)
        await self.touch(task)  # the answered keys are gone before the acknowledgement
        if running is not None:
            for key, value in answered.items():
                waiting = running.waiting.get(key)
                if waiting is not None and not waiting.done():
                    waiting.set_result(value)
        return {}

    async def _answer_record(self, task: TaskRecord, tool: Tool, raw: Any) -> None:
        """The client's answer to a record task's form: decide the ask, or ask again."""
        recorded = tool.from_record
        assert recorded is not None
        message, schema = recorded.form(task.arguments)
        if task.ask_expires_at <= self._clock():  # too late: it ends as its ask did
            await self._collect(task, tool)  # a person's answer in time, or the timeout
            return
        reply = read_elicit_result(raw) if isinstance(raw, Mapping) else None
        if reply is None:  # an answer that is no ElicitResult is a refusal
            reply = ElicitResult("decline")
        if reply.action == "accept":
            problems = form_errors(schema, reply.content or {})
            if problems:
                summary = "; ".join(str(problem) for problem in problems)
                if task.attempt > MAX_REASKS:
                    exc = NoValidAnswer(MAX_REASKS + 1, summary)
                    self._withdraw(task, message, schema, "declined")
                    await self._complete(task, finish_tool_call(task.tool, None, exc))
                    return
                task.attempt += 1
                text = f"{message}\n\n(The previous answer could not be used: {summary}.)"
                task.ask_again(recorded.input_key(task.attempt), _form_request(text, schema))
                await self.touch(task)
                return
            fields = schema.get("properties", {})
            content = {k: v for k, v in (reply.content or {}).items() if k in fields}
            reply = ElicitResult("accept", content)
        records = self.table.records
        if records is None:
            value = recorded.result(task.arguments, reply)
            await self._complete(task, finish_tool_call(task.tool, value, None))
            return
        question = self._question(task, message, schema, attached=True)
        try:
            decided = await records.decide(question, reply)
        except InvalidState:
            await self._reload_into(task)
            return
        except (ElicitationTimedOut, QuestionNoLongerWaiting) as exc:
            await self._complete(task, finish_tool_call(task.tool, None, exc))
            return
        value = recorded.result(task.arguments, decided)
        await self._complete(task, finish_tool_call(task.tool, value, None))

    def _withdraw(
        self, task: TaskRecord, message: str, schema: Mapping[str, Any], status: Ending
    ) -> None:
        if self.table.observer is not None:
            self.table.observer.ended(self._question(task, message, schema), status, None)

    async def cancel(self, task_id: str, principal: str | None) -> dict[str, Any]:
        """tasks/cancel: end the task (withdrawing its ask); an empty ack, also when it ended.

        A record task's ask is withdrawn first, in the one conditional write that decides it:
        when a decision came first (a racing tasks/update, a person), the task ends as its ask
        did instead. Cancelling the task first let a racing tasks/update record the ask
        accepted, "delivered" to nobody, beside a cancelled task (15 races in 15).
        """
        task, tool = await self._owned(task_id, principal)
        if task.status in TERMINAL:
            return {}
        records = self.table.records
        form = None
        if task.ask_id is not None and tool is not None and tool.from_record is not None:
            form = tool.from_record.form(task.arguments)
            if isinstance(records, AskWithdrawals) and not await records.withdraw(
                self._question(task, *form)
            ):
                await self._collect(task, tool)  # decided first: the task ends as it says
                return {}
        task.cancel()
        if not await self.touch(task):
            return {}
        if form is not None and not isinstance(records, AskWithdrawals):
            self._withdraw(task, *form, "withdrawn")  # no record to decide it in: told only
        running = self._running.pop(task.id, None)
        if running is not None and running.job is not None:
            running.job.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await running.job
        return {}


def _form_request(message: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    params = {"mode": "form", "message": message, "requestedSchema": dict(schema)}
    return {"method": mcp.ELICITATION_METHOD, "params": params}


__all__ = [
    "EXTENSION",
    "MemoryTaskStore",
    "TaskEngine",
    "TaskRecord",
    "TaskStatus",
    "TaskStore",
    "declares_tasks",
    "task_id_of",
    "task_status",
]
