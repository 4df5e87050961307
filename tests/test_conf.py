"""The ASK_MCP setting: defaults documented in docs/reference/settings.md, checks with ids, the server built from it."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest
from django.core.checks import run_checks
from django.core.checks.registry import registry
from django.test import override_settings

from ask_mcp import conf, runtime
from ask_mcp.checks import KIND_CHECKS
from askserver import environment

ROOT = Path(__file__).resolve().parents[1]
SETTINGS_PAGE = ROOT / "docs" / "reference" / "settings.md"
"""The settings table, once the README's, between its marker comments."""
CHECKS_DOC = ROOT / "docs" / "reference" / "checks.md"


def settings_table() -> str:
    """The text between the page's settings-table markers, each on its own line, once."""
    text = SETTINGS_PAGE.read_text()
    tables = re.findall(
        r"^<!-- settings-table:start -->$(.*?)^<!-- settings-table:end -->$", text, re.M | re.S
    )
    assert len(tables) == 1 and text.count("<!-- settings-table:") == 2, "one start, then one end"
    return str(tables[0])


def test_the_readme_settings_table_lists_every_variable_once_with_its_default() -> None:
    # The table is rendered from the declarations (the project's rows in askserver.environment,
    # one row per ASK_MCP key from ask_mcp.conf): the page holds it as rendered, nothing else.
    assert len(environment.BY_NAME) == len(environment.VARIABLES)
    assert settings_table().strip() == environment.settings_table().strip()


def test_every_ask_mcp_key_has_its_variable() -> None:
    keys = [var.key for var in environment.VARIABLES if var.key]
    assert keys == list(conf.DEFAULTS) == [setting.key for setting in conf.SETTINGS]
    assert {var.name: var.also for var in environment.VARIABLES if var.also} == {
        "ASKSERVER_DATABASE_URL": ("DATABASE_URL",),
        "ASKSERVER_REDIS_URL": ("ASK_MCP_REDIS_URL",),
        "ASKSERVER_REDIS_PREFIX": ("ASK_MCP_REDIS_PREFIX",),
        "ASKSERVER_LOG_LEVEL": ("ASK_MCP_LOG_LEVEL",),
        "ASKSERVER_ALLOW_PRIVATE_TARGETS": ("ASKSERVER_ALLOW_PRIVATE_WEBHOOKS",),
    }


def test_each_kind_of_key_is_read_checked_and_typed_one_way() -> None:
    kinds = set(get_args(conf.Kind))
    assert kinds == set(conf.ENVIRONMENT_KINDS) == set(KIND_CHECKS) == set(conf.TYPED)


def test_every_check_id_the_code_can_emit_is_documented_once() -> None:
    # The modules whose registered checks are ours, and conf, whose declarations name the ids
    # of each key's check.
    modules = {inspect.getmodule(check) for check in registry.get_checks(True)} | {conf}
    sources = [inspect.getsource(m) for m in modules if m and m.__name__.startswith("ask")]
    emitted = {
        found for source in sources for found in re.findall(r'"(ask_mcp\.[EW]\d{3})"', source)
    }
    table = CHECKS_DOC.read_text().split("<!-- checks-table:start -->")[1]
    table = table.split("<!-- checks-table:end -->")[0]
    documented = re.findall(r"^\| `(ask_mcp\.[EW]\d{3})` \|", table, re.MULTILINE)
    assert len(documented) == len(set(documented))
    assert set(documented) == emitted


@pytest.mark.parametrize(
    "setting, check_id",
    [
        ("not a dict", "ask_mcp.E001"),
        ({"NOPE": 1}, "ask_mcp.E002"),
        ({"ELICITATION_CAPACITY": 0}, "ask_mcp.E003"),
        ({"MAX_BODY_BYTES": "big"}, "ask_mcp.E003"),
        ({"ELICITATION_TTL": -5}, "ask_mcp.E004"),
        ({"KEEPALIVE_SECONDS": True}, "ask_mcp.E004"),
        ({"TOOLKITS": ["Ask"]}, "ask_mcp.E005"),
        ({"TOOLKITS": {"Nope": {}}}, "ask_mcp.E006"),
        ({"TOOLKITS": {"Ask": {"timout": 3}}}, "ask_mcp.E006"),
        ({"ON_ELICIT": "no.such.module.hook"}, "ask_mcp.E007"),
        ({"ALLOWED_ORIGINS": "https://a.example"}, "ask_mcp.E008"),
        ({"ELICITATION_PER_PRINCIPAL": 0}, "ask_mcp.E003"),
        ({"ALLOW_ANONYMOUS_LOOPBACK": "no"}, "ask_mcp.E012"),
        ({"ELICITATION_CAPACITY": 8, "ELICITATION_PER_PRINCIPAL": 9}, "ask_mcp.W040"),
    ],
)
def test_bad_settings_are_reported_by_system_checks(setting: object, check_id: str) -> None:
    with override_settings(ASK_MCP=setting):
        ids = [message.id for message in run_checks(databases=[])]
    assert check_id in ids


