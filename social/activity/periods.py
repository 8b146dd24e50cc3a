"""Months and days of the activity log, in the site's `TIME_ZONE`; a day's `by_day` partitions.

An action at 23:59:59.999 on the last day of November (local time) is in November's
table and November 30th's `by_day` partitions, whatever UTC says.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings


def site_zone() -> ZoneInfo:
    return ZoneInfo(settings.TIME_ZONE)


def local_time(at: float) -> datetime:
    """Epoch seconds as an aware datetime in the site's time zone."""
    return datetime.fromtimestamp(at, tz=UTC).astimezone(site_zone())


def month_of(at: float) -> str:
    """`YYYYMM` of the site-local month `at` (epoch seconds) falls in."""
    return local_time(at).strftime("%Y%m")


def month_shift(month: str, months: int) -> str:
    index = int(month[:4]) * 12 + int(month[4:]) - 1 + months
    return f"{index // 12:04d}{index % 12 + 1:02d}"


def month_days(month: str) -> list[date]:
    first = date(int(month[:4]), int(month[4:]), 1)
    following = month_shift(month, 1)
    last = date(int(following[:4]), int(following[4:]), 1) - timedelta(days=1)
    return [first + timedelta(days=n) for n in range((last - first).days + 1)]


def day_bounds(day: date) -> tuple[float, float]:
    """Epoch seconds of the start of `day` and of the next day, in the site's time zone."""
    zone = site_zone()
    start = datetime(day.year, day.month, day.day, tzinfo=zone)
    following = day + timedelta(days=1)
    end = datetime(following.year, following.month, following.day, tzinfo=zone)
    return start.timestamp(), end.timestamp()


def day_shard(user_id: str) -> int:
    """The `by_day` write shard of a user, 1..ACTIVITY_DAY_SHARDS, (docs/explanation/activity-log.md
    "Activity log"): the sum of the id's character codes, modulo. Stable (a user's items of a day are all in one
    partition) and even for Django's sequential ids (bench/activity.py measures it)."""
    return sum(map(ord, user_id)) % settings.ACTIVITY_DAY_SHARDS + 1


def day_key(*, day: date, user_id: str) -> str:
    return f"{day:%Y%m%d}#{day_shard(user_id)}"


def day_partitions(day: date) -> list[str]:
    return [f"{day:%Y%m%d}#{n}" for n in range(1, settings.ACTIVITY_DAY_SHARDS + 1)]
