"""The one cursor codec: every paginated page and endpoint hands out and takes these.

A cursor is the position of the last item shown, signed with SECRET_KEY
(`django.core.signing`) under a salt naming the query it pages (`timeline`,
`replies:<comment id>`, `inbox:<user id>`...). So a client can neither forge a
position (which would reach DynamoDB as a key) nor replay one cursor on another
list or another user's inbox; an old one expires after CURSOR_MAX_AGE seconds.
Every refusal is the same 400 naming the `cursor` field.

A cursor holds only the sort-key values of the last item (never a DynamoDB key as the
SDK spells it): `cursor_fields` checks each against the pattern the list issues, and
the list rebuilds its key from them. So even a signed cursor of the wrong shape (from
an older version of the code, or a leaked key) is a 400, never a key DynamoDB refuses.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, TypeVar

from django.conf import settings
from django.core import signing
from django.utils.translation import gettext

from project.errors import ApplicationError

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.http import HttpRequest

CURSOR_FIELD = "cursor"

_Page = TypeVar("_Page")


class InvalidCursor(ApplicationError):
    code = "invalid_cursor"

    def __init__(self, message: str = "Invalid or expired cursor: start again from the first page."):
        super().__init__(message, field=CURSOR_FIELD)


def _salt(query: str) -> str:
    return f"project.dynamo.cursors:{query}"


def cursor_encode(payload: Any, *, query: str) -> str:
    """A signed cursor for `payload` (any JSON value) on the list `query` names."""
    return signing.dumps(payload, salt=_salt(query), compress=True)


def cursor_decode(cursor: object, *, query: str) -> Any:
    """The payload of a cursor this server handed out for `query`, or InvalidCursor (400).

    The caller still checks the payload's shape: a cursor signed by an older
    version of the code may hold another one.
    """
    if not isinstance(cursor, str) or len(cursor) > 2000:
        raise InvalidCursor()
    try:
        return signing.loads(cursor, salt=_salt(query), max_age=settings.CURSOR_MAX_AGE)
    except (signing.BadSignature, ValueError, TypeError, UnicodeDecodeError, OverflowError):
        raise InvalidCursor() from None


# What the lists issue, checked on the way back in.
ISO_AT = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z"  # project.clock's ISO form
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
HEX_ID = r"[0-9a-f]{32}"


def cursor_fields(cursor: str, *, query: str, fields: dict[str, str]) -> dict[str, str]:
    """The fields of a cursor for `query` that hold exactly `fields` (name -> regular
    expression each value must match in full, as strings), or InvalidCursor (400)."""
    payload = cursor_decode(cursor, query=query)
    if not isinstance(payload, dict) or set(payload) != set(fields):
        raise InvalidCursor()
    for name, pattern in fields.items():
        value = payload[name]
        if not isinstance(value, str) or not re.fullmatch(pattern, value, flags=re.ASCII):
            raise InvalidCursor()
    return payload


def page_or_first(request: HttpRequest, fetch: Callable[..., _Page]) -> _Page:
    """`fetch(cursor=...)` with the page's `?cursor=`; a forged or expired one shows the first page.

    For HTML pages: a user who followed an old link expects the list, not an error,
    so the page says why it starts over.
    """
    from django.contrib import messages

    cursor = request.GET.get(CURSOR_FIELD) or None
    try:
        return fetch(cursor=cursor)
    except InvalidCursor:
        messages.warning(request, gettext("That page link was invalid or has expired; showing the first page."))
        return fetch(cursor=None)
