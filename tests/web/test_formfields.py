"""A form schema as HTML widgets, and a submitted browser form read back as the JSON a client form sends."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from ask_mcp.web.formfields import build_fields, read_answer

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Your name", "maxLength": 20},
        "story": {"type": "string", "title": "Story", "description": "x" * 90},
        "mail": {"type": "string", "format": "email"},
        "site": {"type": "string", "format": "uri"},
        "day": {"type": "string", "format": "date"},
        "at": {"type": "string", "format": "date-time", "default": "2026-07-28T09:30:00Z"},
        "count": {"type": "integer", "minimum": 1, "maximum": 5},
        "share": {"type": "number"},
        "ok": {"type": "boolean", "default": True},
        "size": {"type": "string", "enum": ["s", "m"], "enumNames": ["Small", "Medium"]},
        "city": {
            "type": "string",
            "oneOf": [
                {"const": c.lower(), "title": c}
                for c in ("Oslo", "Rome", "Lima", "Pune", "Nice", "Kyiv")
            ],
        },
        "tags": {
            "type": "array",
            "items": {"anyOf": [{"const": "a", "title": "Alpha"}, {"const": "b", "title": "Beta"}]},
            "minItems": 1,
            "maxItems": 1,
        },
    },
    "required": ["name", "count", "tags"],
}


class Form(dict[str, list[str]]):
    """What Django's QueryDict offers a reader: every value of a name."""

    def getlist(self, key: str) -> list[str]:
        return self.get(key, [])


def submitted(**fields: str | list[str]) -> Form:
    return Form(
        {
            f"f:{name}": value if isinstance(value, list) else [value]
            for name, value in fields.items()
        }
    )


def test_each_field_kind_gets_its_widget_label_and_limits() -> None:
    fields = {field.name: field for field in build_fields(SCHEMA, id_prefix="f-x")}
    widgets = {name: field.widget for name, field in fields.items()}
    assert widgets == {
        "name": "text",
        "story": "textarea",
        "mail": "email",
        "site": "url",
        "day": "date",
        "at": "datetime-local",
        "count": "number",
        "share": "number",
        "ok": "checkbox",
        "size": "radio",
        "city": "select",
        "tags": "checkboxes",
    }
    assert fields["name"].label == "Your name" and fields["name"].max_length == 20
    assert fields["story"].label == "Story" and fields["story"].description == "x" * 90
    assert (fields["count"].minimum, fields["count"].maximum, fields["count"].step) == (1, 5, "1")
    assert fields["share"].step == "any"
    assert [(o.value, o.label) for o in fields["size"].options] == [("s", "Small"), ("m", "Medium")]
    assert fields["city"].options[0].label == "Oslo"
    assert fields["tags"].hint == "Choose exactly 1."
    assert fields["at"].value == "2026-07-28T09:30" and fields["ok"].checked
    assert [f.name for f in fields.values() if f.required] == ["name", "count", "tags"]


def test_a_filled_form_reads_back_as_typed_json_that_fits_the_schema() -> None:
    form = submitted(
        name="Ada",
        story="line one\r\nline two",
        mail="ada@example.com",
        site="https://example.com",
        day="2026-07-28",
        at="2026-07-28T09:30",
        count="3",
        share="0.5",
        ok="on",
        size="m",
        city="lima",
        tags=["b"],
    )
    form["tz:at"] = ["-300"]
    content, errors = read_answer(SCHEMA, form)
    assert errors == []
    assert content == {
        "name": "Ada",
        "story": "line one\nline two",
        "mail": "ada@example.com",
        "site": "https://example.com",
        "day": "2026-07-28",
        "at": "2026-07-28T09:30:00-05:00",
        "count": 3,
        "share": 0.5,
        "ok": True,
        "size": "m",
        "city": "lima",
        "tags": ["b"],
    }
    jsonschema.validate(content, SCHEMA, format_checker=jsonschema.FormatChecker())


def test_empty_optional_inputs_are_left_out_and_an_unticked_box_is_false() -> None:
    content, errors = read_answer(SCHEMA, submitted(name="Ada", count="1", tags=["a"], story=""))
    assert errors == []
    assert content == {"name": "Ada", "count": 1, "ok": False, "tags": ["a"]}


@pytest.mark.parametrize(
    "fields, expected",
    [
        (
            {"count": "2.5", "tags": ["a"]},
            [("name", "an answer is required"), ("count", "must be a whole number")],
        ),
        ({"name": "A", "count": "many", "tags": ["a"]}, [("count", "must be a whole number")]),
        (
            {"name": "A", "count": "9", "tags": []},
            [("tags", "needs at least 1 choice(s)"), ("count", "must be at most 5")],
        ),
        ({"name": "A", "count": "1", "tags": ["a", "b"]}, [("tags", "allows at most 1 choice(s)")]),
        (
            {"name": "A", "count": "1", "tags": ["z"]},
            [("tags", "has choices that are not offered: z")],
        ),
        (
            {"name": "A", "count": "1", "tags": ["a"], "share": "nan"},
            [("share", "must be a number")],
        ),
        (
            {"name": "A", "count": "1", "tags": ["a"], "at": "tomorrow"},
            [("at", "must be a valid date-time")],
        ),
    ],
)
def test_what_does_not_fit_is_named_field_by_field(
    fields: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    _, errors = read_answer(SCHEMA, submitted(**fields))
    assert sorted((e.field, e.message) for e in errors) == sorted(expected)


def test_a_form_shown_again_keeps_what_was_submitted() -> None:
    form = submitted(name="Ada", count="12", size="s", tags=["a", "b"])
    fields = {f.name: f for f in build_fields(SCHEMA, id_prefix="f-x", submitted=form)}
    assert fields["count"].value == "12"
    assert [o.chosen for o in fields["size"].options] == [True, False]
    assert [o.chosen for o in fields["tags"].options] == [True, True]
    assert fields["ok"].checked is False


PEOPLE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "shipDate": {"type": "string"},
        "delete": {"type": "boolean", "title": "May I delete it?"},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
    },
    "required": ["answer", "delete", "tags"],
}


def test_keys_without_a_title_read_as_words_and_a_required_boolean_is_yes_or_no() -> None:
    fields = {f.name: f for f in build_fields(PEOPLE_SCHEMA, id_prefix="f")}
    assert fields["answer"].label == "Your answer"
    assert fields["shipDate"].label == "Ship date"
    assert fields["delete"].widget == "yesno"
    assert [o.label for o in fields["delete"].options] == ["Yes", "No"]
    assert not any(o.chosen for o in fields["delete"].options)  # no answer is assumed


@pytest.mark.parametrize("choice, expected", [("yes", True), ("no", False)])
def test_a_required_yes_or_no_reads_as_the_choice_made(choice: str, expected: bool) -> None:
    content, errors = read_answer(PEOPLE_SCHEMA, submitted(answer="x", delete=choice, tags=["a"]))
    assert errors == [] and content["delete"] is expected


def test_blank_text_no_choice_and_no_yes_or_no_are_refused_not_sent_as_answers() -> None:
    _, errors = read_answer(PEOPLE_SCHEMA, submitted(answer="  \n ", tags=[]))
    assert sorted((e.field, e.message) for e in errors) == [
        ("answer", "an answer is required: type more than spaces"),
        ("delete", "an answer is required"),
        ("tags", "choose at least one"),
    ]