def test_the_default_settings_pass_the_checks() -> None:
    with override_settings(ASK_MCP={}):
        assert [m for m in run_checks(databases=[]) if m.id and m.id.startswith("ask_mcp")] == []


def test_an_unknown_toolkit_setting_names_the_valid_ones() -> None:
    with override_settings(ASK_MCP={"TOOLKITS": {"Ask": {"timout": 3}}}):
        (message,) = [m for m in run_checks(databases=[]) if m.id == "ask_mcp.E006"]
    assert (
        "no setting(s) 'timout'" in message.msg and "valid settings: prefix, timeout" in message.msg
    )


def test_the_server_is_built_from_settings_and_rebuilt_when_they_change() -> None:
    with override_settings(
        ASK_MCP={
            "TOOLKITS": {"Ask": {"prefix": "team", "timeout": 5}},
            "ELICITATION_CAPACITY": 3,
            "NAME": "crew",
        }
    ):
        server = runtime.get_server()
        assert list(server.tools) == ["team_ask"]
        assert server.table.capacity == 3 and server.name == "crew"
    assert list(runtime.get_server().tools) == ["user_ask"]


@pytest.mark.parametrize(
    "setting, layers, check_id",
    [
        ({"SWEEP_SECONDS": 0}, None, "ask_mcp.E004"),
        ({"PUBLIC_URL": "ask.example.com"}, None, "ask_mcp.E009"),
        ({"ON_ELICIT": "ask_mcp.web.elicit.on_elicit"}, {}, "ask_mcp.E010"),
    ],
)
def test_the_inbox_settings_are_checked(
    setting: dict[str, object], layers: dict[str, object] | None, check_id: str
) -> None:
    extra = {} if layers is None else {"CHANNEL_LAYERS": layers}
    with override_settings(ASK_MCP=setting, **extra):
        ids = [message.id for message in run_checks(databases=[])]
    assert check_id in ids


def test_askserver_sends_questions_to_the_browser_inbox_and_records_every_ask() -> None:
    from ask_mcp.records.recorder import AskRecorder
    from ask_mcp.web.elicit import ask_in_browser
    from askserver import settings as project

    with override_settings(ASK_MCP=project.ASK_MCP):
        server = runtime.get_server()
        assert server.on_elicit is ask_in_browser
        assert isinstance(server.table.observer, AskRecorder)
        assert [m for m in run_checks(databases=[]) if m.id and m.id.startswith("ask_mcp")] == []


@pytest.mark.parametrize(
    "old, new",
    [
        ("ASK_MCP_REDIS_URL", "ASKSERVER_REDIS_URL"),
        ("ASK_MCP_REDIS_PREFIX", "ASKSERVER_REDIS_PREFIX"),
        ("ASK_MCP_LOG_LEVEL", "ASKSERVER_LOG_LEVEL"),
    ],
)
def test_an_old_environment_name_still_works_and_a_check_names_the_new_one(
    old: str, new: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(new, raising=False)
    monkeypatch.setenv(old, "from-the-old-name")
    assert environment.raw(environment.variable(new), os.environ) == (old, "from-the-old-name")
    (warning,) = [m for m in run_checks(databases=[]) if m.id == "ask_mcp.W003"]
    assert old in warning.msg and new in (warning.hint or "")
    monkeypatch.setenv(new, "from-the-new-name")
    assert environment.raw(environment.variable(new), os.environ) == (new, "from-the-new-name")


def test_the_project_reads_the_redis_url_from_the_old_name_too() -> None:
    code = (
        "import os; os.environ['ASK_MCP_REDIS_URL'] = 'redis://127.0.0.1:6379/9'; "
        "from askserver import settings; "
        "print(settings.CHANNEL_LAYERS['default']['CONFIG']['hosts'][0])"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("REDIS_URL")}
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=True,
    )
    assert out.stdout.strip() == "redis://127.0.0.1:6379/9"


def test_the_typed_values_follow_override_settings() -> None:
    with override_settings(ASK_MCP={"KEEPALIVE_SECONDS": 2, "SWEEP_SECONDS": 7}):
        assert conf.values().keepalive_seconds == 2.0
        assert conf.values().sweep_seconds == 7.0
    assert conf.values().keepalive_seconds == 15.0
