"""JSON-RPC 2.0 framing for MCP: error codes, the wire error type, parsing and encoding.

Pure: no Django, no IO. Everything that turns bytes into a message or a message into bytes
goes through here, so the codec can be swapped in one place.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

PARSE_ERROR: Final = -32700
"""The body is not valid JSON."""
INVALID_REQUEST: Final = -32600
"""The JSON is not a single JSON-RPC 2.0 request or notification."""
METHOD_NOT_FOUND: Final = -32601
"""The method does not exist, was removed, or is not offered by this server."""
INVALID_PARAMS: Final = -32602
"""The params are missing something, have the wrong shape, or carry a rejected requestState."""
INTERNAL_ERROR: Final = -32603
"""The server failed; the details are in its log, never on the wire."""
RESOURCE_NOT_FOUND: Final = -32002
"""initialize-era only (2025-06-18, 2025-11-25): no resource has the URI; 2026-07-28 uses -32602."""
HEADER_MISMATCH: Final = -32020
"""An MCP routing header is missing, malformed, or disagrees with the body (2026-07-28)."""
MISSING_REQUIRED_CLIENT_CAPABILITY: Final = -32021
"""The request needs a client capability the client did not declare (2026-07-28)."""
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
"""The request's protocol version is not one this server speaks (2026-07-28)."""

MAX_DEPTH: Final = 100
"""Deepest nesting of arrays and objects a message may have.

Far beyond any real MCP message, and far below where re-encoding a client's value deeper in the
call stack (storing a session's capabilities, say) would hit Python's recursion limit: values
the parser accepted near that limit crashed the code that stored them.
"""

HTTP_STATUS_FOR_CODE: Final[Mapping[int, int]] = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}
"""HTTP status for an error response on the 2026-07-28 path; codes not listed answer 200."""


def http_status(code: int) -> int:
    """The HTTP status an error response with this code is sent with."""
    return HTTP_STATUS_FOR_CODE.get(code, 200)


RequestId = str | int
"""A JSON-RPC id as MCP allows it: a string or an integer, never null or a boolean."""


class JsonRpcError(Exception):
    """An error that travels to the client as a JSON-RPC error object.

    Raised anywhere below the dispatch boundary; only the boundary turns it into a response.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @property
    def http_status(self) -> int:
        return http_status(self.code)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


def invalid_params(message: str, **data: Any) -> JsonRpcError:
    return JsonRpcError(INVALID_PARAMS, message, data or None)


@dataclass(slots=True)
class Request:
    """A JSON-RPC request; `id` is None for a notification."""

    method: str
    params: dict[str, Any]
    id: RequestId | None = None
    params_given: bool = True

    @property
    def is_notification(self) -> bool:
        return self.id is None


@dataclass(slots=True)
class Response:
    """A JSON-RPC response the client sent us (legacy era: the answer to our elicitation/create)."""

    id: RequestId
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


@dataclass(slots=True)
class ParseFailure:
    """Why a body could not be read as a message, with the id when it was readable."""

    error: JsonRpcError
    id: RequestId | None = field(default=None)


Message = Request | Response


def _valid_id(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def parse_message(body: bytes) -> Message:
    """Decode one JSON-RPC message from `body`.

    Raises:
        MessageError: the body is not JSON (-32700) or not one request, notification
            or response (-32600); carries the request id when it could be read.
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MessageError(
            JsonRpcError(
                PARSE_ERROR,
                f"Parse error: the body is not valid UTF-8 ({exc.reason} at byte {exc.start})",
            )
        ) from exc
    try:
        value = loads(text)
    except json.JSONDecodeError as exc:
        raise MessageError(
            JsonRpcError(
                PARSE_ERROR, f"Parse error: {exc.msg} at line {exc.lineno} column {exc.colno}"
            )
        ) from exc
    except ValueError as exc:  # NaN/Infinity, 1e999, or an integer past Python's digit limit
        raise MessageError(JsonRpcError(PARSE_ERROR, f"Parse error: {exc}")) from exc
    except RecursionError as exc:
        raise MessageError(_too_deep()) from exc
    # Cheap screens first: only a body with enough brackets can be too deep, and only one with a
    # surrogate escape can hold a lone surrogate.
    if body.count(b"[") + body.count(b"{") > MAX_DEPTH and _deeper_than(value, MAX_DEPTH):
        raise MessageError(_too_deep())
    if _SURROGATE_ESCAPE.search(body) and not _is_unicode(value):
        # JSON's syntax allows "\ud800" alone, but it is no character: every later encoding
        # of the value (the reply, the database) would fail.
        raise MessageError(
            JsonRpcError(
                PARSE_ERROR,
                "Parse error: the JSON holds an unpaired UTF-16 surrogate escape (such as "
                "\\ud800), which is not a Unicode character",
            )
        )
    return message_from_json(value)


