"""What askserver changes in how its process serves, each change measured by bench/.

daphne serves HTTP through Twisted's `http.Request`, which does two things for every request
that an ASGI server does not need:

- It parses the Content-Type of every POST with the `email` package, to decode form fields into
  `request.args`. daphne hands the raw body to the application and never reads `args`. This
  was 13 % of a worker's CPU in the MRTR benchmark (`bench/`), more than the MCP handling.
- It formats a combined-log access line for every request and writes it to Twisted's log,
  where daphne's observers drop it (daphne writes its own access log, `--access-log`): 2.4 %.

:func:`tune_daphne` turns both off. It changes nothing under uvicorn or any other server, and
does nothing when daphne is not loaded (importing daphne's server would install its reactor).

:func:`freeze_startup_objects` keeps the garbage collector's full passes off the objects every
process builds at startup, under any server.
"""

from __future__ import annotations

import gc
import sys
from typing import Any

TUNED_MARK = "askserver_tuned"


def tune_daphne() -> bool:
    """Make this process's daphne skip Twisted's form parsing and access-log lines.

    Call it before daphne accepts connections: the daphne command loads the ASGI application
    (askserver/asgi.py calls this) before it builds its HTTP factory. Returns whether daphne
    is tuned.
    """
    if "daphne.server" not in sys.modules:
        return False
    from daphne import http_protocol, server

    if getattr(http_protocol.WebRequest, TUNED_MARK, False):
        return True

    class WebRequest(http_protocol.WebRequest):  # type: ignore[misc]
        """daphne's request, without Twisted's decoding of form fields it never reads."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("parsePOSTFormSubmission", False)
            super().__init__(*args, **kwargs)

    class HTTPFactory(http_protocol.HTTPFactory):  # type: ignore[misc]
        """daphne's factory, without Twisted's access-log line that nothing shows."""

        def log(self, request: Any) -> None:
            return None

    setattr(WebRequest, TUNED_MARK, True)
    # daphne looks both names up when it builds its factory and each connection's protocol.
    http_protocol.WebRequest = WebRequest
    server.HTTPFactory = HTTPFactory
    return True


def freeze_startup_objects() -> None:
    """Leave the objects built at startup (Django, the apps, the server) out of every collection.

    Python's full collections traversed all of them: under the MRTR benchmark a worker paused
    for 64 ms (median; 97 ms at worst) about once a second, the long tail of the round
    latency. These objects live as long as the process, so the collector gains nothing by
    looking at them; after `gc.freeze()` the same collections took 11 ms.
    """
    gc.freeze()
