"""`iso_datetime`: an ISO 8601 string (as the DynamoDB items store times) as a datetime for `date`/`naturaltime`."""

from __future__ import annotations

from django import template

from project.clock import parse_iso

register = template.Library()


@register.filter
def iso_datetime(value: object) -> object:
    """A datetime for an ISO string ("Z" or an offset; naive means UTC); anything else unchanged."""
    if not isinstance(value, str) or not value:
        return value
    try:
        return parse_iso(value)
    except ValueError:
        return value
