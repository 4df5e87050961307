"""A form schema as HTML form fields, and a submitted form read back as a reply; pure: no Django, no rows.

Rendering follows the 2026-07-28 field kinds (text, formats, numbers, booleans, single and
multi-select enums, titled options, legacy enumNames). Reading turns the browser's strings
into the JSON a client form would have sent, then validates it with
:mod:`ask_mcp.protocol.forms`, the one validator for answers. Pure: no Django.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from ask_mcp.protocol.forms import FieldError, form_errors

PREFIX: Final = "f:"
"""Input names are the field names behind this prefix, so no field can clash with `action`."""
ZONE_PREFIX: Final = "tz:"
"""inbox.js sends each date-time field's UTC offset (minutes east, at that date) under this prefix."""
RADIO_LIMIT: Final = 5
"""Up to this many options show as radio buttons; more become a select."""
LONG_PROMPT: Final = 80
"""A prompt at least this long (or a maxLength of LONG_TEXT or more) gets a textarea."""
LONG_TEXT: Final = 200
"""A maxLength at least this long gets a textarea (see LONG_PROMPT)."""
INPUT_TYPES: Final[Mapping[str, str]] = {
    "email": "email",
    "uri": "url",
    "date": "date",
    "date-time": "datetime-local",
}
"""The HTML input type of each string format a browser has a widget for (others are text)."""
_INTEGER: Final = re.compile(r"[+-]?\d+")
"""A whole number as typed: read exactly, never through a float."""
MAX_DIGITS: Final = 100
"""The most digits a number typed into a form may have. Python refuses to convert integers of
more than 4,300 digits (a 5,000-digit answer was a 500), and no client reads more than about 17
significant digits of a JSON number anyway."""
_LOCAL_DATE_TIME: Final = re.compile(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(:\d{2}(\.\d+)?)?")
"""A datetime-local input's value: the date to the minute, then optional seconds (and a fraction)."""
YES: Final = "yes"
"""A required boolean's Yes radio (its No is NO): an unticked checkbox cannot mean "no"."""
NO: Final = "no"
"""A required boolean's No radio (see YES)."""
ANSWER_LABEL: Final = "Your answer"
"""The label of `answer`, the one field user_ask asks for when the model names none."""
BLANK_TEXT: Final = "an answer is required: type more than spaces"
"""Why a required text of only whitespace is refused (it reached the model as an answer before)."""
NOTHING_CHOSEN: Final = "choose at least one"
"""Why a required multiple choice with nothing ticked is refused."""


class Submitted(Protocol):
    """What a form submission offers (Django's QueryDict)."""

    def getlist(self, key: str) -> list[str]: ...

    def __contains__(self, key: object) -> bool: ...


@dataclass(slots=True)
class Option:
    value: str
    label: str
    chosen: bool = False


@dataclass(slots=True)
class FormField:
    """One field as the template draws it."""

    name: str
    input_name: str
    html_id: str
    label: str
    description: str
    widget: str
    """text, textarea, email, url, date, datetime-local, number, checkbox, yesno, radio, select,
    checkboxes (yesno: a required boolean, an explicit Yes/No pair of radios)"""
    required: bool
    value: str = ""
    checked: bool = False
    options: list[Option] = field(default_factory=list)
    min_length: int | None = None
    max_length: int | None = None
    minimum: float | None = None
    maximum: float | None = None
    step: str | None = None
    min_items: int | None = None
    max_items: int | None = None
    errors: list[str] = field(default_factory=list)

    @property
    def described_by(self) -> str:
        """The ids of this field's help and error texts, for `aria-describedby`."""
        ids = []
        if self.description:
            ids.append(f"{self.html_id}-help")
        if self.hint:
            ids.append(f"{self.html_id}-hint")
        if self.errors:
            ids.append(f"{self.html_id}-error")
        return " ".join(ids)

    @property
    def hint(self) -> str:
        """Limits the widget cannot show by itself."""
        if self.widget != "checkboxes":
            return ""
        low, high = self.min_items, self.max_items
        if low and high:
            return f"Choose {low} to {high}." if low != high else f"Choose exactly {low}."
        if low:
            return f"Choose at least {low}."
        if high:
            return f"Choose at most {high}."
        return ""


def options_of(field_schema: Mapping[str, Any]) -> list[Option]:
    """A select field's options with their labels (oneOf/anyOf titles, legacy enumNames)."""
    source = field_schema.get("items") if field_schema.get("type") == "array" else field_schema
    if not isinstance(source, Mapping):
        return []
    if "enum" in source:
        names = source.get("enumNames")
        values = [str(value) for value in source["enum"]]
        if isinstance(names, list) and len(names) == len(values):
            return [Option(value, str(name)) for value, name in zip(values, names, strict=True)]
        return [Option(value, value) for value in values]
    titled = source.get("oneOf") or source.get("anyOf") or []
    return [Option(item["const"], str(item.get("title") or item["const"])) for item in titled]


def build_fields(
    schema: Mapping[str, Any],
    *,
    id_prefix: str,
    submitted: Submitted | None = None,
    errors: Sequence[FieldError] = (),
) -> list[FormField]:
    """The form's fields, filled with the defaults, or with what was submitted when re-shown."""
    required = set(schema.get("required", ()))
    problems: dict[str, list[str]] = {}
    for error in errors:
        problems.setdefault(error.field, []).append(error.message)
    fields = []
    for index, (name, spec) in enumerate(schema.get("properties", {}).items()):
        form_field = _field(name, spec, f"{id_prefix}-{index}", name in required)
        if submitted is not None:
            _fill_submitted(form_field, submitted)
        else:
            _fill_default(form_field, spec)
        form_field.errors = problems.get(name, [])
        fields.append(form_field)
    return fields


def human_label(name: str) -> str:
    """A label for a field the model gave no title or description: its key in words."""
    if name == "answer":
        return ANSWER_LABEL
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ").replace("-", " ")
    words = " ".join(words.split())
    return words[:1].upper() + words[1:].lower() if words else name


def _field(name: str, spec: Mapping[str, Any], html_id: str, required: bool) -> FormField:
    title = spec.get("title")
    description = spec.get("description") or ""
    label = title or description or human_label(name)
    form_field = FormField(
        name=name,
        input_name=PREFIX + name,
        html_id=html_id,
        label=str(label),
        description=str(description) if title else "",
        widget="text",
        required=required,
    )
    kind = spec.get("type")
    if kind == "boolean":
        form_field.widget = "yesno" if required else "checkbox"
        if required:
            form_field.options = [Option(YES, "Yes"), Option(NO, "No")]
    elif kind in ("number", "integer"):
        form_field.widget = "number"
        form_field.minimum = spec.get("minimum")
        form_field.maximum = spec.get("maximum")
        form_field.step = "1" if kind == "integer" else "any"
    elif kind == "array":
        form_field.widget = "checkboxes"
        form_field.options = options_of(spec)
        form_field.min_items = spec.get("minItems")
        form_field.max_items = spec.get("maxItems")
    elif "enum" in spec or "oneOf" in spec:
        form_field.options = options_of(spec)
        form_field.widget = "radio" if len(form_field.options) <= RADIO_LIMIT else "select"
    else:
        form_field.min_length = spec.get("minLength")
        form_field.max_length = spec.get("maxLength")
        widget = INPUT_TYPES.get(spec.get("format", ""), "text")
        long_text = (form_field.max_length or 0) >= LONG_TEXT
        if widget == "text" and (len(label) + len(description) >= LONG_PROMPT or long_text):
            widget = "textarea"
        form_field.widget = widget
    return form_field


def _fill_default(form_field: FormField, spec: Mapping[str, Any]) -> None:
    if "default" not in spec:
        return
    default = spec["default"]
    if form_field.widget == "yesno":
        for option in form_field.options:
            option.chosen = default is (option.value == YES)
    elif form_field.widget == "checkbox":
        form_field.checked = default is True
    elif form_field.widget == "checkboxes":
        chosen = set(default) if isinstance(default, list) else set()
        for option in form_field.options:
            option.chosen = option.value in chosen
    elif form_field.options:
        for option in form_field.options:
            option.chosen = option.value == default
    elif form_field.widget == "datetime-local":
        match = _LOCAL_DATE_TIME.match(str(default))
        form_field.value = match.group(1) if match else ""
    elif form_field.widget == "number" and isinstance(default, int | float):
        form_field.value = repr(default) if isinstance(default, float) else str(default)
    else:
        form_field.value = str(default)


def _fill_submitted(form_field: FormField, submitted: Submitted) -> None:
    values = submitted.getlist(form_field.input_name)
    if form_field.widget == "checkbox":
        form_field.checked = bool(values)
    elif form_field.options:
        for option in form_field.options:
            option.chosen = option.value in values
    else:
        form_field.value = values[-1] if values else ""


def read_answer(
    schema: Mapping[str, Any], submitted: Submitted
) -> tuple[dict[str, Any], list[FieldError]]:
    """The answer a submitted form stands for, and every reason it does not fit the schema.

    Empty optional inputs are left out, as a client form leaves them out. Date-times arrive in
    the browser's local time with its UTC offset at that date (UTC when none was sent).
    """
    required = set(schema.get("required", ()))
    content: dict[str, Any] = {}
    unreadable: list[FieldError] = []
    unticked: list[str] = []  # required multiple choices with nothing ticked
    for name, spec in schema.get("properties", {}).items():
        values = submitted.getlist(PREFIX + name)
        kind = spec.get("type")
        if kind == "boolean":
            if name not in required:
                content[name] = bool(values)
            elif values and values[-1] in (YES, NO):
                content[name] = values[-1] == YES
            continue  # a required boolean left unchosen is named by the validator
        if kind == "array":
            chosen = [value for value in values if value]
            if chosen or name in required:
                content[name] = chosen
            if not chosen and name in required:
                unticked.append(name)
            continue
        # Browsers submit a textarea's line breaks as CRLF; the person typed plain newlines.
        text = values[-1].replace("\r\n", "\n") if values else ""
        if text == "":
            continue
        if text.strip() == "" and name in required and kind not in ("number", "integer"):
            unreadable.append(FieldError(name, BLANK_TEXT))
            continue
        if kind in ("number", "integer"):
            number = _read_number(text, integer=kind == "integer")
            if number is None:
                message = "must be a whole number" if kind == "integer" else "must be a number"
                if sum(char.isdigit() for char in text) > MAX_DIGITS:
                    message = f"must have at most {MAX_DIGITS} digits"
                unreadable.append(FieldError(name, message))
            else:
                content[name] = number
        elif spec.get("format") == "date-time":
            offset = submitted.getlist(ZONE_PREFIX + name)
            content[name] = _with_offset(text, read_utc_offset(offset[-1] if offset else None))
        else:
            content[name] = text
    failed = {error.field for error in unreadable}
    errors = unreadable + [
        error for error in form_errors(schema, content) if error.field not in failed
    ]
    named = {error.field for error in errors}
    errors += [FieldError(name, NOTHING_CHOSEN) for name in unticked if name not in named]
    return content, errors


def read_reply(
    schema: Mapping[str, Any], action: str, submitted: Submitted
) -> tuple[dict[str, Any], list[FieldError]]:
    """The reply (an ElicitResult as JSON) a form submitted with `action` stands for, and every
    reason its answer does not fit the schema; only an accept carries (and checks) an answer."""
    if action != "accept":
        return {"action": action}, []
    content, errors = read_answer(schema, submitted)
    return {"action": "accept", "content": content}, errors


def _read_number(text: str, *, integer: bool) -> int | float | None:
    text = text.strip()
    if sum(char.isdigit() for char in text) > MAX_DIGITS:
        return None
    if _INTEGER.fullmatch(text):
        return int(text)
    try:
        value = float(text)
    except ValueError:
        return None
    if not math.isfinite(value):
        return None
    if integer:
        return int(value) if value.is_integer() else None
    return value


def _with_offset(text: str, minutes: int) -> str:
    """A browser's local `YYYY-MM-DDTHH:MM[:SS]` as an RFC 3339 date-time at that UTC offset."""
    match = _LOCAL_DATE_TIME.fullmatch(text.strip())
    if match is None:
        return text  # left for the validator to name
    clock = match.group(1) + (match.group(2) or ":00")
    if minutes == 0:
        return clock + "Z"
    sign = "+" if minutes > 0 else "-"
    hours, rest = divmod(abs(minutes), 60)
    return f"{clock}{sign}{hours:02d}:{rest:02d}"


def read_utc_offset(value: str | None) -> int:
    """A UTC offset in minutes as inbox.js sends it; 0 when missing or absurd."""
    try:
        minutes = int(value or 0)
    except ValueError:
        return 0
    return minutes if -14 * 60 <= minutes <= 14 * 60 else 0


def show_answer(schema: Mapping[str, Any], answer: Mapping[str, Any]) -> list[tuple[str, str]]:
    """An answer as label/value pairs for people to read."""
    rows = []
    for name, spec in schema.get("properties", {}).items():
        if name not in answer:
            continue
        value = answer[name]
        labels = {option.value: option.label for option in options_of(spec)}
        if isinstance(value, bool):
            shown = "yes" if value else "no"
        elif isinstance(value, list):
            shown = ", ".join(labels.get(str(item), str(item)) for item in value) or "none"
        else:
            shown = labels.get(str(value), str(value))
        rows.append((str(spec.get("title") or spec.get("description") or human_label(name)), shown))
    return rows
