"""A person's language, time zone, quiet hours and digest hour: the values allowed, and setting them.

They live in the person's user row, beside the e-mail address, so every page and every mail
reads them with what it reads already (the session's user, the recipient's address). Empty
values mean "what the browser says" (Accept-Language, the `tz` cookie) and then the site's.
"""

from __future__ import annotations

import functools
import zoneinfo
from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _

from project.errors import ApplicationError
from social.models import User

HOUR_FIELDS = ("quiet_start", "quiet_end", "digest_hour")
FIELDS = ("locale", "time_zone", *HOUR_FIELDS)


def language_codes() -> tuple[str, ...]:
    return tuple(code for code, _name in settings.LANGUAGES)


@functools.cache
def zone_names() -> frozenset[str]:
    """Every IANA time zone name the time zone database knows (read once per process)."""
    return frozenset(zoneinfo.available_timezones())


def locale_check(value: Any) -> str:
    if value == "":
        return ""
    if not isinstance(value, str) or value not in language_codes():
        raise ApplicationError(
            _("Choose one of: %(codes)s (or empty: your browser's).") % {"codes": ", ".join(language_codes())},
            field="locale",
        )
    return value


def time_zone_check(value: Any) -> str:
    if value == "":
        return ""
    if not isinstance(value, str) or value not in zone_names():
        raise ApplicationError(
            _("Give a time zone's IANA name, like Europe/Warsaw or Asia/Tokyo (or empty: your browser's)."),
            field="time_zone",
        )
    return value


def hour_check(value: Any, *, field: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 23:
        raise ApplicationError(_("An hour from 0 to 23, or null."), field=field)
    return value


def language_changes(data: dict[str, Any]) -> dict[str, Any]:
    """The columns a request sets, checked; an ApplicationError naming the first bad field."""
    changes: dict[str, Any] = {}
    if "locale" in data:
        changes["locale"] = locale_check(data["locale"])
    if "time_zone" in data:
        changes["time_zone"] = time_zone_check(data["time_zone"])
    for field in HOUR_FIELDS:
        if field in data:
            changes[field] = hour_check(data[field], field=field)
    return changes


def user_language_set(*, user: User, changes: dict[str, Any]) -> User:
    """Set the person's language, time zone, quiet hours or digest hour (`language_changes`' output).

    One UPDATE of the columns sent: twice, the same values again; two at once, each column's
    later write stands (a column not sent is not rewritten). Dies half way: the UPDATE is
    applied whole or not at all. Texts already in the inbox follow at once: they are worded
    when read, in the reader's language.
    """
    if not changes:
        return user
    for name, value in changes.items():
        setattr(user, name, value)
    user.save(update_fields=list(changes))
    return user
