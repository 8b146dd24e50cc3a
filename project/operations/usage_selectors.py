"""What each route cost over the last hour and day, summed over every process's usage tallies.

Read by the admin System page: four eventually consistent Queries of the `usage` table
(project.models.UsageTally), two per window (the hour or day the window starts in, from its
first part, and the current one): one item per process and bucket, so about
processes x (12 slots + 24 hours) items of a few hundred bytes to a few KB.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings
from django.utils.translation import gettext_noop

from project.models import UsageTally
from project.operations.usage import HOUR_SECONDS, SLOT_SECONDS, UNMATCHED, USAGE, WORKER_PREFIX, utc_stamp
from project.operations.usage_people import People

# The titles are translated where they are shown (the System page).
WINDOWS = (("hour", gettext_noop("Last hour"), SLOT_SECONDS, 12), ("day", gettext_noop("Last day"), HOUR_SECONDS, 24))


@dataclass(frozen=True)
class RouteUsage:
    route: str
    area: str
    requests: int
    read_units: float
    write_units: float
    dollars: float
    dollars_per_person: float | None


@dataclass
class WindowUsage:
    key: str  # "hour" or "day"
    title: str
    since: float  # epoch seconds: the window's first bucket's start
    routes: list[RouteUsage] = field(default_factory=list)  # most expensive first
    areas: list[RouteUsage] = field(default_factory=list)  # the routes summed by area
    total: RouteUsage | None = None
    people: int = 0  # distinct signed-in people seen (exact up to 128, estimated past that)
    items: int = 0  # tallies read
    month_dollars: float = 0.0  # the window's dollars at this rate for 30 days


def route_area(route: str) -> str:
    """Where a route belongs on the page's summary: what an operator asks about (in English, translated
    where the page shows it)."""
    if route.startswith(WORKER_PREFIX):
        return gettext_noop("Workers")
    if "live" in route or "unread" in route:
        return gettext_noop("Live updates")
    if "like" in route:
        return gettext_noop("Likes")
    if route.startswith("admin:"):
        return gettext_noop("Admin")
    if route in (UNMATCHED, USAGE) or route.startswith("("):
        return gettext_noop("Other")
    if route.startswith(("api-", "api:")):
        return gettext_noop("API")
    return gettext_noop("Pages")


def dollars(read_units: float, write_units: float) -> float:
    read_price: float = settings.DYNAMODB_PRICE_PER_MILLION_READS
    write_price: float = settings.DYNAMODB_PRICE_PER_MILLION_WRITES
    return (read_units * read_price + write_units * write_price) / 1_000_000


def usage_summary(*, now: float) -> list[WindowUsage]:
    """The last hour (twelve five-minute slots, the current one so far) and the last day
    (24 hours, the current one so far), each route's requests, units and on-demand dollars,
    per active person too."""
    return [_window(key, title, length, count, now=now) for key, title, length, count in WINDOWS]


def _window(key: str, title: str, length: int, count: int, *, now: float) -> WindowUsage:
    current = int(now // length) * length
    since = current - (count - 1) * length
    kind = "slot" if key == "hour" else "hour"
    window = WindowUsage(key=key, title=title, since=since)
    totals: dict[str, list[float]] = {}
    people = People()
    for item in _tallies(kind, since, current):
        window.items += 1
        for route, (requests, read, write) in (item.routes or {}).items():
            found = totals.setdefault(route, [0, 0.0, 0.0])
            found[0] += requests
            found[1] += read
            found[2] += write
        people.merge(People.decode(item.people))
    window.people = people.count()
    window.routes = sorted(
        (
            _row(route, area=route_area(route), figures=figures, people=window.people)
            for route, figures in totals.items()
        ),
        key=lambda row: (-row.dollars, -row.requests, row.route),
    )
    by_area: dict[str, list[float]] = {}
    for row in window.routes:
        found = by_area.setdefault(row.area, [0, 0.0, 0.0])
        found[0] += row.requests
        found[1] += row.read_units
        found[2] += row.write_units
    window.areas = sorted(
        (_row(area, area=area, figures=figures, people=window.people) for area, figures in by_area.items()),
        key=lambda row: -row.dollars,
    )
    everything = [sum(row.requests for row in window.routes), sum(row.read_units for row in window.routes)]
    everything.append(sum(row.write_units for row in window.routes))
    window.total = _row("Everything", area="", figures=everything, people=window.people)
    covered = max(now - since, 60.0)  # the current bucket counts as far as it went
    window.month_dollars = window.total.dollars * 30 * 86400 / covered
    return window


def _row(route: str, *, area: str, figures: list[float], people: int) -> RouteUsage:
    cost = dollars(figures[1], figures[2])
    return RouteUsage(
        route=route,
        area=area,
        requests=int(figures[0]),
        read_units=figures[1],
        write_units=figures[2],
        dollars=cost,
        dollars_per_person=cost / people if people else None,
    )


def _tallies(kind: str, since: int, current: int) -> list[UsageTally]:
    """Every process's tallies of the buckets from `since` to `current` (their starts)."""
    first, last = utc_stamp(since), utc_stamp(current)
    cut = 10 if kind == "slot" else 8  # the partition: an hour of slots, a day of hours
    found: list[UsageTally] = []
    partitions = [first[:cut]] if first[:cut] == last[:cut] else [first[:cut], last[:cut]]
    for number, partition in enumerate(partitions):
        condition = None
        if number == 0:  # from the window's first bucket: "<mm>#..." or "<hh>#..."
            condition = UsageTally.part >= first[cut : cut + 2]
        found.extend(UsageTally.query(f"{kind}#{partition}", range_key_condition=condition))
    return [item for item in found if since <= item.start <= current]
