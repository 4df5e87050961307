"""SSE framing: one message per event, an id when given, the priming event and the keepalive comment."""

from __future__ import annotations

from ask_mcp.protocol.sse import KEEPALIVE, event, priming_event


def parse(stream: bytes) -> list[dict[str, str]]:
    """Events as a client reads them: blank-line separated, `field: value` lines, comments skipped."""
    events = []
    for block in stream.split(b"\n\n"):
        fields = {}
        for line in block.decode().splitlines():
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")
        if fields:
            events.append(fields)
    return events


def test_an_event_carries_its_data_on_one_line_with_an_id_only_when_given() -> None:
    body = b'{"jsonrpc":"2.0","id":1,"result":{}}'
    assert event(body) == b"data: " + body + b"\n\n"
    assert parse(event(body, event_id="s1-4")) == [{"id": "s1-4", "data": body.decode()}]


def test_the_priming_event_has_an_id_and_empty_data_and_the_keepalive_is_no_event() -> None:
    stream = priming_event("s1-0") + KEEPALIVE + event(b"{}")
    assert parse(stream) == [{"id": "s1-0", "data": ""}, {"data": "{}"}]
    assert KEEPALIVE.startswith(b":") and KEEPALIVE.endswith(b"\n\n")
