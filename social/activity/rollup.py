"""The daily rollup: one day of the activity log counted into the relational database.

A day's items are read from its `by_day` partitions (`YYYYMMDD#1..n`), all queried in
parallel (the process's reads tier, project/serving/pools.py), in pages of PAGE_ITEMS,
and streamed: per partition only counters and one entry per distinct user (a bit per
action) are kept, so memory grows with the day's *users*, never with its items. A user's
items are all in one partition (the suffix comes from the user id), so distinct users per action
are the sum of the partitions' distinct counts.

The counts replace the day's rows in one database transaction; a re-run (late items)
or two rollups of one day at once end with the same rows. Of two concurrent rollups the
one that *started* later (read more of the log) wins; the earlier one, committing last,
finds a newer count in place and leaves it.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from concurrent.futures import wait
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction

from project.operations.backlog import Backlog
from project.serving.pools import READS, pool
from social.activity import services as activity_services
from social.activity.models import ActivityDaily, ActivityDay, activity_model
from social.activity.month_tables import activity_table_exists
from social.activity.periods import day_bounds, day_partitions, local_time

logger = logging.getLogger("social.activity")

ACTIVE_USERS = "active_users"
LOOKBACK_DAYS = 2  # the loop makes final the days that ended this long ago, at the latest
PROGRESS_EVERY = 1000
PAGE_ITEMS = 1000


@dataclass
class DayCount:
    """What one day's log holds: per action the count and distinct users, and overall."""

    day: date
    started_at: float
    counts: Counter[str] = field(default_factory=Counter)
    users: Counter[str] = field(default_factory=Counter)
    active_users: int = 0
    items: int = 0


class _Stopped(Exception):
    """`should_stop()` said yes in the middle of a day's count."""


def _count_partition(
    model: Any, partition: str, on_items: Callable[[int], None], should_stop: Callable[[], bool]
) -> tuple[Counter[str], Counter[str], int]:
    """Count one `by_day` partition: per action the items and distinct users, and its users.

    One dict entry per distinct user holds a bit per action they did, so memory is one
    entry per user of the partition, however many items and actions they have.
    """
    counts: Counter[str] = Counter()
    bits: dict[str, int] = {}
    actions_by_user: dict[str, int] = {}
    pending = 0
    if should_stop():
        raise _Stopped
    # Small pages: what is held at once is PAGE_ITEMS items per partition, whatever the day's size.
    for item in model.by_day.query(partition, attributes_to_get=["user_id", "action"], page_size=PAGE_ITEMS):
        counts[item.action] += 1
        bit = bits.setdefault(item.action, 1 << len(bits))
        actions_by_user[item.user_id] = actions_by_user.get(item.user_id, 0) | bit
        pending += 1
        if pending == PROGRESS_EVERY:
            on_items(pending)
            pending = 0
            if should_stop():
                raise _Stopped
    on_items(pending)
    users = Counter({action: sum(1 for mask in actions_by_user.values() if mask & bit) for action, bit in bits.items()})
    return counts, users, len(actions_by_user)


def activity_day_count(
    *,
    day: date,
    now: float | None = None,
    on_items: Callable[[int], None] = lambda n: None,
    should_stop: Callable[[], bool] = lambda: False,
) -> DayCount | None:
    """Count one day of the log (reads only). `now` is recorded as when the read started.

    None when `should_stop()` said yes on the way (asked before each partition and every
    PROGRESS_EVERY items of one): a day's count is abandoned rather than finished, since a big day takes
    longer than a stopping worker may.
    """
    result = DayCount(day=day, started_at=activity_services.clock() if now is None else now)
    model = activity_model(f"{day:%Y%m}")
    if not activity_table_exists(month=f"{day:%Y%m}"):
        return result  # no table, no activity (or the month was archived: keep its rows)
    partitions = day_partitions(day)
    counted = [pool(READS).submit(_count_partition, model, p, on_items, should_stop) for p in partitions]
    wait(counted)  # a stop ends every partition at its next check: none reads on after the count returns
    try:
        for future in counted:
            counts, users, active = future.result()
            result.counts += counts
            result.users += users
            result.active_users += active
    except _Stopped:
        return None
    result.items = sum(result.counts.values())
    return result


