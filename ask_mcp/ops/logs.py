"""The log formats: one JSON object per line (ASKSERVER_LOG_FORMAT=json), and the filter that masks secrets in either format.

Pure logging: the LOGGING setting names these classes. What a record says is its emitter's
business; nothing here decides what gets logged. The filter is the second line of defence: no
part of askserver logs a token, a requestState, an answer or a session key on purpose, and the
filter masks any bearer token or sealed state that would slip into a message anyway (an
exception text quoting a header, say).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
from typing import Any, Final

SECRET_PATTERNS: Final = (
    # askserver's bearer tokens: askmcp_ and 43 URL-safe characters (256 bits).
    re.compile(r"askmcp_[A-Za-z0-9_-]{16,}"),
    # An Authorization header's credentials, whatever the token looks like.
    re.compile(r"(?i)(bearer\s+)[^\s'\",]+"),
    # A sealed requestState: two URL-safe base64 parts, the tag being 43 characters.
    re.compile(r"[A-Za-z0-9_-]{40,}\.[A-Za-z0-9_-]{43}"),
)
"""What the filter masks in a message and in the extra fields."""
MASKED: Final = "[masked]"
"""What a masked secret reads as."""

_STANDARD: Final = frozenset(
    vars(logging.LogRecord("", 0, "", 0, "", None, None)).keys() | {"message", "asctime"}
)
"""A LogRecord's own attributes: anything else on a record came in `extra` and is a field."""


def mask(text: str) -> str:
    """`text` with every bearer token and sealed state in it masked."""
    for pattern in SECRET_PATTERNS:
        if pattern.groups:
            text = pattern.sub(lambda m: m.group(1) + MASKED, text)
        else:
            text = pattern.sub(MASKED, text)
    return text


class SecretsFilter(logging.Filter):
    """Masks tokens and sealed states in the message, its arguments and the exception text."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = mask(message)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = mask(record.exc_text)
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, the `extra` fields, the traceback.

    The time's text is built once per second: a datetime per record was a sixth of the line.
    """

    _second: int = -1
    _prefix: str = ""

    def _time(self, created: float) -> str:
        second = int(created)
        if second != self._second:
            self._prefix = dt.datetime.fromtimestamp(second, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S")
            self._second = second
        return f"{self._prefix}.{int((created - second) * 1000):03d}+00:00"

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self._time(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name, value in record.__dict__.items():
            if name not in _STANDARD and not name.startswith("_"):
                entry[name] = value if isinstance(value, int | float | bool | None) else str(value)
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["traceback"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
