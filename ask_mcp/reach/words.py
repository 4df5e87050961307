"""An ask's form in words, for mail: each field's label, what kind of answer it takes, whether it is required.

Reads the requestedSchema as the wire carries it (the subset ask_mcp/protocol/forms.py
accepts); draws nothing and validates nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

KINDS: Final[Mapping[str, str]] = {
    "string": "text",
    "number": "a number",
    "integer": "a whole number",
    "boolean": "yes or no",
}
"""How each JSON type reads in a mail."""
FORMATS: Final[Mapping[str, str]] = {
    "email": "an email address",
    "uri": "a link",
    "date": "a date",
    "date-time": "a date and time",
}
"""How each string format reads in a mail."""


@dataclass(frozen=True, slots=True)
class FieldInWords:
    label: str
    takes: str
    required: bool
    description: str


def fields_in_words(schema: Mapping[str, Any]) -> list[FieldInWords]:
    """Every field of `schema`, in its order."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    described = []
    for name, spec in properties.items():
        if not isinstance(spec, Mapping):
            continue
        label = str(spec.get("title") or spec.get("description") or name)
        description = str(spec.get("description") or "") if spec.get("title") else ""
        described.append(FieldInWords(label, takes(spec), name in required, description))
    return described


def takes(spec: Mapping[str, Any]) -> str:
    """What one field takes, in words: "one of: api, ui, docs", "a number", "yes or no"…"""
    options = _options(spec)
    if options:
        return f"one of: {', '.join(options)}"
    if spec.get("type") == "array":
        items = spec.get("items") or {}
        picks = _options(items) if isinstance(items, Mapping) else []
        return f"any of: {', '.join(picks)}" if picks else "a list"
    if spec.get("type") == "string" and spec.get("format") in FORMATS:
        return FORMATS[spec["format"]]
    return KINDS.get(str(spec.get("type")), "an answer")


def _options(spec: Mapping[str, Any]) -> list[str]:
    for key in ("oneOf", "anyOf"):
        if isinstance(spec.get(key), list):
            return [
                str(o.get("title") or o.get("const")) for o in spec[key] if isinstance(o, Mapping)
            ]
    if isinstance(spec.get("enum"), list):
        names = spec.get("enumNames")
        if isinstance(names, list) and len(names) == len(spec["enum"]):
            return [str(n) for n in names]
        return [str(v) for v in spec["enum"]]
    return []
