"""A line of an agent's Markdown as plain words: marks go, words and snake_case stay."""

from __future__ import annotations

import pytest

from ask_mcp.protocol.plain import plain_title


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("## Migration plan for `orders`", "Migration plan for orders"),
        ("## **Deploy**?", "Deploy?"),
        ("- delete branch *feature/x*", "delete branch feature/x"),
        ("> quoted: ~~old~~ new", "quoted: old new"),
        ("1. first step", "first step"),
        ("keep my_snake_case and __dunder__ words", "keep my_snake_case and dunder words"),
        ("3 * 4 = 12", "3 * 4 = 12"),
    ],
)
def test_markdown_marks_go_and_the_words_stay(line: str, words: str) -> None:
    assert plain_title(line) == words


def test_a_line_that_is_only_marks_is_kept_as_it_is() -> None:
    # Nothing would be left to name the ask by: better the marks than an empty title.
    assert plain_title("***") == "***"
    assert plain_title("#") == "#"
