"""askserver's own system checks: its variables' old names, types and URL schemes, and a TLS proxy's consequences."""

from __future__ import annotations

import pytest
from django.test import override_settings

from askserver.checks import W070, check_behind_a_tls_proxy, check_environment

PROXY = ("HTTP_X_FORWARDED_PROTO", "https")


def ids(messages: list[object]) -> list[str]:
    return [message.id for message in messages]  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "ASKSERVER_DATABASE_URL",
        "DATABASE_URL",
        "ASKSERVER_REDIS_URL",
        "ASK_MCP_REDIS_URL",
    ):
        monkeypatch.delenv(name, raising=False)


def test_nothing_set_is_nothing_to_say() -> None:
    assert ids(check_environment()) == []


def test_an_old_name_is_named_with_its_new_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASK_MCP_REDIS_URL", "redis://127.0.0.1:6379/0")
    (warning,) = check_environment()
    assert warning.id == "ask_mcp.W003"
    assert "ASK_MCP_REDIS_URL" in warning.msg and "ASKSERVER_REDIS_URL" in (warning.hint or "")


def test_text_that_is_not_of_its_variables_type_is_an_error_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ASKSERVER_LOGIN_FAILURE_LIMIT", "many")
    (error,) = check_environment()
    assert error.id == "ask_mcp.E050"
    assert "ASKSERVER_LOGIN_FAILURE_LIMIT" in error.msg + (error.hint or "")


@pytest.mark.parametrize(
    "name, url, check_id",
    [
        ("ASKSERVER_DATABASE_URL", "mysql://127.0.0.1/ask", "ask_mcp.E054"),
        ("DATABASE_URL", "sqlite:///tmp/x", "ask_mcp.E054"),
        ("ASKSERVER_REDIS_URL", "http://127.0.0.1:6379", "ask_mcp.E055"),
    ],
)
def test_a_url_of_the_wrong_scheme_names_the_variable_and_the_scheme(
    monkeypatch: pytest.MonkeyPatch, name: str, url: str, check_id: str
) -> None:
    monkeypatch.setenv(name, url)
    (error,) = check_environment()
    assert error.id == check_id
    assert name in error.msg and repr(url.split(":", 1)[0]) in error.msg


def test_urls_of_the_right_schemes_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASKSERVER_DATABASE_URL", "postgresql://127.0.0.1/ask")
    monkeypatch.setenv("ASKSERVER_REDIS_URL", "unix:///run/redis.sock")
    assert ids(check_environment()) == []


@override_settings(SECURE_PROXY_SSL_HEADER=None)
def test_without_a_tls_proxy_there_is_nothing_to_check() -> None:
    assert check_behind_a_tls_proxy() == []


@override_settings(
    SECURE_PROXY_SSL_HEADER=PROXY, SESSION_COOKIE_SECURE=False, CSRF_COOKIE_SECURE=True
)
def test_behind_a_tls_proxy_anonymous_loopback_is_an_error_and_plain_cookies_a_warning() -> None:
    # The test settings allow anonymous loopback: behind a proxy that would let anyone in.
    messages = check_behind_a_tls_proxy()
    assert ids(messages) == ["ask_mcp.E070", "ask_mcp.W070"]
    assert messages[1] is W070


@override_settings(
    SECURE_PROXY_SSL_HEADER=PROXY,
    SESSION_COOKIE_SECURE=True,
    CSRF_COOKIE_SECURE=True,
    ASK_MCP={"ALLOW_ANONYMOUS_LOOPBACK": False},
)
def test_behind_a_tls_proxy_with_tokens_and_secure_cookies_all_is_well() -> None:
    assert check_behind_a_tls_proxy() == []
