"""`iso_datetime`: an ISO 8601 string (as the DynamoDB items store times) as a datetime for `date`/`naturaltime`."""

from __future__ import annotations

from datetime import UTC, datetime

from django import template

register = template.Library()


@register.filter
def iso_datetime(value):
    """A datetime for an ISO string ("Z" or an offset; naive means UTC); anything else unchanged."""
    if not isinstance(value, str) or not value:
        return value
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
