"""The inbox's filters: read from a query string (unknown values dropped, text bounded) and written back."""

from __future__ import annotations

from ask_mcp.models import Ask
from ask_mcp.web.listing import CLOSED, MAX_QUERY, Filters


def test_filters_are_read_trimmed_and_bounded_and_unknown_choices_dropped() -> None:
    read = Filters.read(
        {"q": "  deploy  ", "route": "carrier-pigeon", "status": "expired", "asker": "x" * 500}
    )
    assert read == Filters(q="deploy", status="expired", asker="x" * MAX_QUERY)
    assert Filters.read({"route": "url", "status": "maybe"}) == Filters(route="url")


def test_only_chosen_filters_are_active_and_written_back() -> None:
    assert Filters().active is False and Filters().query_string() == ""
    chosen = Filters(q="db migrate", team="ops")
    assert chosen.active is True
    assert chosen.query_string() == "q=db+migrate&team=ops"
    written = dict(
        pair.split("=") for pair in Filters(route="browser", team="ops").query_string().split("&")
    )
    assert Filters.read(written) == Filters(route="browser", team="ops")  # read back as written


def test_each_filter_narrows_the_query_it_names() -> None:
    asks = Ask.objects.all()
    assert Filters().apply(asks).query.where.children == []
    narrowed = str(
        Filters(q="deploy", route="url", status="declined", asker="bea").apply(asks).query
    )
    for column in ("message", "route", "status", "client_name", "principal"):
        assert column in narrowed
    assert "pending" not in CLOSED and set(CLOSED) < set(Ask.Status.values)
