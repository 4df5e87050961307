"""tune_daphne skips Twisted's form parsing and access lines (nothing without daphne); startup objects are frozen.

Each case runs in a fresh interpreter: importing daphne's server installs its Twisted reactor
for the whole process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A request built the way daphne builds one for each connection, on an in-memory transport.
DAPHNE_REQUEST = """
import daphne.server
import askserver.asgi
from daphne import server
from twisted.internet.testing import StringTransport

class Server:
    def protocol_connected(self, protocol):
        pass

factory = server.HTTPFactory(Server())
counted = factory.buildProtocol(("127.0.0.1", 0))  # the guard counts it under its address
counted.makeConnection(StringTransport())
protocol = counted.wrappedProtocol
request = protocol.requestFactory(protocol._channel, False)
"""


def run_python(code: str) -> str:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_under_daphne_requests_skip_form_parsing() -> None:
    out = run_python(DAPHNE_REQUEST + "print(request._parsePOSTFormSubmission)")
    assert out == "False"


def test_under_daphne_twisted_writes_no_access_line() -> None:
    out = run_python(
        DAPHNE_REQUEST
        + "written = []\n"
        + "factory._logFile = type('File', (), {'write': lambda self, line: written.append(line)})()\n"
        + "factory.log(request)\n"
        + "print(len(written))"
    )
    assert out == "0"


def test_without_daphne_loaded_it_imports_and_changes_nothing() -> None:
    # Importing daphne's server would install the Twisted reactor into a process that may not
    # run daphne at all (a project serving with uvicorn and without daphne in INSTALLED_APPS).
    out = run_python(
        "import sys\n"
        "from ask_mcp.transports.daphne import tune_daphne\n"
        "print(tune_daphne(), 'daphne.server' in sys.modules, "
        "'twisted.internet.reactor' in sys.modules)\n"
    )
    assert out == "False False False"


def test_the_objects_built_at_startup_are_left_out_of_collections() -> None:
    out = run_python("import gc\nimport askserver.asgi\nprint(gc.get_freeze_count() > 10_000)")
    assert out == "True"
