"""Static files as `make run` serves them (Django's own handler), with a path outside the static roots answered 404; knows nothing of the inbox.

Django's `ASGIStaticFilesHandler` turns `Http404` into a 404 but lets the
`SuspiciousFileOperation` its finders raise for `/static/%2e%2e/...` escape as a 500 (the
finder refuses the path before anything is read, so nothing leaked, but the answer was a server
error and a traceback in the log).
"""

from __future__ import annotations

from typing import Any

from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.exceptions import SuspiciousFileOperation
from django.http import Http404


class StaticFiles(ASGIStaticFilesHandler):
    """Django's static files handler; a path that leaves the static roots is simply not found."""

    def serve(self, request: Any) -> Any:
        try:
            return super().serve(request)
        except SuspiciousFileOperation as exc:
            raise Http404(f"{request.path!r} is not a static file") from exc
