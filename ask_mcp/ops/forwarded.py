"""The scheme a request was made with, as Django's SECURE_PROXY_SSL_HEADER reads it behind a TLS proxy; knows no settings and no server.

Django's own requests take it from `request.is_secure()`; the parts served outside Django's
views (`/mcp`'s links for people, the inbox socket's same-origin check) read it here with the
same rule, so behind a proxy that ends TLS they see the https page the browser saw, not the
plain http between the proxy and the worker.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

META_PREFIX: Final = "HTTP_"
"""How Django's META names a request header (`HTTP_X_FORWARDED_PROTO` is `X-Forwarded-Proto`)."""


def scheme(own: str, headers: Mapping[str, str], proxy_header: Sequence[str] | None) -> str:
    """`http` or `https`: `own` (the connection's), or what the proxy's header says when trusted.

    `headers` are by lower-case name; `proxy_header` is SECURE_PROXY_SSL_HEADER, a (META name,
    value) pair, or None when no proxy is trusted. As Django does, only the header's first
    comma-separated value counts, and its absence leaves the connection's own scheme.
    """
    if not proxy_header:
        return own
    meta_name, secure_value = proxy_header
    name = meta_name.removeprefix(META_PREFIX).replace("_", "-").lower()
    value = headers.get(name)
    if value is None:
        return own
    return "https" if value.split(",", 1)[0].strip() == secure_value else "http"
