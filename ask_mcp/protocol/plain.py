"""A line of an agent's Markdown as plain words, for titles, lists and mail subjects; knows no HTML.

Below the web and the mail alike (both name an ask by its message's first line), so neither
imports the other for it.
"""

from __future__ import annotations

import re
from typing import Final

_MARKS: Final = re.compile(
    r"^\s{0,3}(#{1,6}\s+|[-*+>]\s+|\d+[.)]\s+)|[*`~]{1,3}(?=\S)|(?<=\S)[*`~]{1,3}"
    r"|(?<!\w)__(?=\S)|(?<=\S)__(?!\w)"
)
"""A line's Markdown marks: a heading's hashes, a list's bullet, a quote, emphasis and code ticks."""


def plain_title(line: str) -> str:
    """A message's first line without its Markdown marks ("## **Deploy**?" reads "Deploy?")."""
    return _MARKS.sub("", line).strip() or line
