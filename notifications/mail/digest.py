"""The daily and weekly digests: each reader's unread inbox, mailed once per period.

A period is the reader's local day (`daily:2026-11-25`) or ISO week (`weekly:2026-W48`) in
their time zone (else TIME_ZONE); its digest is due at their digest hour (else
NOTIFY_DIGEST_HOUR), local time, on the period's first day. The day the clocks change keeps
one digest: an hour the clocks skip is taken at the offset before the change (02:30 on a
spring-forward night leaves at 03:30), an hour that happens twice at its first occurrence,
and the ledger source names the local day, so no day has two and none has none.

Readers come from the `digest` index of `preferences`, listed by the quarter hour of UTC their
local digest hour falls on (notifications/preferences/digest_slots.py): a pass reads the two or
three slots that may be due now, not every reader, and their user rows (one query per 500:
zone, hour, language and address together). Each
reader's digest is one mail through `mail_deliver`, with the ledger source `digest:<period>`:
the same claim that makes a notification mail go once makes a digest go once per period,
whatever runs twice or dies. Every due time is a whole local hour, which in any zone falls on
a quarter hour of UTC: a pass that handled every reader marks its quarter hour (a ledger line
of the pseudo-user `~digest`), so the rest of that quarter hour reads nothing more, and the
next quarter hour's pass, seeing the previous one done, sends only to readers due since.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings
from django.core.mail.backends.base import BaseEmailBackend
from django.utils import translation

from notifications.mail.checks import About, Recipient, Verdict, recipient_get, recipients_get, unread_items
from notifications.mail.content import digest_message
from notifications.mail.quiet import reader_zone
from notifications.mail.selectors import EMAIL, SENT, SKIPPED, ledger_get
from notifications.mail.services import ALREADY, POSTPONED, ledger_put, mail_deliver
from notifications.preferences.digest_slots import digest_key, digest_slot, due_slots
from notifications.preferences.selectors import digest_readers, preferences_get
from notifications.preferences.services import digest_rekey
from project.clock import clock

logger = logging.getLogger(__name__)

DIGESTS = ("daily", "weekly")
DIGEST_ITEMS = 20  # unread items listed in a digest; the rest are counted
RUN_MARKER_USER = "~digest"  # not a user id (those are numbers): the ledger's run markers
READERS_PER_QUERY = 500  # user rows read per query


SLOT = timedelta(minutes=15)


@dataclass(frozen=True)
class DigestPeriod:
    digest: str  # daily, weekly
    name: str  # 2026-11-25, 2026-W48 (local)
    due_at: datetime  # UTC

    @property
    def source(self) -> str:
        return f"digest:{self.digest}:{self.name}"


def digest_period(*, digest: str, now: datetime, zone: ZoneInfo | None = None, hour: int | None = None) -> DigestPeriod:
    """The period `now` falls in for a reader in `zone` (the site's TIME_ZONE when None) whose
    digest hour is `hour` (NOTIFY_DIGEST_HOUR when None), and when its digest is due (UTC)."""
    zone = zone or reader_zone("")
    hour = int(settings.NOTIFY_DIGEST_HOUR) if hour is None else hour
    today = now.astimezone(zone).date()
    if digest == "daily":
        first, name = today, today.isoformat()
    else:
        year, week, weekday = today.isocalendar()
        first, name = today - timedelta(days=weekday - 1), f"{year}-W{week:02d}"
    # fold=0: an hour the clocks skip takes the offset before the change, one they repeat its first time.
    due = datetime(first.year, first.month, first.day, hour, tzinfo=zone).astimezone(UTC)
    return DigestPeriod(digest, name, due)


def digest_items(*, user_id: str) -> tuple[list[About], int]:
    """The reader's unread inbox items (at most DIGEST_ITEMS, newest first) and how many more,
    worded in the active language."""
    return unread_items(user_id=user_id, limit=DIGEST_ITEMS)


def digest_send_one(
    *,
    user_id: str,
    period: DigestPeriod,
    connection: BaseEmailBackend | None = None,
    found: Recipient | Verdict | None = None,
) -> str:
    """One reader's digest of `period`: sent, skipped, already, or "" (nothing unread, or the
    digest no longer chosen: no mail and no ledger line). `found`: the reader's row, when read."""
    if ledger_get(user_id=user_id, channel=EMAIL, source=period.source) is not None:
        return ALREADY
    if preferences_get(user_id=user_id, consistent=True).digest != period.digest:
        return ""
    found = recipient_get(user_id=user_id) if found is None else found
    language = found.language if isinstance(found, Recipient) else settings.LANGUAGE_CODE
    with translation.override(language):  # the items' texts in the reader's language
        items, more = digest_items(user_id=user_id)
    if not items:
        return ""
    if not isinstance(found, Recipient):
        ledger_put(user_id=user_id, source=period.source, kind="digest", state=SKIPPED, reason=found.skip)
        return SKIPPED
    recipient = found
    delivered = mail_deliver(
        recipient=recipient,
        source=period.source,
        kind="digest",
        entry_id="",
        build=lambda: digest_message(recipient=recipient, period=period.name, items=items, more=more),
        connection=connection,
    )
    return delivered.outcome


