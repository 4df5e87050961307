"""ASGI entry point of the askserver project: the app's application (ask_mcp.routing.build_application).

daphne and uvicorn import it on their own, so it is an entry point like manage.py: it prepares
the data folder (askserver/var.py) before Django loads the settings.
"""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

from askserver.var import prepare_var_dir

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "askserver.settings")
prepare_var_dir()
django_asgi_app = get_asgi_application()

from django.core.management.base import BaseCommand  # noqa: E402

# The system checks at start-up, as manage.py's commands run them: under daphne or uvicorn too, a
# setting or ASKSERVER_ variable that cannot work stops the server here, its message naming it.
BaseCommand().check()

from ask_mcp.routing import build_application  # noqa: E402  (needs the app registry)
from ask_mcp.transports import shutdown  # noqa: E402
from ask_mcp.transports.daphne import freeze_startup_objects, tune_daphne  # noqa: E402

# Under daphne only: skip Twisted's work that daphne never uses; daphne's access lines go through
# logging (JSON ones with ASKSERVER_LOG_FORMAT=json), none for /mcp, whose line is askserver's.
tune_daphne()
shutdown.install()  # under daphne only: SIGTERM leaves every ask pending, the recorder written

application = build_application(django_asgi_app)

# Last: everything imported and built so far lives as long as the process.
freeze_startup_objects()
