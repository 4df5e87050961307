"""Web Push's pure parts: which questions get answer buttons, the buttons' tokens, the VAPID key the var step makes."""

from __future__ import annotations

import stat
import time
from pathlib import Path
from typing import Any

import pytest

from ask_mcp.reach import push
from askserver import var

YES_NO: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean", "title": "Go ahead?"}},
    "required": ["ok"],
}


@pytest.mark.parametrize(
    "schema, buttons",
    [
        (YES_NO, [("ok", "Yes", True), ("ok", "No", False)]),
        (
            {
                "type": "object",
                "properties": {"v": {"type": "string", "enum": ["ship", "hold"]}},
                "required": ["v"],
            },
            [("v", "ship", "ship"), ("v", "hold", "hold")],
        ),
        (  # an optional note beside it does not stop the buttons
            {
                "type": "object",
                "properties": {
                    "v": {"type": "string", "oneOf": [{"const": "a", "title": "Alpha"}]},
                    "note": {"type": "string"},
                },
                "required": ["v"],
            },
            [("v", "Alpha", "a")],
        ),
        (  # three options: more than a notification shows
            {
                "type": "object",
                "properties": {"v": {"type": "string", "enum": ["a", "b", "c"]}},
                "required": ["v"],
            },
            [],
        ),
        (  # something else required: the page it is
            {
                "type": "object",
                "properties": {"ok": {"type": "boolean"}, "why": {"type": "string"}},
                "required": ["ok", "why"],
            },
            [],
        ),
        (  # two choices: which would a button answer?
            {
                "type": "object",
                "properties": {"a": {"type": "boolean"}, "b": {"type": "boolean"}},
                "required": [],
            },
            [],
        ),
    ],
)
def test_only_one_small_choice_with_nothing_else_required_gets_buttons(
    schema: dict[str, Any], buttons: list[tuple[str, str, Any]]
) -> None:
    assert push.quick_answers(schema) == buttons


@pytest.mark.django_db
def test_an_answer_token_is_bound_signed_and_expires_with_its_ask(settings: Any) -> None:
    answer = push.QuickAnswer("ab" * 16, 7, "ok", True, "Yes")
    token = push.answer_token(answer, time.time() + 60)
    assert push.read_answer(token) == answer
    assert push.read_answer(token, now=time.time() + 61) is None  # the ask's expiry passed
    assert push.read_answer(token[:-2] + "xx") is None  # forged or edited
    assert push.read_answer(push.ack_token(5)) is None  # another token of ours is not one
    settings.SECRET_KEY = "another-key-entirely-0123456789-abcdefghijklmnopqrstuvwxyz"
    assert push.read_answer(token) is None


def test_the_var_step_makes_one_owner_only_vapid_key_unless_one_is_given(tmp_path: Path) -> None:
    environ = {"ASKSERVER_VAR_DIR": str(tmp_path / "var"), "DATABASE_URL": "postgres://x/y"}
    folder = var.prepare_var_dir(environ)
    key = var.vapid_private_key(folder)
    assert push.key_problem(key) is None  # a P-256 key VAPID signs with
    assert stat.S_IMODE((folder / var.VAPID_KEY_FILE).stat().st_mode) == 0o600
    var.prepare_var_dir(environ)
    assert var.vapid_private_key(folder) == key  # made once, kept

    given = {
        **environ,
        "ASKSERVER_VAR_DIR": str(tmp_path / "other"),
        "ASKSERVER_VAPID_PRIVATE_KEY": key,
    }
    assert not (var.prepare_var_dir(given) / var.VAPID_KEY_FILE).exists()
