"""The dashboard's charts, drawn on the server as inline SVG: no script, no CDN; knows the numbers it is given, not where they came from.

Each function takes plain numbers (:mod:`ask_mcp.records.stats` computes them) and returns safe
markup: every label is escaped, every number formatted here. Each bar and point carries a
`<title>`, so hovering shows its value, and each chart an `aria-label` saying what it shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from ask_mcp.records.stats import OUTCOMES, Day, TokenRates

COLOURS: Final = {
    "accepted": "#2e7d32",
    "declined": "#ef6c00",
    "cancelled": "#8d6e63",
    "expired": "#c62828",
    "withdrawn": "#90a4ae",
    "pending": "#1565c0",
    "median": "#1565c0",
    "p90": "#ef6c00",
}
"""One colour per series; the outcomes' follow the inbox's status badges."""
WIDTH: Final = 720
HEIGHT: Final = 220
LEFT: Final = 64
"""Room for the y axis labels."""
BOTTOM: Final = 28
"""Room for the day labels."""


def seconds_text(seconds: float) -> str:
    """A duration as a person reads it: 42 s, 3.5 min, 1.2 h."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def _svg(label: str, body: list[str], height: int = HEIGHT) -> SafeString:
    return mark_safe(
        f'<svg class="chart" role="img" aria-label="{escape(label)}" viewBox="0 0 {WIDTH} '
        f'{height}" width="100%" xmlns="http://www.w3.org/2000/svg" font-size="11" '
        f'font-family="sans-serif">{"".join(body)}</svg>'
    )


def _axis(top: float, unit: str, plot_height: float, format_value: bool = False) -> list[str]:
    parts = []
    for step in range(5):
        value = top * step / 4
        y = HEIGHT - BOTTOM - plot_height * step / 4
        text = seconds_text(value) if format_value else f"{value:g}{unit}"
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - 8}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e0e0e0"/>'
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" fill="#555">{text}</text>'
        )
    return parts


def _day_labels(days: Sequence[Day], slot: float) -> list[str]:
    return [
        f'<text x="{LEFT + slot * i + slot / 2:.1f}" y="{HEIGHT - 10}" text-anchor="middle" '
        f'fill="#555">{day.date:%d %b}</text>'
        for i, day in enumerate(days)
        if len(days) <= 14 or i % 2 == 0
    ]


def _legend(names: Sequence[str], y: float = 12) -> list[str]:
    parts, x = [], LEFT
    for name in names:
        parts.append(
            f'<rect x="{x}" y="{y - 9}" width="10" height="10" fill="{COLOURS[name]}"/>'
            f'<text x="{x + 14}" y="{y}" fill="#333">{escape(name)}</text>'
        )
        x += 24 + 7 * len(name)
    return parts


def asks_per_day(days: Sequence[Day]) -> SafeString:
    """Stacked bars: each day's asks by outcome."""
    plot = HEIGHT - BOTTOM - 24
    top = max([*(day.total for day in days), 1])
    top = max(4, top + (-top % 4))  # four even steps on the axis
    slot = (WIDTH - LEFT - 8) / max(1, len(days))
    body = _axis(top, "", plot)
    for i, day in enumerate(days):
        y = float(HEIGHT - BOTTOM)
        for outcome in OUTCOMES:
            n = day.counts.get(outcome, 0)
            if not n:
                continue
            h = plot * n / top
            y -= h
            body.append(
                f'<rect x="{LEFT + slot * i + slot * 0.15:.1f}" y="{y:.1f}" '
                f'width="{slot * 0.7:.1f}" height="{h:.1f}" fill="{COLOURS[outcome]}">'
                f"<title>{day.date:%d %b}: {n} {outcome}</title></rect>"
            )
    body += _day_labels(days, slot) + _legend(OUTCOMES)
    return _svg("Asks per day by outcome", body)


def time_to_answer(days: Sequence[Day]) -> SafeString:
    """Two lines: each day's median and 90th-percentile time from asking to the reply."""
    plot = HEIGHT - BOTTOM - 24
    values = [v for day in days for v in (day.median, day.p90) if v is not None]
    top = max([*values, 60.0]) * 1.1
    slot = (WIDTH - LEFT - 8) / max(1, len(days))
    body = _axis(top, "", plot, format_value=True)
    for series in ("median", "p90"):
        points = [
            (LEFT + slot * i + slot / 2, HEIGHT - BOTTOM - plot * value / top, day, value)
            for i, day in enumerate(days)
            if (value := getattr(day, series)) is not None
        ]
        if len(points) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y, _, _ in points)
            body.append(
                f'<polyline points="{path}" fill="none" stroke="{COLOURS[series]}" '
                'stroke-width="2"/>'
            )
        body += [
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{COLOURS[series]}">'
            f"<title>{day.date:%d %b}: {series} {seconds_text(value)}</title></circle>"
            for x, y, day, value in points
        ]
    body += _day_labels(days, slot) + _legend(["median", "p90"])
    return _svg("Median and 90th-percentile time to answer, per day", body)


def rates_per_token(tokens: Sequence[TokenRates]) -> SafeString:
    """Paired horizontal bars: each token's decline rate and timeout rate."""
    row = 30
    height = 24 + row * max(1, len(tokens))
    label_width = 220
    span = WIDTH - label_width - 60
    body = _legend(["declined", "expired"])
    for i, token in enumerate(tokens):
        y = 24 + row * i
        body.append(
            f'<text x="{label_width - 8}" y="{y + 15}" text-anchor="end" fill="#333">'
            f"{escape(token.label)} ({token.asks})</text>"
        )
        for j, (name, rate, count) in enumerate(
            (
                ("declined", token.decline_rate, token.declined),
                ("expired", token.timeout_rate, token.expired),
            )
        ):
            w = max(1.0, span * rate)
            body.append(
                f'<rect x="{label_width}" y="{y + 2 + j * 12}" width="{w:.1f}" height="10" '
                f'fill="{COLOURS[name]}"><title>{escape(token.label)}: {count} of {token.asks} '
                f"{name} ({rate:.0%})</title></rect>"
                f'<text x="{label_width + w + 4:.1f}" y="{y + 11 + j * 12}" fill="#555">'
                f"{rate:.0%}</text>"
            )
    if not tokens:
        body.append(f'<text x="{LEFT}" y="40" fill="#555">No asks came with a token yet.</text>')
    return _svg("Decline and timeout rates per token", body, height)
