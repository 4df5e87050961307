"""The registry: toolkits by registered name or dotted path, built from settings, mistakes naming the choices."""

from __future__ import annotations

from typing import Any

import pytest

from ask_mcp.server.catalog.registry import (
    BUILTIN,
    ToolkitConfigError,
    available,
    build_toolkit,
    load_toolkit_class,
)
from ask_mcp.server.catalog.toolkit import Toolkit


class Shelf(Toolkit):
    """A toolkit found by its dotted path."""

    def __init__(self, *, size: int = 1) -> None:
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        self.size = size


NOT_A_TOOLKIT = object


def test_the_builtins_are_available_by_name_and_loaded_only_when_asked() -> None:
    assert set(BUILTIN) <= set(available())
    ask = load_toolkit_class("Ask")
    assert issubclass(ask, Toolkit) and f"{ask.__module__}:{ask.__name__}" == BUILTIN["Ask"]


def test_a_dotted_path_loads_a_toolkit_class_either_way_it_is_written() -> None:
    assert load_toolkit_class(f"{__name__}:Shelf") is Shelf
    assert load_toolkit_class(f"{__name__}.Shelf") is Shelf


@pytest.mark.parametrize(
    "name, words",
    [
        ("Nope", "Unknown toolkit 'Nope'; available: Ask, FileSystem"),
        ("no_such_module:X", "could not be loaded from 'no_such_module:X'"),
        (f"{__name__}:Missing", "could not be loaded"),
        (f"{__name__}:NOT_A_TOOLKIT", "is not a Toolkit subclass"),
    ],
)
def test_a_name_that_does_not_load_a_toolkit_is_named_with_the_choices(
    name: str, words: str
) -> None:
    with pytest.raises(ToolkitConfigError, match=words.replace("(", r"\(")):
        load_toolkit_class(name)


def test_settings_build_the_toolkit_and_the_prefix_sits_beside_them() -> None:
    shelf, prefix = build_toolkit(f"{__name__}:Shelf", {"size": 3, "prefix": "books"})
    assert isinstance(shelf, Shelf) and shelf.size == 3 and prefix == "books"
    assert build_toolkit(f"{__name__}:Shelf", None)[1] is None


@pytest.mark.parametrize(
    "settings, words",
    [
        ([1], "must be an object, got list"),
        ({"prefix": 5}, "prefix must be a string, got 5"),
        ({"colour": "red"}, "has no setting(s) 'colour'; valid settings: prefix, size"),
        ({"size": 0}, "size must be at least 1, got 0"),
    ],
)
def test_bad_settings_are_refused_naming_the_toolkit(settings: Any, words: str) -> None:
    with pytest.raises(ToolkitConfigError) as refused:
        build_toolkit(f"{__name__}:Shelf", settings)
    assert words in str(refused.value) and "Shelf" in str(refused.value)
