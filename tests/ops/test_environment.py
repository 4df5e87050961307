"""The ASKSERVER_ variables: typed reading, the checks that name them, askserver_config's masking."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from django.core.checks import run_checks
from django.test import override_settings

from askserver import environment
from tests.support.live import ROOT


@pytest.mark.parametrize(
    "name, text, value",
    [
        ("ASKSERVER_ELICITATION_CAPACITY", "128", 128),
        ("ASKSERVER_ELICITATION_TTL", "2.5", 2.5),
        ("ASKSERVER_ALLOW_ANONYMOUS_LOOPBACK", "Yes", True),
        ("ASKSERVER_DEBUG", "off", False),
        ("ASKSERVER_ALLOWED_HOSTS", "a.example, b.example,", ["a.example", "b.example"]),
        ("ASKSERVER_TOOLKITS", '{"Ask": {"timeout": 5}}', {"Ask": {"timeout": 5}}),
        ("ASKSERVER_LOG_FORMAT", "JSON", "json"),
        ("ASKSERVER_ANSWER_RETENTION_DAYS", "none", None),
    ],
)
def test_each_kind_of_variable_is_read_as_its_type(name: str, text: str, value: object) -> None:
    values, problems = environment.read({name: text})
    assert problems == {}
    assert values[name] == value


def test_an_unreadable_variable_keeps_its_default_and_says_what_it_takes() -> None:
    env = {"ASKSERVER_ELICITATION_CAPACITY": "lots", "ASKSERVER_LOG_FORMAT": "xml"}
    values, problems = environment.read(env)
    assert values == {}
    assert problems["ASKSERVER_ELICITATION_CAPACITY"] == (
        "ASKSERVER_ELICITATION_CAPACITY=lots must be a whole number such as 64"
    )
    assert "must be one of plain, json" in problems["ASKSERVER_LOG_FORMAT"]
    assert environment.get("LOG_FORMAT", env) == "plain"


def test_a_secret_is_never_quoted_in_a_problem() -> None:
    _, problems = environment.read({"ASKSERVER_METRICS_TOKEN": "", "ASKSERVER_SECRET_KEY": "s3"})
    assert problems == {}
    assert environment.shown(environment.variable("SECRET_KEY"), "s3") == environment.MASK
    assert (
        environment.mask_url("postgres://u:pw@db:5432/x")
        == f"postgres://u:{environment.MASK}@db:5432/x"
    )


def test_the_old_and_conventional_names_are_read_when_the_new_one_is_unset() -> None:
    var = environment.variable("DATABASE_URL")
    assert environment.raw(var, {"DATABASE_URL": "postgres://a/b"}) == (
        "DATABASE_URL",
        "postgres://a/b",
    )
    both = {"DATABASE_URL": "postgres://a/b", "ASKSERVER_DATABASE_URL": "postgres://c/d"}
    assert environment.raw(var, both) == ("ASKSERVER_DATABASE_URL", "postgres://c/d")


@pytest.mark.parametrize(
    "env, check_id, named",
    [
        ({"ASKSERVER_SWEEP_SECONDS": "soon"}, "ask_mcp.E050", "ASKSERVER_SWEEP_SECONDS=soon"),
        ({"ASKSERVER_DATABASE_URL": "mysql://db/x"}, "ask_mcp.E054", "ASKSERVER_DATABASE_URL"),
        ({"DATABASE_URL": "sqlite:///x"}, "ask_mcp.E054", "DATABASE_URL"),
        ({"ASKSERVER_REDIS_URL": "http://r:6379"}, "ask_mcp.E055", "ASKSERVER_REDIS_URL"),
        ({"ASKSERVER_TRUSTED_PROXIES": "127.0.0.1,nginx"}, "ask_mcp.E056", "'nginx'"),
        # float("inf") would take it: a cool-off of infinite minutes crashed the settings.
        ({"ASKSERVER_LOGIN_COOLOFF_MINUTES": "1e999"}, "ask_mcp.E050", "must be a finite number"),
        ({"ASKSERVER_TOOLKITS": '{"Ask": {"timeout": 1e999}}'}, "ask_mcp.E050", "1e999 reads as"),
    ],
)
def test_a_bad_variable_fails_a_check_that_names_it(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], check_id: str, named: str
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with override_settings(ASK_MCP={}):
        messages = [m for m in run_checks(databases=[]) if m.id == check_id]
    assert len(messages) == 1 and named in messages[0].msg


def test_a_range_check_names_the_variable_that_set_the_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ASKSERVER_ELICITATION_CAPACITY", "0")
    with override_settings(ASK_MCP={"ELICITATION_CAPACITY": 0}):
        (message,) = [m for m in run_checks(databases=[]) if m.id == "ask_mcp.E003"]
    assert message.msg.startswith(
        "ASKSERVER_ELICITATION_CAPACITY (ASK_MCP['ELICITATION_CAPACITY'])"
    )


@pytest.mark.parametrize(
    "setting, check_id",
    [
        ({"METRICS": True}, "ask_mcp.E053"),
        ({"METRICS": True, "METRICS_TOKEN": "short"}, "ask_mcp.E053"),
        ({"METRICS": "yes"}, "ask_mcp.E051"),
        ({"METRICS_TOKEN": 12}, "ask_mcp.E052"),
    ],
)
def test_metrics_need_a_long_token_of_their_own(setting: dict[str, object], check_id: str) -> None:
    with override_settings(ASK_MCP=setting):
        assert check_id in [m.id for m in run_checks(databases=[])]
    with override_settings(ASK_MCP={"METRICS": True, "METRICS_TOKEN": "x" * 32}):
        assert not [m for m in run_checks(databases=[]) if m.id and m.id.startswith("ask_mcp.E05")]


def _config(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ASKSERVER_", "DATABASE_URL"))}
    return subprocess.run(
        [sys.executable, "manage.py", "askserver_config", *args],
        cwd=ROOT,
        env={**base, "DJANGO_SETTINGS_MODULE": "askserver.settings", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_askserver_config_prints_the_configuration_in_force_with_secrets_masked(tmp_path) -> None:
    env = {
        "ASKSERVER_VAR_DIR": str(tmp_path),
        "ASKSERVER_SECRET_KEY": "the-secret-key-never-shown-0123456789",
        "ASKSERVER_METRICS": "1",
        "ASKSERVER_METRICS_TOKEN": "metrics-token-never-shown-0123456789",
        "DATABASE_URL": "postgres://ask:db-password-never-shown@db.example:5432/ask",
        "ASKSERVER_ELICITATION_CAPACITY": "12",
        "ASKSERVER_KEEPALIVE_SECONDS": "later",
    }
    done = _config(env, "--json")
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    variables = shown["variables"]
    assert variables["ASKSERVER_ELICITATION_CAPACITY"] == {
        "value": "12",
        "source": "environment (ASKSERVER_ELICITATION_CAPACITY)",
    }
    assert variables["ASKSERVER_VAR_DIR"]["value"] == str(tmp_path)
    assert variables["ASKSERVER_DATABASE_URL"] == {
        "value": f"postgres://ask:{environment.MASK}@db.example:5432/ask",
        "source": "environment (DATABASE_URL)",
    }
    assert variables["ASKSERVER_SECRET_KEY"]["value"] == environment.MASK
    assert variables["ASKSERVER_METRICS_TOKEN"]["value"] == environment.MASK
    assert variables["ASKSERVER_KEEPALIVE_SECONDS"]["source"] == "default (unreadable value)"
    assert "ASKSERVER_KEEPALIVE_SECONDS" in shown["problems"]
    assert list(variables) == [var.name for var in environment.VARIABLES]
    plain = _config(env)
    for output in (done.stdout + done.stderr, plain.stdout + plain.stderr):
        assert "never-shown" not in output
    assert "ASKSERVER_ELICITATION_CAPACITY" in plain.stdout


SHOW_PROXY_SETTINGS = (
    "import json; from django.conf import settings as s; print(json.dumps([s.CSRF_TRUSTED_ORIGINS,"
    " s.SECURE_PROXY_SSL_HEADER, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE]))"
)


@pytest.mark.parametrize(
    "env, shown",
    [
        ({}, [[], None, False, False]),
        (
            {
                "ASKSERVER_CSRF_TRUSTED_ORIGINS": "https://ask.example.com:8443, https://b.example",
                "ASKSERVER_TRUST_FORWARDED_PROTO": "1",
                "ASKSERVER_SECURE_COOKIES": "yes",
            },
            [
                ["https://ask.example.com:8443", "https://b.example"],
                ["HTTP_X_FORWARDED_PROTO", "https"],
                True,
                True,
            ],
        ),
    ],
)
def test_the_proxy_variables_set_django_s_own_settings(
    tmp_path, env: dict[str, str], shown: list[object]
) -> None:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ASKSERVER_", "DATABASE_URL"))}
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", SHOW_PROXY_SETTINGS],
        cwd=ROOT,
        env={
            **base,
            "DJANGO_SETTINGS_MODULE": "askserver.settings",
            "ASKSERVER_VAR_DIR": str(tmp_path),
            **env,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == shown


PROXY_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")


@pytest.mark.parametrize(
    "settings, ask_mcp, ids",
    [
        ({"SECURE_PROXY_SSL_HEADER": PROXY_HEADER}, {}, ["ask_mcp.W070"]),
        (
            {"SECURE_PROXY_SSL_HEADER": PROXY_HEADER, "SESSION_COOKIE_SECURE": True},
            {"ALLOW_ANONYMOUS_LOOPBACK": True},
            ["ask_mcp.E070", "ask_mcp.W070"],
        ),
        (
            {
                "SECURE_PROXY_SSL_HEADER": PROXY_HEADER,
                "SESSION_COOKIE_SECURE": True,
                "CSRF_COOKIE_SECURE": True,
            },
            {},
            [],
        ),
        ({"SECURE_PROXY_SSL_HEADER": None}, {"ALLOW_ANONYMOUS_LOOPBACK": True}, []),
    ],
)
def test_behind_a_tls_proxy_loopback_needs_a_token_and_cookies_must_be_secure(
    settings: dict[str, object], ask_mcp: dict[str, object], ids: list[str]
) -> None:
    with override_settings(ASK_MCP=ask_mcp, **settings):
        found = [m.id for m in run_checks(databases=[]) if m.id in ("ask_mcp.E070", "ask_mcp.W070")]
    assert found == ids
