"""The admin's dashboard: the last days' asks drawn as charts, from what :mod:`ask_mcp.records.stats` counts."""

from __future__ import annotations

from typing import Any

from django.contrib.admin import AdminSite
from django.http import HttpRequest
from django.template.response import TemplateResponse

from ask_mcp.admin import charts
from ask_mcp.models import Ask
from ask_mcp.records import stats


def dashboard(request: HttpRequest, site: AdminSite, opts: Any) -> TemplateResponse:
    """Charts of the last days' asks: per day by outcome, time to answer, rates per token; the
    longest waiting and the asks refused by a limit."""
    days = stats.daily()
    median, p90 = stats.answer_times()
    context = {
        **site.each_context(request),
        "opts": opts,
        "title": "Dashboard",
        "days_count": stats.DAYS,
        "total": sum(day.total for day in days),
        "pending": Ask.objects.filter(status=Ask.Status.PENDING).count(),
        "median": charts.seconds_text(median) if median is not None else None,
        "p90": charts.seconds_text(p90) if p90 is not None else None,
        "asks_chart": charts.asks_per_day(days),
        "times_chart": charts.time_to_answer(days),
        "rates_chart": charts.rates_per_token(stats.per_token()),
        "waiting": stats.waiting_longest(),
        "refused": stats.refused(),
    }
    return TemplateResponse(request, "admin/ask_mcp/dashboard.html", context)
