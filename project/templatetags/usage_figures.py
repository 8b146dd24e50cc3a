"""Figures of the admin System page's usage tables: dollars to three significant digits."""

from __future__ import annotations

import math

from django import template

register = template.Library()


@register.filter
def dollars(value: float | None) -> str:
    """`$12.34`, `$0.00123` (three significant digits under a dollar), `$0`; `-` for None."""
    if value is None:
        return "-"
    if value == 0:
        return "$0"
    if abs(value) >= 1:
        return f"${value:,.2f}"
    digits = 2 - math.floor(math.log10(abs(value)))
    return f"${value:.{digits}f}"


@register.filter
def units(value: float) -> str:
    """Capacity units: whole above 100, one decimal below."""
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


@register.filter
def whole(value: int) -> str:
    """`24,000`."""
    return f"{value:,}"
