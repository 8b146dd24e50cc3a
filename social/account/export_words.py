"""What makes the export readable by a person beside its ids: times as ISO 8601 (UTC), the
text of a comment beside its id, a person's name beside their id. Read a page at a time by the
export sections (`social/erasure.py`, `notifications/erasure.py`), so the export stays
streamed; each helper is one read for a page of ids."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from django.contrib.auth import get_user_model

from social.models import Comment

DELETED_ACCOUNT = "deleted account"
HIDDEN_TEXT = "(hidden by the moderators)"
DELETED_TEXT = "(deleted)"


def iso_time(value: Any, *, unit: str = "ms") -> str | None:
    """An instant as ISO 8601 in UTC: epoch milliseconds (`unit="ms"`) or seconds (`"s"`), a
    datetime, or an ISO text already (returned as it is); None for none."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    if isinstance(value, str):
        return value
    seconds = float(value) / (1000 if unit == "ms" else 1)
    return datetime.fromtimestamp(seconds, tz=UTC).isoformat()


def people_names(ids: Iterable[str]) -> dict[str, str]:
    """The name each person is shown by (their display name, else username), by id; an id no
    account holds any more reads "deleted account". One query."""
    wanted = {person for person in ids if person and person.isdigit()}
    found = {str(user.pk): user.shown_name for user in get_user_model().objects.filter(pk__in=[int(i) for i in wanted])}
    return {person: found.get(person, DELETED_ACCOUNT) for person in wanted}


def comment_texts(ids: Iterable[str]) -> dict[str, str]:
    """Each comment's text as others see it now, by id: a hidden one's and a deleted one's say so
    instead. One BatchGetItem per 100 ids, strongly consistent."""
    wanted = list(dict.fromkeys(ids))
    texts = dict.fromkeys(wanted, DELETED_TEXT)
    for start in range(0, len(wanted), 100):
        for comment in Comment.batch_get(wanted[start : start + 100], consistent_read=True):
            if comment.deleted_at:
                continue
            texts[comment.comment_id] = HIDDEN_TEXT if comment.hidden else comment.body
    return texts
