"""The daily and weekly digests: each reader's unread inbox, mailed once per period.

A period is a UTC day (`daily:2026-11-25`) or ISO week (`weekly:2026-W48`); its digest is
due from NOTIFY_DIGEST_HOUR (UTC) on the period's first day. Readers come from the
`digest` index of `preferences` (notifications/preferences/selectors.py). Each reader's
digest is one mail through `mail_deliver`, with the ledger source `digest:<period>`: the
same claim that makes a notification mail go once makes a digest go once per period,
whatever runs twice or dies. Once every reader of a period was handled, a run marker (a
ledger line of the pseudo-user `~digest`) spares the next passes the index Query.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.core.mail.backends.base import BaseEmailBackend

from notifications.mail.checks import About, Recipient, recipient_get
from notifications.mail.content import digest_message
from notifications.mail.selectors import EMAIL, SENT, SKIPPED, ledger_get
from notifications.mail.services import ALREADY, POSTPONED, ledger_put, mail_deliver
from notifications.preferences.selectors import digest_readers, preferences_get
from notifications.selectors import notification_inbox
from project.clock import clock

logger = logging.getLogger(__name__)

DIGESTS = ("daily", "weekly")
DIGEST_ITEMS = 20  # unread items listed in a digest; the rest are counted
RUN_MARKER_USER = "~digest"  # not a user id (those are numbers): the ledger's run markers


@dataclass(frozen=True)
class DigestPeriod:
    digest: str  # daily, weekly
    name: str  # 2026-11-25, 2026-W48
    due_at: datetime

    @property
    def source(self) -> str:
        return f"digest:{self.digest}:{self.name}"


def digest_period(*, digest: str, now: datetime) -> DigestPeriod:
    """The period `now` falls in, and when its digest is due."""
    day = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    hour = timedelta(hours=int(settings.NOTIFY_DIGEST_HOUR))
    if digest == "daily":
        return DigestPeriod(digest, day.strftime("%Y-%m-%d"), day + hour)
    year, week, weekday = day.isocalendar()
    monday = day - timedelta(days=weekday - 1)
    return DigestPeriod(digest, f"{year}-W{week:02d}", monday + hour)


def digest_items(*, user_id: str) -> tuple[list[About], int]:
    """The reader's unread inbox items (at most DIGEST_ITEMS, newest first) and how many more."""
    page = notification_inbox(user_id=user_id, limit=DIGEST_ITEMS, excerpts=True)
    unread = [n for n in page.results if n.unread]
    items = [About(n.kind, n.text, n.excerpt, n.url or "/notifications/", comment_id=n.comment_id) for n in unread]
    return items, max(0, page.unread_count - len(items))


def digest_send_one(*, user_id: str, period: DigestPeriod, connection: BaseEmailBackend | None = None) -> str:
    """One reader's digest of `period`: sent, skipped, already, or "" (nothing unread, or the
    digest no longer chosen: no mail and no ledger line)."""
    if ledger_get(user_id=user_id, channel=EMAIL, source=period.source) is not None:
        return ALREADY
    if preferences_get(user_id=user_id, consistent=True).digest != period.digest:
        return ""
    items, more = digest_items(user_id=user_id)
    if not items:
        return ""
    found = recipient_get(user_id=user_id)
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


def digest_run_done(period: DigestPeriod) -> bool:
    return ledger_get(user_id=RUN_MARKER_USER, channel="run", source=period.source) is not None


def digests_send(
    *,
    should_stop: Callable[[], bool] = lambda: False,
    on_outcome: Callable[[str], None] = lambda outcome: None,
    connection: BaseEmailBackend | None = None,
) -> int:
    """Send every due digest not sent yet; the number of readers looked at (0: nothing due)."""
    now = clock.utcnow()
    looked = 0
    for digest in DIGESTS:
        period = digest_period(digest=digest, now=now)
        if now < period.due_at or digest_run_done(period):
            continue
        postponed = False
        for user_id in digest_readers(digest=digest):
            if should_stop():
                return looked
            looked += 1
            outcome = digest_send_one(user_id=user_id, period=period, connection=connection)
            postponed = postponed or outcome == POSTPONED
            if outcome:
                on_outcome(outcome)
        if not postponed:
            _run_marker_put(period)
    return looked


def _run_marker_put(period: DigestPeriod) -> None:
    ledger_put(user_id=RUN_MARKER_USER, channel="run", source=period.source, kind="digest", state=SENT)
