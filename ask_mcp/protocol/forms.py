"""Elicitation form schemas: checking a requestedSchema, reading an ElicitResult, validating answers.

The 2026-07-28 form schema is a flat object of primitive fields (string, number, integer,
boolean, single- and multi-select enums). This module is the one validator for answers,
whichever way they arrive (client form, browser form, legacy response). It implements the
JSON Schema 2020-12 meaning of the keywords that schema allows, and is checked against the
`jsonschema` package in the tests; it exists because a general validator costs ~90 µs per
answer on the MRTR hot path and this one a few µs. Pure: no Django, no IO.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import urlsplit

Action = Literal["accept", "decline", "cancel"]
ACTIONS: Final = ("accept", "decline", "cancel")
FORMATS: Final = ("email", "uri", "date", "date-time")

_FIELD_KEYS: Final[Mapping[str, frozenset[str]]] = {
    "string": frozenset(
        {
            "type",
            "title",
            "description",
            "minLength",
            "maxLength",
            "format",
            "default",
            "enum",
            "enumNames",
            "oneOf",
        }
    ),
    "number": frozenset({"type", "title", "description", "minimum", "maximum", "default"}),
    "integer": frozenset({"type", "title", "description", "minimum", "maximum", "default"}),
    "boolean": frozenset({"type", "title", "description", "default"}),
    "array": frozenset(
        {"type", "title", "description", "minItems", "maxItems", "items", "default"}
    ),
}
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


@dataclass(frozen=True, slots=True)
class ElicitResult:
    """A person's reply to one form: what they chose and, on accept, what they entered."""

    action: Action
    content: dict[str, Any] | None = None
    unreadable: str | None = dataclasses.field(default=None, compare=False)
    """On an accept whose content could not be read at all, why (the question is asked again
    with it); never sent on the wire."""
    reason: str = dataclasses.field(default="", compare=False)
    """Why staff cancelled the question (the admin's confirmation), for the model to read;
    carried by the server's own settlements (:func:`read_settled`), never sent on the wire."""

    def to_dict(self) -> dict[str, Any]:
        if self.content is None:
            return {"action": self.action}
        return {"action": self.action, "content": self.content}

    def settlement(self) -> dict[str, Any]:
        """The reply as the server passes it between its own parts (relay, record): the wire
        form plus staff's reason, if any (read back by :func:`read_settled`)."""
        reply = self.to_dict()
        if self.reason:
            reply[REASON_KEY] = self.reason
        return reply


REASON_KEY: Final = "reason"
"""Where a settlement (an admin's cancel, passed between workers or kept on the record) carries
staff's reason; read only from the server's own settlements, never from a client's reply."""


def read_settled(value: Any) -> ElicitResult | None:
    """A reply the server settled itself (a browser answer, an admin's cancel, the record's
    decision): as :func:`read_elicit_result`, keeping staff's reason."""
    if isinstance(value, ElicitResult):
        return value
    reply = read_elicit_result(value)
    if reply is None or reply.action == "accept":
        return reply
    reason = value.get(REASON_KEY)
    if not isinstance(reason, str) or not reason:
        return reply
    return dataclasses.replace(reply, reason=reason)


@dataclass(frozen=True, slots=True)
class FieldError:
    """One reason an answer does not fit its form; `field` is "" for the form as a whole."""

    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


def read_elicit_result(value: Any) -> ElicitResult | None:
    """Read an ElicitResult as a client sent it; None when it is not one (no known action).

    An accept is never read as a decline. Clients in use send `null` for an optional field the
    person left empty, which the spec does not strictly allow: such a field is left out, as one
    the client omitted is. Other values that do not fit are kept for the form check to name
    (the question is asked again with the reason), and content that is not an object at all
    comes back as an accept with nothing read and its reason in `unreadable`.
    """
    if isinstance(value, ElicitResult):
        return value  # already read (a server-side settlement of a parked call)
    if not isinstance(value, Mapping):
        return None
    action = value.get("action")
    if action not in ACTIONS:
        return None
    content = value.get("content")
    if content is None:
        return ElicitResult(action)
    if not isinstance(content, Mapping):
        if action != "accept":
            return ElicitResult(action)
        return ElicitResult(
            "accept", {}, unreadable=f"the answer was {_json_kind(content)}, not an object"
        )
    if action != "accept" and not all(_is_answer_value(item) for item in content.values()):
        return ElicitResult(action)  # a decline or cancel carries no answer to read
    return ElicitResult(action, {key: item for key, item in content.items() if item is not None})


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "text"
    if isinstance(value, int | float):
        return "a number"
    return "not JSON"


def _is_answer_value(value: Any) -> bool:
    if isinstance(value, str | bool | int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def check_form_schema(schema: Any) -> None:
    """Raise ValueError naming the first thing that makes `schema` not a 2026-07-28 form schema."""
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        raise ValueError('a form schema must be an object with "type": "object"')
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        raise ValueError('a form schema needs a "properties" object')
    for name, field in properties.items():
        _check_field(name, field)
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(item, str) for item in required):
        raise ValueError('"required" must be a list of field names')
    unknown = [item for item in required if item not in properties]
    if unknown:
        raise ValueError(f'"required" names fields that do not exist: {", ".join(unknown)}')


