"""A new Question from the call asking it: its id, deadline, attach key and who asks; knows no route or table.

The elicitation table decides the route and the deadline; this builds the plain data observers
see from the call's Context. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ask_mcp.server.context import Context
from ask_mcp.server.ids import new_ask_id
from ask_mcp.server.question import Question, attach_key
from ask_mcp.server.state import request_binding


def new_question(
    ctx: Context,
    message: str,
    schema: Mapping[str, Any],
    route: str,
    *,
    now: float,
    limit: float,
    worker: str,
) -> Question:
    """The question `ctx`'s call asks, waiting `limit` seconds from `now` in `worker`.

    A question answered in the browser gets an attach key: a call asking the same (the same
    principal, tool and arguments, or the call's idempotency key) attaches to its ask.
    """
    attach = None
    if route != "client":
        same = ctx.idempotency_key or request_binding(ctx.method, ctx.name, ctx.arguments)
        attach = attach_key(ctx.principal, ctx.name, same)
    return Question(
        id=new_ask_id().hex,
        message=message,
        schema=schema,
        tool=ctx.name,
        principal=ctx.principal,
        route=route,
        created_at=now,
        expires_at=now + limit,
        client_name=ctx.client_name,
        worker=worker,
        team=ctx.team,
        toolkit=ctx.toolkit,
        attach_key=attach,
        collector=f"{ctx.client_name or 'a client'} ({ctx.protocol_version}) via {worker}",
        credential=ctx.credential,
        client_version=ctx.client_version,
        session=ctx.session,
        people_only=ctx.people_only,
    )
