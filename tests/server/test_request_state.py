"""requestState sealing: what verifies, what is refused, and key rotation."""

from __future__ import annotations

import pytest

from ask_mcp.server.request_state import (
    InvalidState,
    StateClaims,
    StateSealer,
    derive_key,
    request_binding,
)

CLAIMS = StateClaims("7", 2, "local.abc", "-", request_binding("tools/call", "t", {"a": 1}), 1e10)


def test_a_sealed_state_opens_to_the_same_claims() -> None:
    sealer = StateSealer([derive_key("k" * 40)])
    assert sealer.open(sealer.seal(CLAIMS)) == CLAIMS


def test_the_binding_ignores_key_order_but_not_values() -> None:
    assert request_binding("tools/call", "t", {"a": 1, "b": 2}) == request_binding(
        "tools/call", "t", {"b": 2, "a": 1}
    )
    assert request_binding("tools/call", "t", {"a": 1}) != request_binding(
        "tools/call", "t", {"a": 2}
    )
    assert request_binding("tools/call", "t", {}) != request_binding("prompts/get", "t", {})


@pytest.mark.parametrize(
    "mutate, reason",
    [
        (lambda t: t[:-2] + ("AA" if not t.endswith("AA") else "BB"), "signature"),
        (lambda t: "x" + t, "signature"),
        (lambda t: t + ".x", "malformed"),
        (lambda t: t.replace(".", ""), "malformed"),
        (lambda t: t + "=", "malformed"),
        (lambda t: "é" + t, "malformed"),
        (lambda t: "", "malformed"),
    ],
)
def test_altered_states_are_refused(mutate, reason: str) -> None:
    sealer = StateSealer([derive_key("k" * 40)])
    with pytest.raises(InvalidState) as raised:
        sealer.open(mutate(sealer.seal(CLAIMS)))
    assert raised.value.reason == reason


def test_rotation_opens_states_sealed_with_the_previous_key() -> None:
    old, new = derive_key("old" * 20), derive_key("new" * 20)
    token = StateSealer([old]).seal(CLAIMS)
    assert StateSealer([new, old]).open(token) == CLAIMS
    with pytest.raises(InvalidState):
        StateSealer([new]).open(token)


def test_principals_are_not_readable_in_the_token() -> None:
    sealer = StateSealer([derive_key("k" * 40)])
    digest = sealer.principal_digest("alice@example.com")
    assert "alice" not in digest and digest != sealer.principal_digest("bob")
    assert sealer.principal_digest(None) == "-"


def test_short_keys_are_refused() -> None:
    with pytest.raises(ValueError, match="at least 32 bytes"):
        StateSealer([b"short"])


def test_rotation_keeps_the_principal_check_of_states_sealed_with_the_previous_key() -> None:
    old, new = derive_key("old" * 20), derive_key("new" * 20)
    before = StateSealer([old])
    claims = StateClaims(
        "7", 2, "local.abc", before.principal_digest("user:1"), CLAIMS.binding, 1e10
    )
    after = StateSealer([new, old])
    opened = after.open(before.seal(claims))
    assert after.principal_matches(opened.principal, "user:1")
    assert not after.principal_matches(opened.principal, "user:2")
    assert not after.principal_matches(opened.principal, None)
    assert after.principal_matches("-", None) and not after.principal_matches("-", "user:1")


def test_a_state_sealed_before_questions_were_still_opens_without_one() -> None:
    """A deploy must not refuse the states the previous release issued (seven claims)."""
    import hashlib
    import hmac
    import json

    from ask_mcp.server import request_state as state

    key = state.derive_key("k" * 40)
    payload = json.dumps([1, "3", 1, "w", "-", "b", 2e9], separators=(",", ":")).encode()
    tag = hmac.new(key, payload, hashlib.sha256).digest()[:16]
    token = state._b64(payload) + "." + state._b64(tag)
    claims = state.StateSealer([key]).open(token)
    assert (claims.call, claims.question) == ("3", None)
    sealed = state.StateClaims(
        "4", 2, "w", "-", "b", 2e9, state.QuestionClaims("a" * 32, "k", 2, "url")
    )
    assert state.StateSealer([key]).open(state.StateSealer([key]).seal(sealed)) == sealed