def _check_field(name: str, field: Any) -> None:
    where = f"field {name!r}"
    if not isinstance(field, Mapping):
        raise ValueError(f"{where} must be an object")
    kind = field.get("type")
    if not isinstance(kind, str) or kind not in _FIELD_KEYS:
        raise ValueError(
            f"{where} has unsupported type {kind!r}; use one of {', '.join(_FIELD_KEYS)}"
        )
    extra = set(field) - _FIELD_KEYS[kind]
    if extra:
        raise ValueError(
            f"{where} has keywords a form field cannot use: {', '.join(sorted(extra))}"
        )
    if kind == "string":
        if "format" in field and field["format"] not in FORMATS:
            raise ValueError(f"{where} has unsupported format {field['format']!r}")
        if "enum" in field and not _strings(field["enum"], non_empty=True):
            raise ValueError(f"{where}: enum must be a non-empty list of strings")
        if "oneOf" in field and not _titled_options(field["oneOf"]):
            raise ValueError(f"{where}: oneOf must be a non-empty list of {{const, title}} objects")
    if kind == "array":
        items = field.get("items")
        ok = isinstance(items, Mapping) and (
            (items.get("type") == "string" and _strings(items.get("enum"), non_empty=True))
            or _titled_options(items.get("anyOf"))
        )
        if not ok:
            raise ValueError(
                f"{where}: a multi-select needs items with a string enum or an anyOf of "
                "{const, title} objects"
            )
    if "default" in field and field_errors(field, field["default"]):
        raise ValueError(f"{where}: its default does not fit the field")


def _strings(value: Any, *, non_empty: bool = False) -> bool:
    return (
        isinstance(value, list)
        and (bool(value) or not non_empty)
        and all(isinstance(item, str) for item in value)
    )


def _titled_options(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(item, Mapping) and isinstance(item.get("const"), str) for item in value)
    )


def option_values(field: Mapping[str, Any]) -> list[str] | None:
    """The allowed values of a single- or multi-select field, or None for free input."""
    source = field.get("items") if field.get("type") == "array" else field
    if not isinstance(source, Mapping):
        return None
    if "enum" in source:
        return list(source["enum"])
    titled = source.get("oneOf") or source.get("anyOf")
    if titled:
        return [item["const"] for item in titled]
    return None


def form_errors(schema: Mapping[str, Any], content: Mapping[str, Any]) -> list[FieldError]:
    """Every way `content` fails `schema`; empty when the answer fits."""
    properties: Mapping[str, Any] = schema.get("properties", {})
    errors = [
        FieldError(name, "an answer is required")
        for name in schema.get("required", ())
        if name not in content
    ]
    for name, value in content.items():
        field = properties.get(name)
        if field is not None:
            errors.extend(FieldError(name, message) for message in field_errors(field, value))
    return errors


def field_errors(field: Mapping[str, Any], value: Any) -> list[str]:
    """Why `value` does not fit one form field; empty when it does."""
    kind = field.get("type")
    if kind == "string":
        return _string_errors(field, value)
    if kind in ("number", "integer"):
        return _number_errors(field, value, integer=kind == "integer")
    if kind == "boolean":
        return [] if isinstance(value, bool) else ["must be true or false"]
    if kind == "array":
        return _array_errors(field, value)
    return [f"has an unsupported field type {kind!r}"]


def _string_errors(field: Mapping[str, Any], value: Any) -> list[str]:
    if not isinstance(value, str):
        return ["must be text"]
    options = option_values(field)
    if options is not None and value not in options:
        return [f"must be one of: {', '.join(options)}"]
    errors = []
    length = len(value)
    if "minLength" in field and length < field["minLength"]:
        errors.append(f"must be at least {field['minLength']} characters long")
    if "maxLength" in field and length > field["maxLength"]:
        errors.append(f"must be at most {field['maxLength']} characters long")
    fmt = field.get("format")
    if fmt is not None and not _format_ok(fmt, value):
        errors.append(f"must be a valid {fmt}")
    return errors


def _format_ok(fmt: str, value: str) -> bool:
    if fmt == "email":
        return _EMAIL.fullmatch(value) is not None
    if fmt == "uri":
        parts = urlsplit(value)
        return bool(parts.scheme) and parts.scheme[0].isalpha() and " " not in value
    if fmt == "date":
        return _DATE.fullmatch(value) is not None and _parses(dt.date.fromisoformat, value)
    if fmt == "date-time":
        return _DATE_TIME.fullmatch(value) is not None and _parses(
            dt.datetime.fromisoformat, value.upper().replace("Z", "+00:00")
        )
    return True


def _parses(parse: Any, value: str) -> bool:
    try:
        parse(value)
    except ValueError:
        return False
    return True


def _number_errors(field: Mapping[str, Any], value: Any, *, integer: bool) -> list[str]:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return ["must be a whole number" if integer else "must be a number"]
    if isinstance(value, float) and not math.isfinite(value):
        return [f"must be a finite number, not {value}"]
    if integer and isinstance(value, float) and not value.is_integer():
        return ["must be a whole number"]
    errors = []
    if "minimum" in field and value < field["minimum"]:
        errors.append(f"must be at least {field['minimum']}")
    if "maximum" in field and value > field["maximum"]:
        errors.append(f"must be at most {field['maximum']}")
    return errors


def _array_errors(field: Mapping[str, Any], value: Any) -> list[str]:
    if not isinstance(value, list):
        return ["must be a list of choices"]
    options = option_values(field) or []
    errors = []
    bad = [item for item in value if item not in options]
    if bad:
        errors.append(f"has choices that are not offered: {', '.join(map(str, bad))}")
    repeated = sorted({str(item) for item in value if value.count(item) > 1})
    if repeated:
        errors.append(f"has a choice more than once: {', '.join(repeated)}")
    if "minItems" in field and len(value) < field["minItems"]:
        errors.append(f"needs at least {field['minItems']} choice(s)")
    if "maxItems" in field and len(value) > field["maxItems"]:
        errors.append(f"allows at most {field['maxItems']} choice(s)")
    return errors


def schema_fields(schema: Mapping[str, Any]) -> Sequence[str]:
    return list(schema.get("properties", {}))
