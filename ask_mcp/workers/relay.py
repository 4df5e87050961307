"""Each worker's mailbox on the Channels layer: how a retry or an answer reaches the call's worker; no database.

A parked MRTR call lives in one process; its requestState names that process's channel. A retry
that lands elsewhere is forwarded here and the owner runs the round, streaming notifications
and the result back. An answer given in a browser (or an admin's cancel) is "settled" to the
worker whose channel the ask records. With one process and the in-memory layer, everything is
a local lookup.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
import weakref
from collections.abc import Callable, Mapping
from dataclasses import asdict
from typing import Any, Final

from channels.layers import InMemoryChannelLayer, get_channel_layer

from ask_mcp.protocol.forms import ElicitResult, read_settled
from ask_mcp.protocol.jsonrpc import (
    INTERNAL_ERROR,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    JsonRpcError,
)
from ask_mcp.server.asking.table import ElicitationTable
from ask_mcp.server.errors import (
    ElicitationTimedOut,
    MissingClientCapability,
    QuestionNoLongerWaiting,
)
from ask_mcp.server.ports import Stream
from ask_mcp.server.request_state import InvalidState, StateClaims, claims_from_dict
from ask_mcp.workers.loops import alive_here, start_in_loop

logger = logging.getLogger("ask_mcp.workers.relay")

ALIVE_INTERVAL: Final = 5.0
"""Seconds between "still working" messages while an owner runs a forwarded round."""
RETRY_BACKOFF: Final = (0.1, 0.5, 1.0, 2.0)
"""Pauses before listening again after the layer failed (Redis restarting, say)."""


class ChannelLayerUnavailable(Exception):
    """The channel layer (Redis) did not take a message: the worker it was for was not reached."""


LAYER_DOWN_TEXT: Final = (
    "Could not reach the server process holding this call: its channel layer (Redis) is "
    "unavailable. The question is still waiting; retry the same request shortly."
)
"""The -32603 message of a retry that could not be forwarded (the same retry may be sent again)."""


class RelayedStream:
    """The owner's side of a forwarded round: notifications go back to the requesting worker."""

    def __init__(self, relay: ChannelRelay, reply_to: str, corr: str) -> None:
        self._relay, self._reply_to, self._corr = relay, reply_to, corr

    async def notify(self, message: dict[str, Any]) -> None:
        await self._relay.send(
            self._reply_to, {"type": "mrtr.notify", "corr": self._corr, "message": message}
        )


_relays_here: weakref.WeakValueDictionary[str, ChannelRelay] = weakref.WeakValueDictionary()
"""This process's relays by worker name: on the in-memory layer, the only workers there are."""


