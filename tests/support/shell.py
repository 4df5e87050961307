"""Reading and writing a live server's database from a test: code run by `manage.py shell -c`."""

from __future__ import annotations

import json
from typing import Any

from tests.support.live import LiveServer


def shell(server: LiveServer, code: str) -> Any:
    """Run `code` against the server's database; what it printed last, read as JSON.

    The code prints its answer with `print(json.dumps(...))` as its last output, so anything
    Django or the code printed before (a warning, a migration note) is passed over.
    """
    return json.loads(server.manage("shell", "-c", code).strip().splitlines()[-1])
