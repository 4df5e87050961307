"""Toolkits by name (built-ins, entry points, dotted paths) and building them from settings; knows no toolkit.

Loading by name means a server configured from settings or a file never imports a toolkit it
does not use. The built-ins are named by import path and imported only when asked for, so the
engine depends on no toolkit; it does not know what any toolkit offers. Pure: no Django.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from importlib.metadata import entry_points
from typing import Any, Final

from ask_mcp.server.catalog.toolkit import Toolkit

ENTRY_POINT_GROUP: Final = "ask_mcp.toolkits"
"""The entry-point group third-party distributions register their toolkits under."""
BUILTIN: Final[Mapping[str, str]] = {
    "Ask": "ask_mcp.toolkits.ask:AskToolkit",
    "FileSystem": "ask_mcp.toolkits.filesystem:FileSystem",
}
"""The toolkits that ship with ask_mcp, by name, as `module:Class` import paths."""
PREFIX_KEY: Final = "prefix"
"""The setting beside a toolkit's own that names the prefix it is plugged under."""


class ToolkitConfigError(ValueError):
    """A toolkit name or setting that cannot be used; the message names both and the choices."""


def available() -> dict[str, str]:
    """Every toolkit name that can be loaded, with where it comes from."""
    names = dict(BUILTIN)
    for point in entry_points(group=ENTRY_POINT_GROUP):
        names.setdefault(point.name, point.value)
    return names


def load_toolkit_class(name: str) -> type[Toolkit]:
    """Import the toolkit class called `name` (a registered name or `package.module:Class`).

    Raises:
        ToolkitConfigError: no such toolkit, or the target is not a Toolkit subclass.
    """
    target = available().get(name)
    if target is None and ("." in name or ":" in name):
        target = name
    if target is None:
        raise ToolkitConfigError(
            f"Unknown toolkit {name!r}; available: {', '.join(sorted(available()))} "
            f"(or a dotted path such as 'mypackage.tools:MyToolkit')"
        )
    module_name, _, attr = target.partition(":") if ":" in target else target.rpartition(".")
    try:
        value: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as exc:
        raise ToolkitConfigError(
            f"Toolkit {name!r} could not be loaded from {target!r}: {exc}"
        ) from exc
    if not (inspect.isclass(value) and issubclass(value, Toolkit)):
        raise ToolkitConfigError(f"{target!r} (toolkit {name!r}) is not a Toolkit subclass")
    return value


def build_toolkit(name: str, settings: Mapping[str, Any] | None) -> tuple[Toolkit, str | None]:
    """Instantiate a toolkit from its settings; returns it with the `prefix` given, if any.

    Raises:
        ToolkitConfigError: unknown toolkit, unknown setting, or a bad value.
    """
    if settings is None:
        settings = {}
    if not isinstance(settings, Mapping):
        raise ToolkitConfigError(
            f"Settings for toolkit {name!r} must be an object, got {type(settings).__name__}"
        )
    cls = load_toolkit_class(name)
    options = dict(settings)
    prefix = options.pop(PREFIX_KEY, None)
    if prefix is not None and not isinstance(prefix, str):
        raise ToolkitConfigError(f"Toolkit {name!r}: prefix must be a string, got {prefix!r}")
    valid = cls.setting_names()
    listed = ", ".join([PREFIX_KEY, *valid])
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise ToolkitConfigError(
            f"Toolkit {name!r} has no setting(s) {', '.join(map(repr, unknown))}; "
            f"valid settings: {listed}"
        )
    missing = [setting for setting in cls.required_setting_names() if setting not in options]
    if missing:
        raise ToolkitConfigError(
            f"Toolkit {name!r} needs the setting(s) {', '.join(map(repr, missing))}; "
            f"valid settings: {listed}"
        )
    try:
        toolkit = cls(**options)
    except (TypeError, ValueError) as exc:
        raise ToolkitConfigError(f"Toolkit {name!r}: {exc}") from exc
    return toolkit, prefix