_SURROGATE_ESCAPE: Final = re.compile(rb"\\u[dD][89a-fA-F]")


def _too_deep() -> JsonRpcError:
    return JsonRpcError(
        PARSE_ERROR, f"Parse error: the JSON is nested more than {MAX_DEPTH} levels deep"
    )


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether arrays and objects nest more than `limit` levels in `value` (no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def _is_unicode(value: Any) -> bool:
    try:
        _encoder.encode(value).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def finite_number(text: str) -> float:
    """The float a JSON number's `text` reads as; ValueError naming it when that is not finite.

    JSON's grammar allows `1e999`, but Python reads it as infinity, which no JSON encoder writes
    back: it crashed storing an initialize's capabilities, took a place as a question's default,
    and reached the model as `{"n":Infinity}`.
    """
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(
            f"the number {text[:40]} is too large to be a finite number (it reads as infinity); "
            f"send a number between -{_LARGEST} and {_LARGEST}, or the value as a string"
        )
    return value


_LARGEST: Final = "1.7976931348623157e308"
"""The largest finite double, as the error for a number past it names it."""


def loads(text: str | bytes) -> Any:
    """JSON text as Python values, strictly: no NaN or Infinity, no number that reads as infinity.

    Raises:
        json.JSONDecodeError: the text is not JSON.
        ValueError: NaN, Infinity or a number past the largest double (the message names it).
    """
    return json.loads(text, parse_constant=_reject_constant, parse_float=finite_number)


# Complex: one branch per way a message can be malformed, each naming its own error; a table of checks would hide the order they must run in.
def message_from_json(value: Any) -> Message:  # noqa: C901
    """Check a decoded JSON value is one JSON-RPC message and wrap it.

    Raises:
        MessageError: as for :func:`parse_message`.
    """
    if isinstance(value, list):
        raise MessageError(
            JsonRpcError(
                INVALID_REQUEST,
                "Invalid request: batches are not supported; send one JSON-RPC message per POST",
            )
        )
    if not isinstance(value, dict):
        raise MessageError(
            JsonRpcError(
                INVALID_REQUEST, f"Invalid request: expected a JSON object, got {json_type(value)}"
            )
        )
    raw_id = value.get("id")
    request_id = raw_id if _valid_id(raw_id) else None

    def fail(message: str) -> MessageError:
        return MessageError(
            JsonRpcError(INVALID_REQUEST, f"Invalid request: {message}"), request_id
        )

    if value.get("jsonrpc") != "2.0":
        raise fail('"jsonrpc" must be the string "2.0"')
    if "id" in value and not _valid_id(raw_id):
        raise fail(f'"id" must be a string or an integer, got {json_type(raw_id)}')
    if "method" in value:
        method = value["method"]
        if not isinstance(method, str) or not method:
            raise fail('"method" must be a non-empty string')
        if "result" in value or "error" in value:
            raise fail('a request cannot also carry "result" or "error"')
        params_given = "params" in value
        params = value.get("params", {})
        if params is None and not params_given:
            params = {}
        if not isinstance(params, dict):
            raise fail(f'"params" must be an object, got {json_type(params)}')
        return Request(method=method, params=params, id=request_id, params_given=params_given)
    if "result" in value or "error" in value:
        if request_id is None:
            raise fail('a response needs the "id" of the request it answers')
        if "result" in value and "error" in value:
            raise fail('a response carries "result" or "error", not both')
        result = value.get("result")
        error = value.get("error")
        if "result" in value and not isinstance(result, dict):
            raise fail(f'"result" must be an object, got {json_type(result)}')
        if "error" in value and not isinstance(error, dict):
            raise fail(f'"error" must be an object, got {json_type(error)}')
        return Response(id=request_id, result=result, error=error)
    raise fail('a message needs "method" (request or notification) or "result"/"error" (response)')


class MessageError(Exception):
    """A body that is not a usable JSON-RPC message."""

    def __init__(self, error: JsonRpcError, request_id: RequestId | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.request_id = request_id


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def result_message(request_id: RequestId, result: Mapping[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_message(request_id: RequestId | None, error: JsonRpcError) -> dict[str, Any]:
    """An error response; the id is omitted (never null) when the request's id is unknown."""
    message: dict[str, Any] = {"jsonrpc": "2.0"}
    if request_id is not None:
        message["id"] = request_id
    message["error"] = error.to_dict()
    return message


def notification_message(method: str, params: Mapping[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def request_message(
    request_id: RequestId, method: str, params: Mapping[str, Any]
) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def encode(message: Mapping[str, Any]) -> bytes:
    """Serialise one message compactly as UTF-8 JSON."""
    return _encoder.encode(message).encode("utf-8")