def reader_period(*, digest: str, now: datetime, found: Recipient | Verdict) -> DigestPeriod:
    if isinstance(found, Recipient):
        return digest_period(digest=digest, now=now, zone=reader_zone(found.time_zone), hour=found.digest_hour)
    return digest_period(digest=digest, now=now)


def slot_of(now: datetime) -> datetime:
    start = now.astimezone(UTC).replace(second=0, microsecond=0)
    return start - timedelta(minutes=start.minute % 15)


def _slot_source(digest: str, slot: datetime) -> str:
    # `slot-run`, not the `run` of the passes that read every reader each quarter hour: the
    # first pass after the change reads every reader (and lists each under their slot).
    return f"digest:{digest}:slot-run:{slot.strftime('%Y-%m-%dT%H:%M')}"


def digest_run_done(source: str) -> bool:
    return ledger_get(user_id=RUN_MARKER_USER, channel="run", source=source) is not None


def digests_send(
    *,
    should_stop: Callable[[], bool] = lambda: False,
    on_outcome: Callable[[str], None] = lambda outcome: None,
    connection: BaseEmailBackend | None = None,
) -> int:
    """Send every due digest not sent yet; the number of readers looked at (0: nothing due).

    Once per quarter hour of UTC at most (module doc): when the previous quarter hour's pass
    finished, only the readers listed under the slots that may be due now are read, and those
    due since its start are looked at; otherwise (the worker was down, a pass was cut short)
    every reader is read, and every one due in their current period is looked at, whom the
    ledger keeps from a second digest. The pass of 00:00 UTC reads every reader too, and lists
    each one found under a slot that is no longer theirs where they belong (and looks at them
    as after a gap, so a digest their stale slot hid still leaves that day).
    """
    now = clock.utcnow()
    slot = slot_of(now)
    looked = 0
    for digest in DIGESTS:
        if digest_run_done(_slot_source(digest, slot)):
            continue
        since = slot - SLOT if digest_run_done(_slot_source(digest, slot - SLOT)) else None
        full = since is None or (slot.hour, slot.minute) == (0, 0)
        listed = list(digest_readers(digest=digest, slots=None if full else due_slots(slot)))
        postponed = False
        for start in range(0, len(listed), READERS_PER_QUERY):
            chunk = listed[start : start + READERS_PER_QUERY]
            rows = recipients_get(user_ids=[user_id for user_id, _key in chunk])
            for user_id, key in chunk:
                found = rows[user_id]
                moved = full and _listed_where_due(user_id=user_id, digest=digest, key=key, found=found)
                period = reader_period(digest=digest, now=now, found=found)
                if now < period.due_at or (since is not None and not moved and period.due_at <= since):
                    continue
                if should_stop():
                    return looked
                looked += 1
                outcome = digest_send_one(user_id=user_id, period=period, connection=connection, found=found)
                postponed = postponed or outcome == POSTPONED
                if outcome:
                    on_outcome(outcome)
        if not postponed:
            _run_marker_put(_slot_source(digest, slot))
    return looked


def _listed_where_due(*, user_id: str, digest: str, key: str, found: Recipient | Verdict) -> bool:
    """Move a reader listed under a slot that is not theirs (a stale or older key) to theirs;
    True when moved."""
    if not isinstance(found, Recipient):
        return False
    slot = digest_slot(time_zone=found.time_zone, hour=found.digest_hour)
    if key == digest_key(digest=digest, slot=slot):
        return False
    return digest_rekey(user_id=user_id, digest=digest, old_key=key, slot=slot)


def _run_marker_put(source: str) -> None:
    ledger_put(user_id=RUN_MARKER_USER, channel="run", source=source, kind="digest", state=SENT)
