"""Reads of the activity log: the daily rollup (staff) and a user's own recent actions."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from project.clock import clock
from project.dynamo.cursors import InvalidCursor, cursor_encode, cursor_fields
from social.activity.models import ACTIONS, ActivityDaily, ActivityDay, activity_model
from social.activity.month_tables import activity_table_describe, activity_table_exists, activity_table_months
from social.activity.periods import local_time, month_of, month_shift

if TYPE_CHECKING:
    from social.activity.models import ActivityItem

PAGE_SIZE = 20
PAGE_SIZE_MAX = 100
ACTIVITY_CURSOR = {"month": r"\d{6}", "before": r"\d{13}#[0-9a-f]{12}"}  # at_key: epoch ms#suffix

# --- the rollup ----------------------------------------------------------------------


def activity_daily(*, start: date, end: date, action: str | None = None) -> list[ActivityDaily]:
    """Rolled-up rows from `start` to `end` (inclusive), by date then action."""
    rows = ActivityDaily.objects.filter(date__gte=start, date__lte=end)
    if action:
        rows = rows.filter(action=action)
    return list(rows.order_by("date", "action"))


def activity_days(*, start: date, end: date) -> list[ActivityDay]:
    return list(ActivityDay.objects.filter(date__gte=start, date__lte=end).order_by("date"))


@dataclass
class ActivityTableStatus:
    month: str
    name: str
    status: str
    table_class: str
    item_count: int | None  # DynamoDB's estimate, refreshed about every six hours


def activity_tables_status() -> list[ActivityTableStatus]:
    """Every month's table under the current prefix, newest first, as DescribeTable sees it."""
    found = []
    for month in reversed(activity_table_months()):
        description = activity_table_describe(month=month) or {}
        found.append(
            ActivityTableStatus(
                month=month,
                name=description.get("TableName", ""),
                status=description.get("TableStatus", "MISSING"),
                table_class=description.get("TableClassSummary", {}).get("TableClass", "STANDARD"),
                item_count=description.get("ItemCount"),
            )
        )
    return found


def round_ticks(maximum: int, *, most: int = 5) -> list[int]:
    """Axis ticks at round steps (1, 2 or 5 times a power of ten) from 0 to at least
    `maximum`, at most `most` of them: 0/5/10/15/20/25 for 19, not 0/6/12/19/25."""
    maximum = max(1, maximum)
    magnitude = 1
    while True:
        for factor in (1, 2, 5):
            step = factor * magnitude
            top = -(-maximum // step) * step
            if top // step + 1 <= most:
                return list(range(0, top + step, step))
        magnitude *= 10


@dataclass
class ChartSeries:
    """One small chart: a series on its own round scale (small multiples, not nine lines in one)."""

    name: str
    points: str  # "x,y x,y ..." for an SVG polyline
    total: int
    y_labels: list[tuple[float, str]]


@dataclass
class ActivityChart:
    """Inline SVG charts, one per series, laid out here so the template only places them (no JS, no CDN)."""

    start: date
    end: date
    width: int
    height: int
    series: list[ChartSeries]
    rows: list[dict[str, Any]]  # per day: date, active users, count per action (the table behind the chart)
    actions: list[str]
    x_labels: list[tuple[float, str]]
    plot_right: int  # where the grid lines end


def activity_chart(*, days: int, today: date | None = None, width: int = 440, height: int = 150) -> ActivityChart:
    """Daily active users and each action's count over the last `days` days (rollup only),
    one small chart each, each on its own round scale."""
    end = today or local_time(clock.now()).date()
    start = end - timedelta(days=days - 1)
    dates = [start + timedelta(days=n) for n in range(days)]
    per_day: dict[date, dict[str, int]] = {day: {} for day in dates}
    for row in activity_daily(start=start, end=end):
        per_day[row.date][row.action] = row.count
    for day_row in activity_days(start=start, end=end):
        per_day[day_row.date]["active users"] = day_row.active_users
    names = ["active users", *[action for action in ACTIONS if any(action in v for v in per_day.values())]]
    left, right, top, bottom = 44, 10, 8, 24
    plot_w, plot_h = width - left - right, height - top - bottom

    def x(i: int) -> float:
        return round(left + (plot_w * i / max(1, days - 1)), 1)

    def panel(name: str) -> ChartSeries:
        values = [per_day[day].get(name, 0) for day in dates]
        ticks = round_ticks(max(values))

        def y(value: int) -> float:
            return round(top + plot_h - plot_h * value / ticks[-1], 1)

        return ChartSeries(
            name=name,
            points=" ".join(f"{x(i)},{y(value)}" for i, value in enumerate(values)),
            total=sum(values),
            y_labels=[(y(tick), f"{tick:,}") for tick in ticks],
        )

    step = max(1, days // 4)
    return ActivityChart(
        start=start,
        end=end,
        width=width,
        height=height,
        series=[panel(name) for name in names],
        rows=[{"date": day, "values": [per_day[day].get(name, 0) for name in names]} for day in reversed(dates)],
        actions=names,
        x_labels=[(x(i), f"{dates[i]:%d %b}") for i in range(0, days, step)],
        plot_right=width - right,
    )


# --- a user's own activity ----------------------------------------------------------------


COMMENT_ACTIONS = {"comment", "reply", "edit", "delete", "like", "unlike", "view"}


@dataclass
class ActivityEntry:
    at: datetime
    action: str
    object_id: str | None

    @property
    def comment_id(self) -> str | None:
        """The comment the action was on, if it was on one."""
        return self.object_id if self.action in COMMENT_ACTIONS else None


@dataclass
class ActivityPage:
    results: list[ActivityEntry]
    next_cursor: str | None


def _entry(item: ActivityItem) -> ActivityEntry:
    millis = int(item.at_key.split("#", 1)[0])
    return ActivityEntry(at=datetime.fromtimestamp(millis / 1000, tz=UTC), action=item.action, object_id=item.object_id)


def activity_of_user(
    *, user_id: str, cursor: str | None = None, limit: int = PAGE_SIZE, now: float | None = None
) -> ActivityPage:
    """The user's own actions of this month and last, newest first, `limit` a page.

    The cursor (project.dynamo.cursors) is signed, bound to this user's list, expires after
    CURSOR_MAX_AGE like every cursor, and holds the month and the last key shown, each
    checked against the form they are issued in.
    """
    current = month_of(clock.now() if now is None else now)
    months = [current, month_shift(current, -1)]
    before = None
    if cursor:
        position = cursor_fields(cursor, query=f"activity:{user_id}", fields=ACTIVITY_CURSOR)
        if position["month"] not in months:
            raise InvalidCursor()
        months = months[months.index(position["month"]) :]
        before = position["before"]
    found: list[tuple[str, ActivityItem]] = []
    for month in months:
        if not activity_table_exists(month=month):
            before = None
            continue
        model = activity_model(month)
        condition = model.at_key < before if before else None
        # Strongly consistent: it is the person's own list, and the action they just took (a
        # comment's line is in its transaction) must be on it (1 RCU a page of 20 small lines).
        items = model.query(
            user_id, condition, scan_index_forward=False, limit=limit + 1 - len(found), consistent_read=True
        )
        for item in items:
            found.append((month, item))
        if len(found) > limit:
            break
        before = None
    more = len(found) > limit
    found = found[:limit]
    next_cursor = None
    if more:
        month, last = found[-1]
        next_cursor = cursor_encode({"month": month, "before": last.at_key}, query=f"activity:{user_id}")
    return ActivityPage([_entry(item) for _, item in found], next_cursor)
