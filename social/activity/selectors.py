"""Reads of the activity log: the daily rollup (staff) and a user's own recent actions."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from project.clock import clock
from project.cursors import InvalidCursor, cursor_encode, cursor_fields
from social.activity.models import ACTIONS, ActivityDaily, ActivityDay, activity_model
from social.activity.tables import (
    activity_table_describe,
    activity_table_exists,
    activity_table_months,
    local_time,
    month_of,
    month_shift,
)

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


# Colour-blind-safe palette (Okabe-Ito), one per series; presentation attributes, not CSS.
SERIES_COLOURS = ["#000000", "#E69F00", "#56B4E9", "#009E73", "#D55E00", "#0072B2", "#CC79A7", "#999999", "#F0E442"]


@dataclass
class ChartSeries:
    name: str
    colour: str
    points: str  # "x,y x,y ..." for an SVG polyline
    total: int


@dataclass
class ActivityChart:
    """An inline SVG line chart, laid out here so the template only places it (no JS, no CDN)."""

    start: date
    end: date
    width: int
    height: int
    y_max: int
    series: list[ChartSeries]
    rows: list[dict]  # per day: date, active users, count per action (the table behind the chart)
    actions: list[str]
    x_labels: list[tuple[float, str]]
    y_labels: list[tuple[float, str]]


def activity_chart(*, days: int, today: date | None = None, width: int = 900, height: int = 300) -> ActivityChart:
    """Daily active users and each action's count over the last `days` days (rollup only)."""
    end = today or local_time(clock.now()).date()
    start = end - timedelta(days=days - 1)
    dates = [start + timedelta(days=n) for n in range(days)]
    per_day: dict[date, dict[str, int]] = {day: {} for day in dates}
    for row in activity_daily(start=start, end=end):
        per_day[row.date][row.action] = row.count
    for row in activity_days(start=start, end=end):
        per_day[row.date]["active users"] = row.active_users
    names = ["active users", *[action for action in ACTIONS if any(action in v for v in per_day.values())]]
    y_max = max([1, *[value for values in per_day.values() for value in values.values()]])
    left, top, bottom = 50, 10, 30
    plot_w, plot_h = width - left - 10, height - top - bottom

    def x(i: int) -> float:
        return round(left + (plot_w * i / max(1, days - 1)), 1)

    def y(value: int) -> float:
        return round(top + plot_h - plot_h * value / y_max, 1)

    series = [
        ChartSeries(
            name=name,
            colour=SERIES_COLOURS[n % len(SERIES_COLOURS)],
            points=" ".join(f"{x(i)},{y(per_day[day].get(name, 0))}" for i, day in enumerate(dates)),
            total=sum(per_day[day].get(name, 0) for day in dates),
        )
        for n, name in enumerate(names)
    ]
    step = max(1, days // 6)
    return ActivityChart(
        start=start,
        end=end,
        width=width,
        height=height,
        y_max=y_max,
        series=series,
        rows=[{"date": day, "values": [per_day[day].get(name, 0) for name in names]} for day in reversed(dates)],
        actions=names,
        x_labels=[(x(i), f"{dates[i]:%m-%d}") for i in range(0, days, step)],
        y_labels=[(y(round(y_max * f)), str(round(y_max * f))) for f in (0, 0.25, 0.5, 0.75, 1)],
    )


# --- a user's own activity ----------------------------------------------------------------


COMMENT_ACTIONS = {"comment", "reply", "like", "unlike", "view"}


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


def _entry(item) -> ActivityEntry:
    millis = int(item.at_key.split("#", 1)[0])
    return ActivityEntry(at=datetime.fromtimestamp(millis / 1000, tz=UTC), action=item.action, object_id=item.object_id)


def activity_of_user(
    *, user_id: str, cursor: str | None = None, limit: int = PAGE_SIZE, now: float | None = None
) -> ActivityPage:
    """The user's own actions of this month and last, newest first, `limit` a page.

    The cursor (project.cursors) is signed, bound to this user's list, expires after
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
    found: list[tuple[str, object]] = []
    for month in months:
        if not activity_table_exists(month=month):
            before = None
            continue
        model = activity_model(month)
        condition = model.at_key < before if before else None
        for item in model.query(user_id, condition, scan_index_forward=False, limit=limit + 1 - len(found)):
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
