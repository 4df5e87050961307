"""The log formats: one JSON object per record, and the filter masking what must never be logged."""

from __future__ import annotations

import io
import json
import logging
import threading

from ask_mcp.ops.logs import (
    MASKED,
    BackgroundStreamHandler,
    JsonFormatter,
    PlainFormatter,
    SecretsFilter,
    escaped,
    mask,
)


def _record(message: str, *args: object, **extra: object) -> logging.LogRecord:
    record = logging.LogRecord("ask_mcp.test", logging.INFO, __file__, 1, message, args, None)
    for name, value in extra.items():
        setattr(record, name, value)
    return record


def test_a_json_line_holds_the_message_and_the_extra_fields() -> None:
    line = JsonFormatter().format(
        _record("%s done", "tools/call", method="tools/call", duration_ms=1.5)
    )
    entry = json.loads(line)
    assert "\n" not in line
    assert entry["message"] == "tools/call done"
    assert entry["logger"] == "ask_mcp.test" and entry["level"] == "INFO"
    assert entry["method"] == "tools/call" and entry["duration_ms"] == 1.5


def test_a_traceback_stays_inside_its_one_line() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        record = _record("failed")
        record.exc_info = sys.exc_info()
    line = JsonFormatter().format(record)
    assert len(line.splitlines()) == 1
    assert "ValueError: boom" in json.loads(line)["traceback"]


def test_tokens_and_sealed_states_are_masked_wherever_they_slip_in() -> None:
    token = "askmcp_" + "A1b2" * 11
    state = "x" * 60 + "." + "y" * 43
    text = f"header was 'Authorization: Bearer {token}' and state {state}"
    masked = mask(text)
    assert token not in masked and state not in masked
    assert masked.count(MASKED) >= 2
    record = _record("retry with %s failed", state)
    assert SecretsFilter().filter(record)
    assert state not in record.getMessage()
    assert (
        mask("tools/call user_ask by user:1: ok in 2.0 ms")
        == "tools/call user_ask by user:1: ok in 2.0 ms"
    )


def test_control_characters_are_escaped_so_a_record_is_one_line_in_either_format() -> None:
    # A tool name an agent sent with a newline wrote a second, forged request line.
    name = "probe\nFORGED INFO ask_mcp.requests: ok\r\u2028\x1b[2K\x85"
    record = _record("%s by %s", name, "anonymous", tool=name)
    plain = PlainFormatter().format(record)
    assert len(plain.splitlines()) == 1 and plain.isprintable()
    assert plain.endswith(
        "probe\\nFORGED INFO ask_mcp.requests: ok\\r\\u2028\\u001b[2K\\u0085 by anonymous"
    )
    line = JsonFormatter().format(record)
    assert len(line.splitlines()) == 1 and line.isprintable()
    assert json.loads(line)["tool"] == name  # the JSON still reads back as what was sent
    assert escaped("tools/call user_ask") == "tools/call user_ask"


def test_a_traceback_keeps_its_lines_in_the_plain_format() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        record = _record("failed\nforged")
        record.exc_info = sys.exc_info()
    lines = PlainFormatter().format(record).splitlines()
    assert lines[0].endswith("failed\\nforged") and lines[-1] == "ValueError: boom"


def _handler_with(stream: io.StringIO) -> BackgroundStreamHandler:
    handler = BackgroundStreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(name)s %(message)s"))
    handler.addFilter(SecretsFilter())
    return handler


def test_the_console_handler_writes_on_its_own_thread_in_order_masked() -> None:
    stream = io.StringIO()
    handler = _handler_with(stream)
    writers: set[str] = set()
    formatter = handler.formatter
    assert formatter is not None

    class Noting(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            writers.add(threading.current_thread().name)
            return formatter.format(record)

    handler.setFormatter(Noting())
    token = "askmcp_" + "Z9y8" * 11
    try:
        for n in range(200):
            handler.handle(_record("line %d of %s", n, token if n == 7 else "-"))
        handler.flush()  # returns once everything handled before it is written
        lines = stream.getvalue().splitlines()
        assert lines == [
            f"ask_mcp.test line {n} of {MASKED if n == 7 else '-'}" for n in range(200)
        ]
        assert writers == {"ask_mcp-log"}, "formatted off the caller's thread"
    finally:
        handler.close()


def test_a_mutable_argument_is_logged_as_it_was_and_close_writes_what_is_queued() -> None:
    stream = io.StringIO()
    handler = _handler_with(stream)
    shown = ["before"]
    handler.handle(_record("list %s", shown))
    shown.append("after")
    handler.handle(_record("last"))
    handler.close()
    assert stream.getvalue().splitlines() == ["ask_mcp.test list ['before']", "ask_mcp.test last"]
