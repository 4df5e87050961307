"""The 2026-07-28 request envelope: `_meta` fields, routing headers and the version rung of the ladder.

Pure: takes a parsed request and the HTTP headers as plain strings, returns the envelope or
raises the JsonRpcError the ladder prescribes. Method existence and client capabilities are
the dispatcher's rungs, because only it knows which methods and tools exist.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ask_mcp.protocol.jsonrpc import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    UNSUPPORTED_PROTOCOL_VERSION,
    JsonRpcError,
    Request,
    json_type,
)
from ask_mcp.protocol.mcp import (
    HEADER_METHOD,
    HEADER_NAME,
    HEADER_PARAM_PREFIX,
    HEADER_PROTOCOL_VERSION,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROGRESS_TOKEN,
    META_PROTOCOL_VERSION,
    NAME_PARAM_OF_METHOD,
)

_SENTINEL = re.compile(r"=\?base64\?(?P<payload>.*)\?=", re.DOTALL)
_ROUTING_HEADERS = frozenset({HEADER_PROTOCOL_VERSION, HEADER_METHOD, HEADER_NAME})


@dataclass(frozen=True, slots=True)
class Envelope:
    """What a modern request says about its sender, read from `params._meta`."""

    protocol_version: str
    client_capabilities: Mapping[str, Any]
    client_info: Mapping[str, Any] | None
    progress_token: str | int | None
    log_level: str | None


def decode_header_value(value: str) -> str | None:
    """Undo the `=?base64?…?=` wrapping of a header value; None when the wrapping is malformed.

    Only canonical base64 of valid UTF-8 is accepted, so a corrupt header never matches a body
    value by accident. Values without the complete sentinel are literal.
    """
    match = _SENTINEL.fullmatch(value)
    if match is None:
        return value
    payload = match.group("payload")
    try:
        raw = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return None
    if base64.b64encode(raw).decode("ascii") != payload:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def read_envelope(request: Request) -> Envelope:
    """Rung 1: the `_meta` fields every modern request carries.

    Raises:
        JsonRpcError: -32602 naming the missing or malformed field.
    """
    meta = request.params.get("_meta")
    if not isinstance(meta, Mapping):
        raise JsonRpcError(
            INVALID_PARAMS,
            "params._meta is missing: every 2026-07-28 request carries "
            f"{META_PROTOCOL_VERSION!r} and {META_CLIENT_CAPABILITIES!r} in params._meta",
        )
    missing = [key for key in (META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES) if key not in meta]
    if missing:
        raise JsonRpcError(
            INVALID_PARAMS, f"params._meta is missing the required key(s): {', '.join(missing)}"
        )
    capabilities = meta[META_CLIENT_CAPABILITIES]
    if not isinstance(capabilities, Mapping):
        raise JsonRpcError(
            INVALID_PARAMS,
            f"params._meta[{META_CLIENT_CAPABILITIES!r}] must be an object, got "
            f"{json_type(capabilities)}",
        )
    client_info = meta.get(META_CLIENT_INFO)
    token = meta.get(META_PROGRESS_TOKEN)
    if isinstance(token, bool) or not isinstance(token, str | int):
        token = None
    level = meta.get(META_LOG_LEVEL)
    return Envelope(
        protocol_version=meta[META_PROTOCOL_VERSION],
        client_capabilities=capabilities,
        client_info=client_info if isinstance(client_info, Mapping) else None,
        progress_token=token,
        log_level=level if isinstance(level, str) else None,
    )


def check_headers(
    request: Request, envelope: Envelope, headers: Mapping[str, str], raw_names: Iterable[str] = ()
) -> None:
    """Rung 2: the routing headers must be present and agree with the body.

    `headers` maps lower-case names to values with surrounding whitespace already stripped;
    `raw_names` lists every header name as received, to catch a routing header sent twice.

    Raises:
        JsonRpcError: -32020 naming the header and what is wrong with it.
    """
    seen: set[str] = set()
    for name in raw_names:
        if name in _ROUTING_HEADERS:
            if name in seen:
                raise _mismatch(f"the {_display(name)} header appears more than once")
            seen.add(name)
    version_header = headers.get(HEADER_PROTOCOL_VERSION)
    if version_header is None:
        raise _mismatch(f"the {_display(HEADER_PROTOCOL_VERSION)} header is missing")
    if version_header != envelope.protocol_version:
        raise _mismatch(
            f"the {_display(HEADER_PROTOCOL_VERSION)} header {version_header!r} does not match "
            f"params._meta protocol version {envelope.protocol_version!r}"
        )
    method_header = headers.get(HEADER_METHOD)
    if method_header is None:
        raise _mismatch(f"the {_display(HEADER_METHOD)} header is missing")
    if method_header != request.method:
        raise _mismatch(
            f"the {_display(HEADER_METHOD)} header {method_header!r} does not match the body's "
            f"method {request.method!r}"
        )
    param = NAME_PARAM_OF_METHOD.get(request.method)
    if param is None:
        return
    body_value = request.params.get(param)
    if not isinstance(body_value, str):
        return  # missing or not a string: the dispatcher reports the param itself (-32602)
    raw = headers.get(HEADER_NAME)
    if raw is None:
        raise _mismatch(
            f"the {_display(HEADER_NAME)} header is missing; it must carry params.{param}"
        )
    decoded = decode_header_value(raw)
    if decoded is None:
        raise _mismatch(f"the {_display(HEADER_NAME)} header has a malformed base64 value")
    if decoded != body_value:
        raise _mismatch(
            f"the {_display(HEADER_NAME)} header {decoded!r} does not match params.{param} "
            f"{body_value!r}"
        )


def check_param_headers(
    input_schema: Mapping[str, Any], arguments: Mapping[str, Any], headers: Mapping[str, str]
) -> None:
    """Mcp-Param-* headers mirror top-level arguments whose schema declares `x-mcp-header`.

    Raises:
        JsonRpcError: -32020 when a declared header is missing, malformed or disagrees.
    """
    properties = input_schema.get("properties")
    if not isinstance(properties, Mapping):
        return
    for argument, schema in properties.items():
        if not isinstance(schema, Mapping) or not isinstance(schema.get("x-mcp-header"), str):
            continue
        header = HEADER_PARAM_PREFIX + schema["x-mcp-header"].lower()
        shown = "Mcp-Param-" + schema["x-mcp-header"]
        raw = headers.get(header)
        value = arguments.get(argument)
        if value is None:
            if raw is not None:
                raise _mismatch(f"the {shown} header is sent but argument {argument!r} is absent")
            continue
        if raw is None:
            raise _mismatch(f"the {shown} header is missing; it must mirror argument {argument!r}")
        decoded = decode_header_value(raw)
        if decoded is None:
            raise _mismatch(f"the {shown} header has a malformed base64 value")
        if not _param_matches(value, decoded):
            raise _mismatch(f"the {shown} header {decoded!r} does not match argument {argument!r}")


def _param_matches(value: Any, decoded: str) -> bool:
    if isinstance(value, bool):
        return decoded == ("true" if value else "false")
    if isinstance(value, int):
        try:
            return int(decoded) == value
        except ValueError:
            return False
    return isinstance(value, str | float) and str(value) == decoded


def check_version(envelope: Envelope, supported: tuple[str, ...]) -> None:
    """Rung 3: the body's protocol version must be one this path serves.

    Raises:
        JsonRpcError: -32602 when it is not a string, -32022 with `supported`/`requested` data
            when it is not served.
    """
    version = envelope.protocol_version
    if not isinstance(version, str):
        raise JsonRpcError(
            INVALID_PARAMS,
            f"params._meta[{META_PROTOCOL_VERSION!r}] must be a string, got {json_type(version)}",
        )
    if version not in supported:
        raise JsonRpcError(
            UNSUPPORTED_PROTOCOL_VERSION,
            f"Unsupported protocol version {version!r}; this endpoint speaks "
            f"{', '.join(supported)}",
            {"supported": list(supported), "requested": version},
        )


def _mismatch(message: str) -> JsonRpcError:
    return JsonRpcError(HEADER_MISMATCH, f"Header mismatch: {message}")


def _display(name: str) -> str:
    return {
        "mcp-protocol-version": "MCP-Protocol-Version",
        "mcp-method": "Mcp-Method",
        "mcp-name": "Mcp-Name",
    }.get(name, name)
