"""Quiet hours: no e-mail between a person's `quiet_start` and `quiet_end` (local hours, in their
time zone). A notification mail that falls due in them is not sent (its ledger line says
`skipped`, why, and when); instead one roll-up mail is queued for the end of the quiet hours,
listing what is still unread then: one message, never a burst. Mails about the account's
safety are not held. The hours come with the recipient's address (notifications.mail.checks):
no extra read per mail.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings

from notifications.mail.checks import QUIET, Recipient
from notifications.mail.queue import mail_queue_item
from notifications.models import MailQueue
from project.dynamo.transactions import conditional_write

__all__ = ["QUIET", "quiet_rollup_queue", "quiet_until", "reader_zone"]


def reader_zone(name: str) -> ZoneInfo:
    """A person's time zone; the site's TIME_ZONE when they chose none (or it is gone from tzdata)."""
    try:
        return ZoneInfo(name or settings.TIME_ZONE)
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo(settings.TIME_ZONE)


def quiet_until(*, recipient: Recipient, now: datetime) -> datetime | None:
    """When the recipient's quiet hours that `now` falls in end (UTC); None outside them (or none set).

    Hours may wrap midnight (22 to 7). An end hour the clocks skip is taken at the offset
    before the change, as the digest's hour is.
    """
    start, end = recipient.quiet_start, recipient.quiet_end
    if start is None or end is None or start == end:
        return None
    zone = reader_zone(recipient.time_zone)
    local = now.astimezone(zone)
    hour = local.hour
    inside = start <= hour < end if start < end else (hour >= start or hour < end)
    if not inside:
        return None
    day = local.date() if (start < end or hour < end) else local.date() + timedelta(days=1)
    return datetime(day.year, day.month, day.day, end, tzinfo=zone).astimezone(UTC)


def quiet_rollup_queue(*, user_id: str, until: datetime) -> str:
    """Queue the one roll-up mail of the quiet hours ending `until`; answers its source.

    A conditional put (the item must not exist): however many mails fall in the quiet hours,
    run twice or concurrently, one roll-up is queued. Dies before the put: the next mail that
    falls in the same hours queues it.
    """
    source = f"{QUIET}:{until.strftime('%Y-%m-%dT%H:%M')}"
    item = mail_queue_item(
        user_id=user_id, kind=QUIET, source=source, entry_id="", due_ms=int(until.timestamp() * 1000)
    )
    conditional_write(lambda: item.save(condition=MailQueue.mail_id.does_not_exist()), what="quiet roll-up put")
    return source
