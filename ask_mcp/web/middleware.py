"""Middleware for the inbox's pages: a database that is down or locked answers 503 in words; knows no ask."""

from __future__ import annotations

import logging
from typing import Final

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.utils.deprecation import MiddlewareMixin

logger = logging.getLogger("ask_mcp.web.middleware")

UNAVAILABLE: Final = (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">'
    "<title>Try again in a moment · askserver</title></head><body>"
    "<h1>Try again in a moment</h1>"
    "<p>The database is unavailable or busy right now, so this request could not be "
    "completed. If you were sending an answer, open the question again in a moment: it shows "
    "whether your answer counted, and takes it again if the question still waits.</p>"
    "</body></html>"
)
"""The 503 page: what happened, and how to tell whether an answer being sent counted."""


class DatabaseUnavailableMiddleware(MiddlewareMixin):
    """Turn a lost or locked database (PostgreSQL restarting, SQLite "database is locked") into 503.

    Without it the person gets Django's bare "Server Error (500)" and cannot tell whether their
    answer counted. An answer is one conditional UPDATE, so a failed request either recorded it
    or left the question waiting; the question's page tells which. Add it to MIDDLEWARE
    (askserver does).
    """

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        logger.warning(
            "database unavailable for %s %s: %s", request.method, request.path, exception
        )
        response = HttpResponse(UNAVAILABLE, status=503)
        response["Retry-After"] = "5"
        return response
