"""How an environment variable is read: its name, kind, default and meaning, how its text is read as its type, and how it is shown masked.

A reusable reader that holds no variable of its own. Pure: it reads the mapping it is handed
(`os.environ`), never Django's settings. It stays in the library, below everything, because
the library's own rows need it: every `ASK_MCP` key can be set from its `ASKSERVER_` variable,
and :mod:`ask_mcp.conf` derives those rows from the keys' declarations. The project's own
variables (the data folder, the secret key, the database and Redis URLs, logs, mail, sign-in)
are declared in :mod:`askserver.environment`, which puts both sets in one table for its
settings, its checks and `askserver_config`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import urlsplit, urlunsplit

PREFIX: Final = "ASKSERVER_"
"""The one prefix of askserver's variables."""

Kind = Literal["text", "integer", "number", "flag", "list", "json", "url", "path", "choice"]

TRUE: Final = frozenset({"1", "true", "yes", "on"})
"""Flag values read as on (any case)."""
FALSE: Final = frozenset({"0", "false", "no", "off"})
"""Flag values read as off (any case)."""
MASK: Final = "********"
"""What a secret's value is shown as."""


@dataclass(frozen=True, slots=True)
class Variable:
    """One environment variable: its name, how its text is read, its default and what it sets."""

    name: str
    kind: Kind
    default: Any
    """The value when unset (already typed); None means "not set" (see `default_text`)."""
    meaning: str
    key: str | None = None
    """The ASK_MCP key it sets, for the library's rows; None for a project's own."""
    secret: bool = False
    choices: tuple[str, ...] = ()
    also: tuple[str, ...] = ()
    """Other names read when this one is unset: a conventional one (DATABASE_URL), or an old
    name still read until the version its owner names."""
    default_text: str | None = None
    """The default as the settings table shows it, when the value alone would not say it."""
    optional: bool = False
    """A number that may also be `none` (unset)."""

    def shown_default(self) -> str:
        if self.default_text is not None:
            return self.default_text
        return render(self, self.default)


def raw(var: Variable, environ: Mapping[str, str]) -> tuple[str, str] | None:
    """(the name it was read from, its text) when `var` is set; an empty value counts as unset."""
    for name in (var.name, *var.also):
        if text := environ.get(name, ""):
            return name, text
    return None


def _not_json(name: str) -> Any:
    raise ValueError(f"must be JSON, and {name} is not a JSON value")


def _finite(text: str) -> float:
    """A JSON number's value, refused when it reads as infinity (1e999), as the wire refuses it."""
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"must be JSON with finite numbers; {text} reads as infinity")
    return number


# Complex: one branch per kind of variable (a closed vocabulary), each with its own message.
def parse(var: Variable, text: str) -> Any:  # noqa: C901, PLR0912
    """`text` read as `var`'s type.

    Raises:
        ValueError: the text is not of that type; the message says what it must be.
    """
    value = text.strip()
    if var.optional and value.lower() in ("", "none"):
        return None
    if var.kind == "integer":
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"must be a whole number such as {var.default}") from None
    if var.kind == "number":
        try:
            number = float(value)
        except ValueError:
            raise ValueError("must be a number such as 30 or 2.5") from None
        if not math.isfinite(number):  # "inf", "nan", "1e999": no duration or rate is
            raise ValueError(f"must be a finite number such as 30 or 2.5, not {value}")
        return number
    if var.kind == "flag":
        if value.lower() in TRUE:
            return True
        if value.lower() in FALSE:
            return False
        raise ValueError("must be 1 or 0 (true/false, yes/no, on/off)")
    if var.kind == "list":
        return [item.strip() for item in value.split(",") if item.strip()]
    if var.kind == "json":
        try:
            return json.loads(value, parse_constant=_not_json, parse_float=_finite)
        except json.JSONDecodeError as exc:
            raise ValueError(f"must be JSON ({exc.msg} at column {exc.colno})") from None
    if var.kind == "choice":
        for choice in var.choices:
            if value.lower() == choice.lower():
                return choice
        raise ValueError(f"must be one of {', '.join(var.choices)}")
    if var.kind == "url":
        parts = urlsplit(value)
        if not parts.scheme or not (parts.netloc or parts.path):
            raise ValueError("must be a URL such as scheme://host:port/path")
    return value


def read(
    environ: Mapping[str, str], variables: Iterable[Variable]
) -> tuple[dict[str, Any], dict[str, str]]:
    """The typed values of the `variables` set in `environ`, and what is wrong with the others.

    Returns (value by variable name, problem by variable name); a variable with a problem has
    no value, so its default applies until the system check's message is acted on.
    """
    values: dict[str, Any] = {}
    wrong: dict[str, str] = {}
    for var in variables:
        found = raw(var, environ)
        if found is None:
            continue
        name, text = found
        try:
            values[var.name] = parse(var, text)
        except ValueError as exc:
            wrong[var.name] = f"{name}={text if not var.secret else MASK!s} {exc}"
    return values, wrong


def read_one(var: Variable, environ: Mapping[str, str]) -> Any:
    """`var`'s typed value, or its default when it is unset or unreadable."""
    found = raw(var, environ)
    if found is None:
        return var.default
    try:
        return parse(var, found[1])
    except ValueError:
        return var.default


def render(var: Variable, value: Any) -> str:
    """A value as a person reads it (a list comma-separated, JSON compact, none for None)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, list | tuple):
        return ",".join(str(item) for item in value)
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def shown(var: Variable, value: Any) -> str:
    """A value as `askserver_config` prints it: secrets masked, a URL's password masked."""
    if value is None or (var.secret and not value):
        return "none"
    if var.secret:
        return MASK
    text = render(var, value)
    if var.kind == "url":
        return mask_url(text)
    return text


def mask_url(url: str) -> str:
    """`url` with its password (if any) replaced by the mask."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:{MASK}@{host}"))


TABLE_HEADER: Final = (
    "| variable | `ASK_MCP` key | default | meaning |",
    "| --- | --- | --- | --- |",
)
"""The settings table's head: a table lists variables with :func:`table_row`, one row each."""


def table_row(var: Variable) -> str:
    """`var`'s row of the settings table: its name, its key, its default and its meaning."""
    if var.default_text is not None:
        default = var.default_text
    elif var.default is None:
        default = "none"
    else:
        default = f"`{rendered}`" if (rendered := render(var, var.default)) else "empty"
    meaning = var.meaning
    if var.also:
        meaning += f" (also read: {', '.join(f'`{name}`' for name in var.also)})"
    key = f"`{var.key}`" if var.key else "—"
    return f"| `{var.name}` | {key} | {default} | {meaning} |"