class ChannelRelay:
    """A worker's channel on the layer, its listener, and the calls waiting on it."""

    def __init__(
        self, alias: str = "default", *, layer: Any = None, ack_timeout: float = 5.0
    ) -> None:
        self.alias = alias
        self.worker = f"askmcp.worker.{uuid.uuid4().hex}"
        _relays_here[self.worker] = self
        self.ack_timeout = ack_timeout
        self._layer = layer
        self._table: ElicitationTable | None = None
        self._listener: asyncio.Task[None] | None = None
        self._replies: dict[str, asyncio.Queue[dict[str, Any]]] = {}
        self._settlements: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._waiters: dict[str, int] = {}
        self._forward: dict[str, str] = {}
        self._serving: dict[str, asyncio.Task[None]] = {}
        self._handlers: dict[str, Callable[[dict[str, Any]], None]] = {}
        self._groups: dict[str, int] = {}

    @property
    def layer(self) -> Any:
        if self._layer is None:
            self._layer = get_channel_layer(self.alias)
            if self._layer is None:
                raise RuntimeError(f"CHANNEL_LAYERS has no {self.alias!r} layer")
        return self._layer

    @property
    def spans_processes(self) -> bool:
        """Whether other processes share this layer (Redis); the in-memory layer is this one's."""
        try:
            layer = self.layer
        except RuntimeError:
            return False
        return not isinstance(layer, InMemoryChannelLayer)

    def attach(self, table: ElicitationTable) -> None:
        self._table = table

    def ensure_listening(self) -> None:
        """Start receiving on this worker's channel (once per event loop)."""
        if not alive_here(self._listener):
            self._listener = start_in_loop(self._listen(), name=f"ask_mcp relay {self.worker}")

    async def send(self, channel: str, message: dict[str, Any]) -> None:
        """Put `message` on `channel`.

        Raises:
            ChannelLayerUnavailable: the layer refused it twice (Redis is down).
        """
        try:
            await self.layer.send(channel, message)
        except Exception:
            # A pooled connection that died in an outage fails once, then reconnects.
            try:
                await self.layer.send(channel, message)
            except Exception as exc:
                raise ChannelLayerUnavailable(str(exc) or type(exc).__name__) from exc

    def add_handler(self, kind: str, handler: Callable[[dict[str, Any]], None]) -> None:
        """Handle messages of type `kind` arriving on this worker's channel."""
        self._handlers[kind] = handler

    async def join(self, group: str) -> None:
        """Receive a group's messages here; joins are counted, so nested users may share a group."""
        self._groups[group] = self._groups.get(group, 0) + 1
        if self._groups[group] == 1:
            self.ensure_listening()
            await self.layer.group_add(group, self.worker)

    async def leave(self, group: str) -> None:
        count = self._groups.get(group, 0) - 1
        if count > 0:
            self._groups[group] = count
            return
        self._groups.pop(group, None)
        await self.layer.group_discard(group, self.worker)

    async def broadcast(self, group: str, message: dict[str, Any]) -> None:
        await self.layer.group_send(group, message)

    async def _listen(self) -> None:
        failures = 0
        while True:
            try:
                message = await self.layer.receive(self.worker)
            except asyncio.CancelledError:
                raise
            except Exception:
                pause = RETRY_BACKOFF[min(failures, len(RETRY_BACKOFF) - 1)]
                failures += 1
                logger.warning(
                    "channel layer receive failed; retrying in %.1f s", pause, exc_info=True
                )
                await asyncio.sleep(pause)
                continue
            failures = 0
            try:
                self._dispatch(message)
            except Exception:
                logger.exception("could not handle relay message %r", message.get("type"))

    def _dispatch(self, message: dict[str, Any]) -> None:
        kind = message.get("type", "")
        if kind == "mrtr.resume":
            corr = message["corr"]
            self._serving[corr] = start_in_loop(self._serve(message), name=f"ask_mcp round {corr}")
        elif kind == "mrtr.cancel":
            task = self._serving.get(message["corr"])
            if task is not None:
                task.cancel()
        elif kind.startswith("mrtr.") or kind == "ask.taken":
            queue = self._replies.get(message.get("corr", ""))
            if queue is not None:
                queue.put_nowait(message)
        elif kind == "ask.settle":
            taken = self._settle_here(message["ask"], message["reply"], message.get("call"))
            self._acknowledge(message, taken)
        elif kind == "ask.expire":
            taken = self._expire_here(
                message["ask"], message.get("call"), str(message.get("reason") or "")
            )
            self._acknowledge(message, taken)
        elif kind in self._handlers:
            self._handlers[kind](message)
        else:
            logger.warning("ignoring relay message of unknown type %r", kind)

    # ------------------------------------------------------------------ MRTR forwarding

    async def resume_remote(
        self,
        claims: StateClaims,
        responses: Mapping[str, Any],
        stream: Stream,
        progress_token: str | int | None,
        log_level: str | None,
    ) -> dict[str, Any]:
        """Run a retry's round on the worker that holds its call, and return its wire result.

        Raises:
            QuestionNoLongerWaiting: the owner did not answer (it stopped or crashed).
            InvalidState: the owner says the state was already used.
            ElicitationTimedOut: an admin expired the call (with the reason they gave).
            JsonRpcError: the round ended in a protocol error, or the layer is down (-32603
                saying so: the call was not reached, so the same retry may be sent again).
        """
        if self._gone(claims.owner):
            raise QuestionNoLongerWaiting  # (one process) its owner stopped: no one to ask
        self.ensure_listening()
        corr = uuid.uuid4().hex
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._replies[corr] = queue
        try:
            try:
                await self.send(
                    claims.owner,
                    {
                        "type": "mrtr.resume",
                        "corr": corr,
                        "reply_to": self.worker,
                        "claims": asdict(claims),
                        "responses": dict(responses),
                        "progress_token": progress_token,
                        "log_level": log_level,
                    },
                )
            except ChannelLayerUnavailable as exc:
                logger.warning("could not forward a retry to %s: %s", claims.owner, exc)
                raise JsonRpcError(INTERNAL_ERROR, LAYER_DOWN_TEXT) from exc
            return await self._follow(queue, stream)
        except asyncio.CancelledError:
            # The client went away: stop the owner's handler too (2026-07-28 cancellation).
            with contextlib.suppress(Exception):
                await asyncio.shield(self.send(claims.owner, {"type": "mrtr.cancel", "corr": corr}))
            raise
        finally:
            self._replies.pop(corr, None)

    async def _follow(self, queue: asyncio.Queue[dict[str, Any]], stream: Stream) -> dict[str, Any]:
        """The owner's side of a forwarded round as it arrives: its notifications passed on to
        `stream`, until its result or the reason there is none (raised as resume_remote says).
        Silence past `ack_timeout` (longer once the owner said it works on it) means it is gone."""
        patience = self.ack_timeout
        while True:
            try:
                async with asyncio.timeout(patience):
                    reply = await queue.get()
            except TimeoutError:
                raise QuestionNoLongerWaiting from None
            kind = reply["type"]
            if kind in ("mrtr.ack", "mrtr.alive"):
                patience = max(self.ack_timeout, 3 * ALIVE_INTERVAL)
            elif kind == "mrtr.notify":
                await stream.notify(reply["message"])
            elif kind == "mrtr.result":
                result: dict[str, Any] = reply["result"]
                return result
            elif kind == "mrtr.used":
                raise InvalidState(reply["reason"])
            elif kind == "mrtr.gone":
                raise QuestionNoLongerWaiting
            elif kind == "mrtr.expired":
                raise ElicitationTimedOut(str(reply.get("reason") or ""))
            elif kind == "mrtr.error":
                error = reply["error"]
                raise JsonRpcError(error["code"], error["message"], error.get("data"))

    async def _serve(self, message: dict[str, Any]) -> None:
        corr, reply_to = message["corr"], message["reply_to"]
        table = self._table
        reply: dict[str, Any]
        try:
            await self.send(reply_to, {"type": "mrtr.ack", "corr": corr})
            alive = asyncio.get_running_loop().create_task(self._keep_alive(reply_to, corr))
            try:
                if table is None:
                    raise QuestionNoLongerWaiting
                result = await table.resume_local(
                    claims_from_dict(message["claims"]),
                    message["responses"],
                    stream=RelayedStream(self, reply_to, corr),
                    progress_token=message.get("progress_token"),
                    log_level=message.get("log_level"),
                )
                reply = {"type": "mrtr.result", "corr": corr, "result": result}
            finally:
                alive.cancel()
        except InvalidState as exc:
            reply = {"type": "mrtr.used", "corr": corr, "reason": exc.reason}
        except QuestionNoLongerWaiting:
            reply = {"type": "mrtr.gone", "corr": corr}
        except ElicitationTimedOut as exc:  # an admin expired the parked call
            reply = {"type": "mrtr.expired", "corr": corr, "reason": exc.reason}
        except JsonRpcError as exc:
            reply = {"type": "mrtr.error", "corr": corr, "error": exc.to_dict()}
        except MissingClientCapability as exc:
            error = JsonRpcError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                exc.message,
                {"requiredCapabilities": exc.required},
            )
            reply = {"type": "mrtr.error", "corr": corr, "error": error.to_dict()}
        except asyncio.CancelledError:
            return
        finally:
            self._serving.pop(corr, None)
        await self.send(reply_to, reply)

    async def _keep_alive(self, reply_to: str, corr: str) -> None:
        while True:
            await asyncio.sleep(ALIVE_INTERVAL)
            await self.send(reply_to, {"type": "mrtr.alive", "corr": corr})

    # ------------------------------------------------------------------ answers settled elsewhere

    def expect(self, ask_id: str, *, previous: str | None = None) -> asyncio.Future[dict[str, Any]]:
        """Register, in the holding worker, that `ask_id` waits here for a settlement.

        Several calls may wait on one ask (a call asking the same attached to it): they share
        the settlement. `previous` is the worker that held the ask before this one attached to
        it; a settlement reaching this worker is passed on to it, so its calls get it too.
        """
        self.ensure_listening()
        future = self._settlements.get(ask_id)
        if future is None or future.done():
            future = asyncio.get_running_loop().create_future()
            self._settlements[ask_id] = future
        if previous and previous != self.worker:
            self._forward[ask_id] = previous
        return future

    async def wait_settled(self, ask_id: str) -> dict[str, Any]:
        """Wait in the holding worker until someone settles `ask_id` (see :meth:`settle`)."""
        future = self._settlements.get(ask_id) or self.expect(ask_id)
        self._waiters[ask_id] = self._waiters.get(ask_id, 0) + 1
        try:
            # Shielded: one waiter leaving (its client went) must not cancel the others' wait.
            return await asyncio.shield(future)
        finally:
            left = self._waiters.pop(ask_id) - 1
            if left:
                self._waiters[ask_id] = left
            elif self._settlements.get(ask_id) is future:
                del self._settlements[ask_id]
                self._forward.pop(ask_id, None)

    def waits_for(self, ask_id: str) -> bool:
        """Whether a call in this worker still waits on `ask_id`."""
        return self._waiters.get(ask_id, 0) > 0

    async def settle(
        self, worker: str, ask_id: str, reply: Mapping[str, Any], call_id: str | None = None
    ) -> bool:
        """Deliver a person's (or an admin's) reply to the worker holding the ask.

        Returns whether a call was still there to take it: False when the call ended meanwhile,
        or its worker did not answer within `ack_timeout` (it stopped).

        Raises:
            ChannelLayerUnavailable: the reply could not be sent to the holding worker.
        """
        if worker == self.worker:
            return self._settle_here(ask_id, dict(reply), call_id)
        if self._gone(worker):
            return False
        message = {"type": "ask.settle", "ask": ask_id, "call": call_id, "reply": dict(reply)}
        return await self._ask_holder(worker, message)

    def _settle_here(self, ask_id: str, reply: dict[str, Any], call_id: str | None) -> bool:
        future = self._settlements.get(ask_id)
        if future is not None and not future.done():
            future.set_result(reply)
            previous = self._forward.pop(ask_id, None)
            if previous is not None:
                start_in_loop(self._pass_on(previous, ask_id, reply), name="ask_mcp pass on")
            return True
        if call_id is not None and self._table is not None:
            return self._table.answer_parked(
                call_id, read_settled(reply) or ElicitResult("decline")
            )
        return False

    def _gone(self, worker: str) -> bool:
        """Nobody holds the ask, or (the in-memory layer is one process's) the worker that did
        has stopped: no need to wait `ack_timeout` for an answer that cannot come."""
        return not worker or (not self.spans_processes and worker not in _relays_here)

    async def _pass_on(self, worker: str, ask_id: str, reply: dict[str, Any]) -> None:
        """Settle the calls of the worker that held `ask_id` before this one (best effort)."""
        try:
            await self.settle(worker, ask_id, reply)
        except ChannelLayerUnavailable:
            logger.warning("could not pass ask %s's answer on to %s", ask_id, worker)

    async def expire(
        self, worker: str, ask_id: str, call_id: str | None = None, reason: str = ""
    ) -> bool:
        """End an ask as expired in the worker holding it (the held call gets the timeout result,
        with staff's `reason` if they gave one).

        Returns whether a call was still there to end.
        """
        if worker == self.worker:
            return self._expire_here(ask_id, call_id, reason)
        if self._gone(worker):
            return False
        return await self._ask_holder(
            worker, {"type": "ask.expire", "ask": ask_id, "call": call_id, "reason": reason}
        )

    def _expire_here(self, ask_id: str, call_id: str | None, reason: str = "") -> bool:
        future = self._settlements.get(ask_id)
        if future is not None and not future.done():
            future.set_exception(ElicitationTimedOut(reason))
            return True
        if call_id is not None and self._table is not None:
            return self._table.expire_parked(call_id, reason)
        return False

    async def _ask_holder(self, worker: str, message: dict[str, Any]) -> bool:
        """Send `message` to the holding worker and wait (bounded) for whether it took it."""
        self.ensure_listening()
        corr = uuid.uuid4().hex
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._replies[corr] = queue
        try:
            await self.send(worker, {**message, "corr": corr, "reply_to": self.worker})
            async with asyncio.timeout(self.ack_timeout):
                return bool((await queue.get())["taken"])
        except TimeoutError:
            return False  # nobody answered: the worker holding the call is gone
        finally:
            self._replies.pop(corr, None)

    def _acknowledge(self, message: dict[str, Any], taken: bool) -> None:
        reply_to, corr = message.get("reply_to"), message.get("corr")
        if reply_to is None or corr is None:
            return
        start_in_loop(
            self.send(reply_to, {"type": "ask.taken", "corr": corr, "taken": taken}),
            name="ask_mcp relay acknowledgement",
        )

    @property
    def holding(self) -> int:
        """Asks this worker is waiting on a settlement for."""
        return len(self._settlements)
