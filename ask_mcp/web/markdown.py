"""An agent's message as safe HTML: Markdown rendered by markdown-it-py, cleaned by nh3's allow-list; reads no rows.

Agents write Markdown (headings, code fences, lists, links). Raw HTML in a message is never
passed through: markdown-it-py escapes it (``html=False``), and nh3 then keeps only the tags
below, so even a renderer bug cannot let a script or an event handler through. Links open with
``rel="noopener nofollow noreferrer"`` and only http, https and mailto addresses are kept.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

from ask_mcp.protocol.plain import plain_title

__all__ = ["plain_title", "render_markdown"]

ALLOWED_TAGS: Final = frozenset(
    {
        "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "del", "s",
        "code", "pre", "blockquote", "ul", "ol", "li", "a", "table", "thead", "tbody", "tr",
        "th", "td",
    }
)  # fmt: skip
"""What a rendered message may hold: text structure, code and links; no images, forms or media
(an image would fetch a URL the model chose as soon as the card shows)."""
ALLOWED_ATTRIBUTES: Final = {
    "a": {"href", "title"},
    "ol": {"start"},
    "th": {"align"},
    "td": {"align"},
}
"""Attributes kept on the allowed tags (nh3 sets each link's `rel` itself)."""
FOCUSABLE: Final = {"pre": {"tabindex": "0"}}
"""A code block scrolls sideways inside its card rather than widening the page (a phone is 390 px
wide): keyboard users reach its hidden part by focusing it (WCAG 2.1.1; axe's
scrollable-region-focusable). Tables wrap their cells instead (inbox.css)."""
URL_SCHEMES: Final = frozenset({"http", "https", "mailto"})
"""Link schemes kept; a `javascript:` or `data:` link loses its href."""
LINK_REL: Final = "noopener nofollow noreferrer"
"""Every link's rel: the page it opens cannot reach this one, nor learn where it came from."""
MAX_CACHED: Final = 2048
"""Rendered messages kept per process: an inbox redraws the same few hundred messages on every
socket reconnect, and rendering is ~0.1 ms per kilobyte of Markdown."""


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # commonmark with tables and strikethrough; linkify turns bare URLs into links.
    return MarkdownIt("commonmark", {"html": False, "linkify": True, "breaks": True}).enable(
        ["table", "strikethrough", "linkify"]
    )


@lru_cache(maxsize=MAX_CACHED)
def _rendered(text: str) -> str:
    html = _parser().render(text)
    return nh3.clean(
        html,
        tags=set(ALLOWED_TAGS),
        attributes={tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()},
        url_schemes=set(URL_SCHEMES),
        link_rel=LINK_REL,
        set_tag_attribute_values={tag: dict(values) for tag, values in FOCUSABLE.items()},
    )


def render_markdown(text: str) -> SafeString:
    """`text` (an agent's Markdown) as HTML safe to put in a page."""
    return mark_safe(_rendered(text))  # cleaned by nh3's allow-list just above
