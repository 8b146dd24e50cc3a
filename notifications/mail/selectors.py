"""Reads of the mail queue and the `sends` ledger (writes: notifications/mail/services.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from pynamodb.exceptions import DoesNotExist

from notifications.mail.queue import EMAIL as EMAIL
from notifications.mail.queue import MAIL_QUEUE_SHARDS, queue_shards
from notifications.models import MailQueue, Send
from project.clock import clock
from project.operations.backlog import Backlog, backlog_due_ms

SENDING, SENT, FAILED, SKIPPED = "sending", "sent", "failed", "skipped"
UNKNOWN = "unknown"  # shown for a line still `sending` after its lease: never sent again
MAIL_BACKLOG_CAP = 100


def ledger_line(*, channel: str, source: str) -> str:
    """The ledger's sort key of a person's line about `source` on `channel`."""
    return f"{channel}#{source}"


def mail_queue_due(*, limit: int = 100, now_ms: int | None = None, channel: str = EMAIL) -> list[MailQueue]:
    """Mails (or pushes) due now, at most `limit` per shard: one strongly consistent Query per shard
    of the channel, on the `by_due` LSI (an item a sender holds has its lease in `due_at`, in the
    future: not listed)."""
    now_ms = clock.now_ms() if now_ms is None else now_ms
    due: list[MailQueue] = []
    for shard in queue_shards(channel):
        due.extend(MailQueue.by_due.query(shard, MailQueue.due_at <= now_ms, limit=limit, consistent_read=True))
    return sorted(due, key=lambda item: int(item.due_at))


def mail_queue_backlog(*, now_ms: int | None = None) -> Backlog:
    """Mails due and not yet sent (`mail_notifications`'s queue), and how long the oldest waits."""
    now_ms = clock.now_ms() if now_ms is None else now_ms
    return backlog_due_ms(MailQueue, parts=MAIL_QUEUE_SHARDS, label="mails due", cap=MAIL_BACKLOG_CAP, now_ms=now_ms)


def ledger_get(*, user_id: str, channel: str, source: str) -> Send | None:
    """One ledger line, strongly consistent (it decides whether a mail may go)."""
    try:
        return Send.get(user_id, ledger_line(channel=channel, source=source), consistent_read=True)
    except DoesNotExist:
        return None


@dataclass(frozen=True)
class LedgerLine:
    """A ledger line as staff see it."""

    user_id: str
    channel: str
    source: str
    kind: str
    outcome: str  # sent, failed, skipped, unknown, sending (within its lease)
    reason: str
    address: str
    subject: str
    at: datetime
    entry_id: str = ""  # the feed entry (or like:<comment_id>) it was about


def ledger_outcome(line: Send, *, now_ms: int | None = None) -> str:
    """The line's state, `unknown` for one still `sending` after its lease (the sender died
    between sending and marking: the mail may or may not have gone, and never goes again)."""
    now_ms = clock.now_ms() if now_ms is None else now_ms
    if line.state == SENDING and int(line.lease_until) <= now_ms:
        return UNKNOWN
    return str(line.state)


def _view(line: Send, now_ms: int) -> LedgerLine:
    return LedgerLine(
        user_id=line.user_id,
        channel=line.channel,
        source=line.source,
        kind=line.kind,
        outcome=ledger_outcome(line, now_ms=now_ms),
        reason=line.reason,
        address=line.address,
        subject=line.subject,
        at=datetime.fromtimestamp(int(line.at) / 1000, UTC),
        entry_id=line.entry_id or "",
    )


def ledger_of_user(*, user_id: str, limit: int = 200) -> list[LedgerLine]:
    """A person's ledger lines (every channel and source), newest change first: one Query."""
    now_ms = clock.now_ms()
    lines = [
        _view(line, now_ms)
        for line in Send.query(user_id, consistent_read=True, limit=limit)
        if not line.source.startswith("entry:")  # markers of the mail about an entry (services.py)
    ]
    return sorted(lines, key=lambda line: line.at, reverse=True)


def ledger_of_source(*, source: str, limit: int = 1000) -> list[LedgerLine]:
    """Everyone's ledger lines about one source (`delivery#<id>`): the `by_source` index
    (eventually consistent: a line written a second ago may show a moment later)."""
    now_ms = clock.now_ms()
    return [_view(line, now_ms) for line in Send.by_source.query(source, limit=limit)]
