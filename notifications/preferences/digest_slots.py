"""Where a digest reader is listed in the `digest` index: by the quarter hour of UTC their local
digest hour falls on, so the quarter-hourly digest pass reads only the readers who may be due.

A reader's slot is their digest hour in their time zone at the zone's offset on a fixed
reference day (15 January 2026), as a UTC time of day (`daily#23:00` for 08:00 in Tokyo).
Their digest is due at the hour at the offset of the day it is due on, which differs from the
reference offset by the zone's daylight-saving shift (an hour in most zones, half an hour on
Lord Howe Island, two at Troll) or by a change of the zone's rules since. So a pass at the
quarter hour T reads the slots T + d for each difference d some zone has around T (three
hours either side, so that an hour the clocks skip or repeat, taken at the offset before the
change, is found): two or three slots a pass, whatever the number of readers.

The reader's zone and hour live in their user row; the slot is written with the digest choice
(notifications/preferences/services.py) and again when they change their zone or hour
(notifications/preferences/signals.py). A slot left stale (the site's TIME_ZONE or
NOTIFY_DIGEST_HOUR changed, or a process died between the two writes) is put right by the
pass that reads every slot (the first after a gap, and one a day): mail/digest.py.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from django.conf import settings

REFERENCE_DAY = datetime(2026, 1, 15, 12, 0, tzinfo=UTC)
SLOTS_A_DAY = 96  # quarter hours
LEGACY_PARTITIONS = 4  # `daily#0`..`daily#3`: how readers were listed before slots (read by the full pass)
AROUND = timedelta(hours=3)


def reader_zone(name: str) -> ZoneInfo:
    """A person's time zone; the site's TIME_ZONE when they chose none (or it is gone from tzdata)."""
    try:
        return ZoneInfo(name or settings.TIME_ZONE)
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo(settings.TIME_ZONE)


def _minutes(delta: timedelta | None) -> int:
    return int((delta or timedelta(0)).total_seconds() // 60)


def slot_name(minute_of_day: int) -> str:
    minute_of_day %= 24 * 60
    return f"{minute_of_day // 60:02d}:{minute_of_day % 60:02d}"


def digest_slot(*, time_zone: str, hour: int | None) -> str:
    """The reader's slot (`23:00`): their digest hour (NOTIFY_DIGEST_HOUR when None) in their
    zone (TIME_ZONE when empty) at the zone's offset on the reference day, in UTC."""
    zone = reader_zone(time_zone)
    hour = int(settings.NOTIFY_DIGEST_HOUR) if hour is None else hour
    offset = _minutes(REFERENCE_DAY.astimezone(zone).utcoffset())
    return slot_name(hour * 60 - offset)


def digest_key(*, digest: str, slot: str) -> str:
    """The `digest` index's partition key of a reader: `daily#23:00`."""
    return f"{digest}#{slot}"


@functools.lru_cache(maxsize=8)
def _zones() -> tuple[ZoneInfo, ...]:
    return tuple(ZoneInfo(name) for name in sorted(available_timezones()))


@functools.lru_cache(maxsize=1)
def _reference_offsets() -> tuple[int, ...]:
    return tuple(_minutes(REFERENCE_DAY.astimezone(zone).utcoffset()) for zone in _zones())


def shifts_around(at: datetime) -> list[int]:
    """The differences (minutes) between a zone's offset around `at` and on the reference day."""
    found = {0}
    for moment in (at - AROUND, at, at + AROUND):
        for zone, reference in zip(_zones(), _reference_offsets(), strict=True):
            found.add(_minutes(moment.astimezone(zone).utcoffset()) - reference)
    return sorted(found)


def due_slots(slot_start: datetime) -> list[str]:
    """The slots that hold every reader whose digest may be due at the quarter hour `slot_start`."""
    minute = slot_start.hour * 60 + slot_start.minute
    return sorted({slot_name(minute + shift) for shift in shifts_around(slot_start)})


def all_slots() -> list[str]:
    return [slot_name(quarter * 15) for quarter in range(SLOTS_A_DAY)]