def activity_day_store(count: DayCount, *, final: bool) -> bool:
    """Replace the day's rollup rows with `count`, in one database transaction.

    The day's `ActivityDay` row is locked first (SELECT ... FOR UPDATE), so concurrent
    stores of one day run one after the other; a store whose read started before the
    stored one's leaves the newer rows in place (returns False).
    """
    started = datetime.fromtimestamp(count.started_at, tz=UTC)
    with transaction.atomic():
        day, created = ActivityDay.objects.select_for_update().get_or_create(
            date=count.day,
            defaults={"rolled_up_at": started, "active_users": count.active_users, "items": count.items},
        )
        if not created and day.rolled_up_at > started:
            return False
        day.rolled_up_at = started
        day.active_users = count.active_users
        day.items = count.items
        day.final = final
        day.save()
        ActivityDaily.objects.filter(date=count.day).delete()
        ActivityDaily.objects.bulk_create(
            ActivityDaily(date=count.day, action=action, count=count.counts[action], users=count.users[action])
            for action in sorted(count.counts)
        )
    return True


def day_final_at(day: date) -> float:
    """When a day's rollup is final: the day's end plus the grace for late writes."""
    return float(day_bounds(day)[1] + settings.ACTIVITY_ROLLUP_GRACE_SECONDS)


def activity_days_backlog(*, now: float | None = None) -> Backlog:
    """Days that ended (plus the grace) and are not rolled up for good (`rollup_activity`'s
    backlog), and when the oldest of them became final. One small relational SELECT.
    """
    now = activity_services.clock() if now is None else now
    late = [day for day in activity_days_due(now=now) if now >= day_final_at(day)]
    return Backlog(
        label="days not rolled up",
        count=len(late),
        oldest_at=min((day_final_at(day) for day in late), default=None),
    )


def activity_rollup_day(
    *,
    day: date,
    now: float | None = None,
    on_items: Callable[[int], None] = lambda n: None,
    should_stop: Callable[[], bool] = lambda: False,
) -> DayCount | None:
    """Count one day and replace its rows; final if it started after `day_final_at(day)`.

    Twice: the same rows (plus late items, if any came). Concurrently: see the module
    doc. Dies half way: the database transaction is not committed, the old rows stay.
    Stopped half way (`should_stop`, see `activity_day_count`): nothing is written and
    None is returned; the day stays due.
    """
    count = activity_day_count(day=day, now=now, on_items=on_items, should_stop=should_stop)
    if count is None:
        logger.info("activity of %s: count stopped half way; nothing stored", day)
        return None
    activity_day_store(count, final=count.started_at >= day_final_at(day))
    logger.info("activity of %s rolled up: %d items, %d active users", day, count.items, count.active_users)
    return count


def activity_days_due(*, now: float) -> list[date]:
    """Days the loop should (re-)count now: recent days not final yet, each when it has
    ended plus the grace, and until then (today) every ACTIVITY_ROLLUP_TODAY_SECONDS."""
    today = local_time(now).date()
    candidates = [today - timedelta(days=n) for n in range(LOOKBACK_DAYS, -1, -1)]
    known = {row.date: row for row in ActivityDay.objects.filter(date__in=candidates)}
    due = []
    for day in candidates:
        row = known.get(day)
        if row is not None and row.final:
            continue
        ended = now >= day_final_at(day)
        stale = row is None or now - row.rolled_up_at.timestamp() >= settings.ACTIVITY_ROLLUP_TODAY_SECONDS
        if ended or stale:
            due.append(day)
    return due
