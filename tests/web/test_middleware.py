"""A database that is down or locked answers the inbox's pages with a 503 in words, not Django's bare 500."""

from __future__ import annotations

import logging

import pytest
from django.db import InterfaceError, OperationalError
from django.http import HttpResponse
from django.test import RequestFactory

from ask_mcp.web.middleware import UNAVAILABLE, DatabaseUnavailableMiddleware


def middleware() -> DatabaseUnavailableMiddleware:
    return DatabaseUnavailableMiddleware(lambda request: HttpResponse("ok"))


@pytest.mark.parametrize(
    "error", [OperationalError("database is locked"), InterfaceError("closed")]
)
def test_a_lost_or_locked_database_is_a_503_saying_how_to_tell_whether_an_answer_counted(
    error: Exception, caplog: pytest.LogCaptureFixture
) -> None:
    request = RequestFactory().post("/ask/1/")
    with caplog.at_level(logging.WARNING, "ask_mcp.web.middleware"):
        response = middleware().process_exception(request, error)
    assert response is not None and response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.content.decode() == UNAVAILABLE and "whether your answer counted" in UNAVAILABLE
    assert "database unavailable for POST /ask/1/" in caplog.text


def test_any_other_error_is_left_to_django() -> None:
    request = RequestFactory().get("/")
    assert middleware().process_exception(request, ValueError("a bug")) is None
