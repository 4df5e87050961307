"""An agent's message as safe HTML: Markdown rendered by markdown-it-py, cleaned by nh3's allow-list; reads no rows.

Agents write Markdown (headings, code fences, lists, links). Raw HTML in a message is never
passed through: markdown-it-py escapes it (``html=False``), and nh3 then keeps only the tags
below, so even a renderer bug cannot let a script or an event handler through. Links open with
``rel="noopener nofollow noreferrer"`` and only http, https and mailto addresses are kept.

Browsers send a host's cookies to every port of it, so a link to this server's own host on
another port (a local listener's) would hand it the person's session once clicked: such a
link, a protocol-relative one (``//evil/x``, whose host is whatever follows) and a relative
one are shown as their text, not as links. The server's own host names are PUBLIC_URL's and
those ALLOWED_HOSTS names; its port is PUBLIC_URL's (without PUBLIC_URL no link to its own
hosts renders). Every link that does render shows its real host after its text unless the text
already is that address (``[your bank](https://evil.example)`` reads "your bank (evil.example)").
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final
from urllib.parse import urlsplit

import nh3
from django.conf import settings
from django.http.request import validate_host
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.token import Token

from ask_mcp import conf
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


DEFAULT_PORTS: Final = {"http": 80, "https": 443}
"""The port a link without one means."""

OwnAddress = tuple[tuple[str, ...], int | None]
"""The host patterns that name this server (ALLOWED_HOSTS's, PUBLIC_URL's host) and the one
port a link to them may name (PUBLIC_URL's; None: no link to them renders)."""


def own_address() -> OwnAddress:
    """This server's host names (as ALLOWED_HOSTS patterns) and PUBLIC_URL's port."""
    hosts = [host for host in settings.ALLOWED_HOSTS if host != "*"]
    port = None
    if public := conf.values().public_url:
        parts = urlsplit(public)
        hosts.append((parts.hostname or "").lower())
        port = parts.port or DEFAULT_PORTS.get(parts.scheme)
    return tuple(hosts), port


def link_host(href: str, own: OwnAddress) -> str | None:
    """The host a link shows after its text (a mailto link's: its address); None: not a link."""
    if any(char == "\\" or char <= " " for char in href):
        return None  # browsers read a backslash as a slash: what urlsplit sees is not what they do
    try:
        parts = urlsplit(href)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme == "mailto":
        return parts.path.lower()
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        return None  # relative or protocol-relative: its host is not written out
    host = parts.hostname.lower()
    hosts, own_port = own
    own_host = bool(hosts) and validate_host(host, list(hosts))
    if own_host and (own_port is None or (port or DEFAULT_PORTS[parts.scheme]) != own_port):
        return None  # this server's host on another port: another listener's
    return parts.netloc.rpartition("@")[2].lower()


def _shows(text: str, host: str) -> bool:
    """Whether a link's visible text already is an address on `host` (or that mail address)."""
    if text.lower().removeprefix("mailto:") == host:
        return True
    try:
        parts = urlsplit(text if "://" in text else "http://" + text)
        return parts.netloc.rpartition("@")[2].lower() == host
    except ValueError:
        return False


def _checked_links(children: list[Token], own: OwnAddress) -> list[Token]:
    """An inline run's tokens with each link kept (its host shown after it) or turned to text."""
    out: list[Token] = []
    opened: list[tuple[Token, str | None, int]] = []  # link_open, its host, where its text starts
    for token in children:
        if token.type == "link_open":
            host = link_host(str(token.attrGet("href") or ""), own)
            opened.append((token, host, len(out) + 1))
            if host is not None:
                out.append(token)
            continue
        if token.type == "link_close" and opened:
            _open, host, start = opened.pop()
            if host is None:
                continue
            out.append(token)
            text = "".join(each.content for each in out[start:-1] if each.type == "text")
            if not _shows(text.strip(), host):
                out.append(Token("text", "", 0, content=f" ({host})"))
            continue
        out.append(token)
    return out


@lru_cache(maxsize=MAX_CACHED)
def _rendered(text: str, own: OwnAddress) -> str:
    parser = _parser()
    tokens = parser.parse(text)
    for token in tokens:
        if token.type == "inline" and token.children:
            token.children = _checked_links(token.children, own)
    html = parser.renderer.render(tokens, parser.options, {})
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
    return mark_safe(_rendered(text, own_address()))  # cleaned by nh3's allow-list above
