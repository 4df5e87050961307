"""The log formats: plain lines and one JSON object per line (ASKSERVER_LOG_FORMAT), control characters escaped, the filter that masks secrets, and the handler that writes them off the event loop.

Pure logging: the LOGGING setting names these classes. What a record says is its emitter's
business; nothing here decides what gets logged. The filter is the second line of defence: no
part of askserver logs a token, a requestState, an answer or a session key on purpose, and the
filter masks any bearer token or sealed state that would slip into a message anyway (an
exception text quoting a header, say).

One record is one line in both formats, whatever its text: a method or tool name an agent sent
with a newline in it wrote a second, forged request line. The formatters escape control
characters (:func:`escaped`) once per line, so no emitter has to remember to.

:class:`BackgroundStreamHandler` is the console handler: the thread that logs a record only
queues it; the handler's own thread filters, formats and writes it, a batch per write. A
request line used to be masked, formatted and written (a `write` and a `flush`) on the event
loop, in the middle of every request (docs/measurements/logging-measurements.md).
"""

from __future__ import annotations

import atexit
import datetime as dt
import json
import logging
import queue
import re
import sys
import threading
import time
import weakref
from typing import IO, Any, Final

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

_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
"""What `escaped` escapes: C0 and C1 controls, DEL, and the two Unicode line separators (the
characters `str.splitlines` and log viewers break a line at)."""
_SHORT: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
"""The escapes read most often, as Python and JSON write them; the rest are `\\uXXXX`."""

_STANDARD: Final = frozenset(
    vars(logging.LogRecord("", 0, "", 0, "", None, None)).keys() | {"message", "asctime"}
)
"""A LogRecord's own attributes: anything else on a record came in `extra` and is a field."""


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _SHORT.get(char) or f"\\u{ord(char):04x}"


def escaped(text: str) -> str:
    """`text` on one line: each control character as its escape (a newline as `\\n`).

    The escapes are JSON's too, so a JSON line stays JSON. A line with nothing to escape (nearly
    all) costs one `str.isprintable`, done in C: every control character is unprintable. It is
    about 4 times as fast as searching for them (2 against 8 µs for a 230-character JSON line on
    the loaded 2-CPU test machine).
    """
    if text.isprintable():
        return text
    return _CONTROL.sub(_escape, text)


_SEALED_LENGTH: Final = 84
"""The shortest text the sealed-state pattern can match (40, the dot, 43): a shorter text that
names neither `askmcp_` nor `bearer` holds no secret, and the patterns need not run on it."""


def _may_hold_secret(text: str) -> bool:
    # Three regular expressions over every request line were 9 us of the line's cost; this
    # check is under 1 us, and a line of a request's usual size never gets past it.
    return "askmcp_" in text or len(text) >= _SEALED_LENGTH or "bearer" in text.lower()


def mask(text: str) -> str:
    """`text` with every bearer token and sealed state in it masked."""
    if not _may_hold_secret(text):
        return text
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


class PlainFormatter(logging.Formatter):
    """Django's plain format, `%(asctime)s %(levelname)s %(name)s: %(message)s`, on one line.

    Only the record's line is escaped: a traceback, which the formatter appends after it, keeps its
    own lines.
    """

    def __init__(
        self, fmt: str | None = "%(asctime)s %(levelname)s %(name)s: %(message)s", **more: Any
    ) -> None:
        super().__init__(fmt, **more)

    def formatMessage(self, record: logging.LogRecord) -> str:
        return escaped(super().formatMessage(record))


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
        # json escapes C0 controls itself; `escaped` takes the rest (DEL, C1, U+2028, U+2029).
        return escaped(json.dumps(entry, ensure_ascii=False, separators=(",", ":")))


_PLAIN_ARGUMENT: Final = (str, int, float, bool, type(None))
"""Arguments whose text cannot change after the call: a record with only these is formatted
later, on the handler's thread; any other argument is put into the message at once."""
_STOP: Final = object()
"""Queued by close(): the writer's thread writes what came before it and ends."""
_FLUSH_BOUND: Final = 10.0
"""Seconds flush() and close() wait for the writer's thread at most."""
GATHER_SECONDS: Final = 0.02
"""How long the writer's thread waits after a write before it takes the next batch: a line is
written at most this late, and under load the thread wakes 50 times a second rather than once
per request (each wake-up is a switch of threads and of the GIL)."""


class BackgroundStreamHandler(logging.StreamHandler[IO[str]]):
    """A stream handler whose filtering, formatting and writing happen on a thread of its own.

    `handle` (on the event loop, for a request line) only puts the record on a queue; the
    handler's thread takes every record waiting, runs the filters and the formatter, and
    writes them as one text with one flush. Records keep their order. close() (logging's
    exit hook calls it) writes whatever is queued before it returns, so a stopped server's
    last lines are in its log.
    """

    def __init__(self, stream: IO[str] | None = None) -> None:
        super().__init__(stream if stream is not None else sys.stderr)
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self.gather = GATHER_SECONDS

    def handle(self, record: logging.LogRecord) -> bool:
        """Queue `record`; its filters and format run on the writer's thread."""
        if record.args and not all(isinstance(arg, _PLAIN_ARGUMENT) for arg in record.args):
            # An argument could change before the thread formats it: the message now, as
            # the caller saw it.
            record.msg, record.args = record.getMessage(), None
        if self._writer is None:
            self._start()
        self._queue.put(record)
        return True

    def _start(self) -> None:
        with self._start_lock:
            if self._writer is None:
                writer = threading.Thread(target=self._write_all, name="ask_mcp-log", daemon=True)
                writer.start()
                self._writer = writer
                _open_handlers.add(self)

    def _write_all(self) -> None:
        waiting = self._queue
        while True:
            batch = [waiting.get()]
            while not waiting.empty():
                batch.append(waiting.get_nowait())
            stop = _STOP in batch
            flushed = [each for each in batch if isinstance(each, threading.Event)]
            records = [each for each in batch if isinstance(each, logging.LogRecord)]
            lines = []
            for record in records:
                try:
                    if self.filter(record):
                        lines.append(self.format(record) + self.terminator)
                except Exception:
                    self.handleError(record)
            if lines:
                try:
                    self.stream.write("".join(lines))
                    self.stream.flush()
                except Exception:
                    self.handleError(records[-1])
            for each in flushed:
                each.set()
            if stop:
                return
            time.sleep(self.gather)  # the records of the next 20 ms come as one batch

    def flush(self) -> None:
        """Return once every record handled before this call is written (a bounded wait)."""
        writer = self._writer
        if writer is None or not writer.is_alive() or writer is threading.current_thread():
            super().flush()
            return
        written = threading.Event()
        self._queue.put(written)
        written.wait(_FLUSH_BOUND)

    def close(self) -> None:
        """Write what is queued, stop the thread, then close as a stream handler does."""
        writer = self._writer
        if writer is not None and writer.is_alive() and writer is not threading.current_thread():
            self._queue.put(_STOP)
            writer.join(timeout=_FLUSH_BOUND)
        self._writer = None
        super().close()


_open_handlers: weakref.WeakSet[BackgroundStreamHandler] = weakref.WeakSet()


@atexit.register
def _write_queued() -> None:
    # logging's own exit hook closes only the handlers it still holds; a handler dropped by a
    # later dictConfig keeps its thread (a daemon) and its queue until here.
    for handler in list(_open_handlers):
        handler.close()
