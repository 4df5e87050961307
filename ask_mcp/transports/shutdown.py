"""A graceful stop under daphne: SIGTERM leaves every ask pending and the recorder written; knows no ask.

daphne stops on SIGTERM (or SIGINT) by running Twisted's "before shutdown" triggers; its own
cancels every application instance (each held stream) and waits for them. daphne sends no ASGI
lifespan events, so :func:`install` wraps that trigger: the worker first refuses new calls
(503, see :data:`ask_mcp.transports.http.STOPPING_TEXT`), the held calls are cancelled as
daphne would, and then :func:`ask_mcp.runtime.stop_gracefully` drops the parked calls, writes
everything the recorder holds and leaves this worker's asks pending, held by nobody, before
the reactor stops. Under uvicorn the same runs from the lifespan shutdown
(:func:`ask_mcp.runtime.lifecycle`). docs/deploy/workers.md, "Deploying without losing a question".
"""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any, Final

logger = logging.getLogger("ask_mcp.transports.shutdown")

INSTALLED_MARK: Final = "askserver_graceful"
"""Set on daphne's Server class once its shutdown trigger is wrapped."""


def install() -> bool:
    """Make this process's daphne stop gracefully; returns whether daphne runs here.

    Call it before daphne runs (askserver/asgi.py does, beside tune_daphne): daphne registers
    its shutdown trigger when it starts serving.
    """
    if "daphne.server" not in sys.modules:
        return False
    from daphne import server

    if getattr(server.Server, INSTALLED_MARK, False):
        return True
    kill_all = server.Server.kill_all_applications

    def kill_all_applications(self: Any) -> Any:
        from twisted.internet import defer

        from ask_mcp import runtime

        runtime.get_server().table.stopping = True  # from now on, new calls get 503
        waiting = kill_all(self)  # daphne's own: cancel every application instance, wait

        def then(_: object) -> Any:
            stopped = asyncio.ensure_future(runtime.stop_gracefully())
            return defer.Deferred.fromFuture(stopped).addErrback(_logged)

        return waiting.addBoth(then)

    server.Server.kill_all_applications = kill_all_applications
    setattr(server.Server, INSTALLED_MARK, True)
    return True


def _logged(failure: Any) -> None:
    logger.error("stopping gracefully failed: %s", failure.getErrorMessage())
