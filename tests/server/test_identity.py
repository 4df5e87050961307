"""Identity: one frozen value per caller; anonymous is the empty one."""

from __future__ import annotations

import dataclasses

import pytest

from ask_mcp.server.identity import TOKEN, Credential, Identity


def test_anonymous_names_nobody_and_no_rule() -> None:
    assert Identity() == Identity.ANONYMOUS
    assert Identity.ANONYMOUS.principal is None and Identity.ANONYMOUS.team is None
    assert Identity.ANONYMOUS.credential is None and Identity.ANONYMOUS.people_only is False


def test_an_identity_is_frozen_and_equal_by_value() -> None:
    token = Credential(TOKEN, "7", "deploy-bot (askmcp_Ab12…)")
    who = Identity("user:3", "group:2", token, people_only=True)
    assert who == Identity("user:3", "group:2", Credential("token", "7", token.label), True)
    assert hash(who) == hash(Identity("user:3", "group:2", token, True))
    with pytest.raises(dataclasses.FrozenInstanceError):
        who.principal = "user:4"  # type: ignore[misc]
    assert who != dataclasses.replace(who, people_only=False)
