"""The answer validator, checked against the jsonschema package as an oracle."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, FormatChecker

from ask_mcp.protocol.forms import (
    ElicitResult,
    check_form_schema,
    field_errors,
    form_errors,
    read_elicit_result,
    read_settled,
)

# jsonschema calls anything holding an "@" an email; ours wants text on both sides, so the
# oracle compares the "date" format only and test_formats covers the rest.
ORACLE_FORMATS = FormatChecker(["date"])

field_schemas = st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("string")},
        optional={"minLength": st.integers(0, 3), "maxLength": st.integers(0, 5)},
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("string"),
            "enum": st.lists(st.sampled_from("abcd"), min_size=1, unique=True),
        }
    ),
    st.fixed_dictionaries({"type": st.just("string"), "format": st.just("date")}),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["number", "integer"])},
        optional={"minimum": st.integers(-3, 3), "maximum": st.integers(-3, 3)},
    ),
    st.fixed_dictionaries({"type": st.just("boolean")}),
    st.fixed_dictionaries(
        {
            "type": st.just("array"),
            "items": st.fixed_dictionaries(
                {
                    "type": st.just("string"),
                    "enum": st.lists(st.sampled_from("abcd"), min_size=1, unique=True),
                }
            ),
        },
        optional={"minItems": st.integers(0, 2), "maxItems": st.integers(0, 3)},
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("string"),
            "oneOf": st.lists(
                st.builds(lambda c: {"const": c, "title": c.upper()}, st.sampled_from("abcd")),
                min_size=1,
                unique_by=lambda o: o["const"],
            ),
        }
    ),
)
answers = st.one_of(
    st.text(max_size=6),
    st.sampled_from(["a", "b", "x@y.z", "2024-02-29", "2023-02-29", "@", "a@b"]),
    st.integers(-5, 5),
    st.floats(-5, 5, allow_nan=False),
    st.booleans(),
    st.lists(st.sampled_from("abcdz"), max_size=4),
)


def unique_choices(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as the oracle reads ours: a multiple choice is a set of choices, so the same
    one twice is refused (issue 20; jsonschema needs `uniqueItems` to say so)."""
    if schema.get("type") == "array":
        return {**schema, "uniqueItems": True}
    if schema.get("type") == "object":
        properties = {name: unique_choices(f) for name, f in schema["properties"].items()}
        return {**schema, "properties": properties}
    return schema


@settings(max_examples=400, deadline=None)
@given(field=field_schemas, value=answers)
def test_field_verdicts_agree_with_jsonschema(field: dict[str, Any], value: Any) -> None:
    oracle = Draft202012Validator(unique_choices(field), format_checker=ORACLE_FORMATS)
    assert (field_errors(field, value) == []) == oracle.is_valid(value)


@settings(max_examples=200, deadline=None)
@given(
    fields=st.dictionaries(st.sampled_from(["p", "q", "r"]), field_schemas, min_size=1),
    content=st.dictionaries(st.sampled_from(["p", "q", "r", "s"]), answers),
    data=st.data(),
)
def test_form_verdicts_agree_with_jsonschema(
    fields: dict, content: dict, data: st.DataObject
) -> None:
    required = data.draw(st.lists(st.sampled_from(sorted(fields)), unique=True))
    schema = {"type": "object", "properties": fields, "required": required}
    oracle = Draft202012Validator(unique_choices(schema), format_checker=ORACLE_FORMATS)
    assert (form_errors(schema, content) == []) == oracle.is_valid(content)


@pytest.mark.parametrize(
    "fmt, good, bad",
    [
        ("uri", "https://example.com/a?b", "not a uri"),
        ("date-time", "2026-07-28T10:00:00Z", "2026-07-28 10:00"),
        ("date-time", "2026-07-28T10:00:00.5+02:00", "2026-13-28T10:00:00Z"),
        ("date", "2026-07-28", "2026-W30-2"),
        ("email", "someone@example.com", "someone"),
    ],
)
def test_formats(fmt: str, good: str, bad: str) -> None:
    field = {"type": "string", "format": fmt}
    assert field_errors(field, good) == []
    assert field_errors(field, bad) == [f"must be a valid {fmt}"]


def test_errors_name_each_field() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "maximum": 3},
            "c": {"type": "string", "enum": ["x"]},
        },
        "required": ["n", "c"],
    }
    assert [str(e) for e in form_errors(schema, {"n": 9})] == [
        "c: an answer is required",
        "n: must be at most 3",
    ]


@pytest.mark.parametrize(
    "value, expected",
    [
        (
            {"action": "accept", "content": {"a": 1, "b": ["x"], "c": True}},
            ElicitResult("accept", {"a": 1, "b": ["x"], "c": True}),
        ),
        ({"action": "decline"}, ElicitResult("decline")),
        ({"action": "cancel", "content": None}, ElicitResult("cancel")),
        # Kept for the form check to name (asked again), never read as a decline.
        (
            {"action": "accept", "content": {"a": {"nested": 1}}},
            ElicitResult("accept", {"a": {"nested": 1}}),
        ),
        # An optional field left empty, as clients in use send it: left out.
        ({"action": "accept", "content": {"a": 1, "b": None}}, ElicitResult("accept", {"a": 1})),
        ({"action": "accept", "content": [1]}, ElicitResult("accept", {})),
        ({"action": "decline", "content": {"a": {"nested": 1}}}, ElicitResult("decline")),
        ({"action": "maybe"}, None),
        (12345, None),
        (None, None),
    ],
)
def test_reading_elicit_results(value: Any, expected: ElicitResult | None) -> None:
    assert read_elicit_result(value) == expected


@pytest.mark.parametrize(
    "schema, message",
    [
        ({"type": "array"}, '"type": "object"'),
        ({"type": "object"}, '"properties" object'),
        ({"type": "object", "properties": {"a": {"type": "object"}}}, "unsupported type 'object'"),
        (
            {"type": "object", "properties": {"a": {"type": "string", "pattern": "x"}}},
            "cannot use: pattern",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string", "format": "ipv4"}}},
            "unsupported format",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]},
            "do not exist: b",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "integer", "default": "x"}}},
            "default does not fit",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}}},
            "multi-select needs",
        ),
    ],
)
def test_schemas_outside_the_form_subset_are_refused(schema: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_form_schema(schema)


def test_staffs_reason_is_read_from_the_servers_own_settlements_only() -> None:
    settled = {"action": "cancel", "reason": "the release is off"}
    assert read_settled(settled) == ElicitResult("cancel")
    assert read_settled(settled).reason == "the release is off"  # type: ignore[union-attr]
    # A client's reply carries no reason the server would tell its model.
    assert read_elicit_result(settled).reason == ""  # type: ignore[union-attr]
    # An accept's answer is the answer; a reason is never read with it.
    accepted = read_settled({"action": "accept", "content": {}, "reason": "x"})
    assert accepted is not None and accepted.reason == ""
    # The reason travels with the settlement between workers, never in the wire form.
    staff = ElicitResult("cancel", reason="use staging")
    assert staff.to_dict() == {"action": "cancel"}
    assert read_settled(staff.settlement()) == staff and read_elicit_result(staff) is staff


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_a_number_that_is_not_finite_fits_no_field(value: float) -> None:
    # JSON has no such number: handed to a model it read as {"n":Infinity}.
    assert field_errors({"type": "number"}, value) == [f"must be a finite number, not {value}"]
    assert field_errors({"type": "integer"}, value) == [f"must be a finite number, not {value}"]
