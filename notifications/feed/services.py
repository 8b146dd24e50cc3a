"""Writes of the per-user feed (docs/explanation/feed.md "The feed"): append an event, mark read,
and apply the events waiting in `feed_retry` (`manage.py process_feed_retries`).

Every producer (replies, delivered messages, ...) goes through `feed_append`: read the
item consistently, apply the event (`merge.feed_write_compute`: merge or insert,
cap), and put the item back on condition that its `version` is still the one read. Two
writers that read the same version cannot both win; the loser re-reads and merges again
(without the condition, parallel writers lose entries exactly there). One retry loop per
operation (`project.dynamo.transactions.transact`): a failed version condition re-reads, a
transaction conflict or throttling waits, within the same FEED_WRITE_ATTEMPTS.

When those run out, the event is put into the `feed_retry` table and
`manage.py process_feed_retries` applies it later (`feed_retries_process`). Every event
carries an id and the feed remembers digests of the events it applied (`Feed.applied`),
so applying an event twice writes nothing the second time.

`feed_write_prepare` + `FeedWrite.add_to` let a producer apply an event inside its own
TransactWriteItems (delivery deletes its target item in the same transaction).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from django.conf import settings
from django.utils.translation import gettext
from pynamodb.exceptions import DeleteError, PutError, PynamoDBException, UpdateError

from notifications.feed.events import FeedEvent, feed_retry_key
from notifications.feed.merge import (
    FeedWrite,
    feed_entries_mark_read,
    feed_silence_compute,
    feed_unread_entries,
    feed_write_compute,
)
from notifications.feed.selectors import feed_read, feed_retries_due
from notifications.mail.queue import EMAIL, PUSH, mail_queue_put
from notifications.models import Feed, FeedRetry
from notifications.outbox import outbox_apply, outbox_claim, outbox_job, outbox_postpone
from project.clock import clock
from project.dynamo.transactions import LabelledTransactWrite, TransactOutcome, transact
from project.errors import Conflict, Throttled, condition_failed, error_code, is_transient
from social.live import live_signal, live_user

logger = logging.getLogger(__name__)

FEED_WRITE_ATTEMPTS = 8  # version conflicts re-read and retried before the event is queued
# A feed write takes tens of milliseconds: its retries are spread over that scale.
FEED_BACKOFF = (0.04, 1.0)  # (base, cap) seconds

APPLIED = "applied"
ALREADY_APPLIED = "already_applied"
QUEUED = "queued"


def feed_write_prepare(*, user_id: str, event: FeedEvent) -> FeedWrite:
    """Read the feed consistently and compute it with `event` applied. Writes nothing.

    Runs any number of times: it only reads. The result is valid while the feed still
    has the version read; `add_to` makes the write conditional on exactly that.
    """
    return feed_write_compute(feed=feed_read(user_id=user_id), event=event)


def _feed_put(
    current: Callable[[], FeedWrite],
    *,
    what: str,
    reread: Callable[[], bool],
    also: Callable[[LabelledTransactWrite, FeedWrite], None] | None = None,
) -> TransactOutcome:
    """The feed's version-conditioned put (`current()`, with its unread count), in the one retry
    loop every feed write shares: a failed version condition calls `reread` (True: try again
    with the write it recomputed), a transaction conflict or throttling waits, all within
    FEED_WRITE_ATTEMPTS. `also` adds what must commit with the write (the event's mail).
    Once committed, a badge that moved is signalled to open pages, best effort (a death
    before it: they see it at their next full answer)."""

    def build(transaction: LabelledTransactWrite) -> None:
        write = current()
        write.add_to(transaction, label="feed")
        if also is not None:
            also(transaction, write)

    outcome = transact(
        build,
        what=what,
        attempts=FEED_WRITE_ATTEMPTS,
        on_failed=lambda outcome: reread(),
        backoff=FEED_BACKOFF,
    )
    written = current()
    if outcome.ok and written.count_changed and not written.already_applied:
        live_signal([live_user(written.user_id)])  # the badge moved: open pages follow (social/live.py)
    return outcome


def notify_email_delay_ms() -> int:
    """How long a notification waits unread before it is e-mailed (NOTIFY_EMAIL_DELAY seconds)."""
    return int(float(getattr(settings, "NOTIFY_EMAIL_DELAY", 600)) * 1000)


def _mail_schedule(transaction: LabelledTransactWrite, write: FeedWrite, *, user_id: str, event: FeedEvent) -> None:
    """For an event the person wants by e-mail, the mail's queue item, in the feed write's own
    transaction: the entry and the promise to mail about it commit together or not at all. The
    sender decides again at send time (read by then, e-mail turned off, thread muted). The push,
    for an event wanted by push, is put the same way into the push shards, due at once."""
    if not write.entry_id:
        return
    wanted = [(PUSH, 0)] if event.notify_push else []
    wanted += [(EMAIL, notify_email_delay_ms())] if event.notify_email else []
    for channel, delay_ms in wanted:
        mail_queue_put(
            transaction,
            user_id=user_id,
            kind=event.preference_kind,
            source=event.event_id,
            entry_id=write.entry_id,
            due_ms=clock.now_ms() + delay_ms,
            channel=channel,
        )


# --- the full write -----------------------------------------------------------


@dataclass
class FeedAppendResult:
    status: str  # APPLIED, ALREADY_APPLIED or QUEUED (in feed_retry, applied later)
    entry_id: str | None = None
    merged: bool = False
    version: int | None = None  # the feed's version after the write
    conflicts: int = 0  # version conflicts re-read and retried
    error: str = ""  # why it was queued


def feed_retry_item(*, user_id: str, event: FeedEvent, delay_ms: int = 0, error: str = "") -> FeedRetry:
    shard, retry_id = feed_retry_key(user_id, event)
    return FeedRetry(
        shard,
        retry_id,
        user_id=user_id,
        event=event.to_json(),
        due_at=clock.now_ms() + delay_ms,
        attempts=0,
        last_error=error[:500],
        created_at=clock.now_iso(),
    )


def _enqueue(*, user_id: str, event: FeedEvent, error: str, outbox: bool) -> None:
    """Put the event into feed_retry (or, when it is there already, leave it due soon)."""
    item = feed_retry_item(user_id=user_id, event=event, delay_ms=1000, error=error)
    if outbox:
        try:
            item.update(
                actions=[FeedRetry.due_at.set(item.due_at), FeedRetry.last_error.set(item.last_error)],
                condition=FeedRetry.retry_id.exists(),
            )
        except UpdateError as update_error:
            if not condition_failed(update_error):
                raise
            # Gone: only a transaction that applied the event deletes it.
        return
    try:
        item.save(condition=FeedRetry.retry_id.does_not_exist())
    except PutError as put_error:
        if not condition_failed(put_error):
            raise
        # Already queued by an earlier attempt: the drainer applies it once.


def _outbox_done(*, user_id: str, event: FeedEvent) -> None:
    shard, retry_id = feed_retry_key(user_id, event)
    try:
        FeedRetry(shard, retry_id).delete()
    except DeleteError as error:
        logger.warning("feed_retry %s not deleted (%s): the drainer will find it already applied", retry_id, error)


def feed_append(*, user_id: str, event: FeedEvent, outbox: bool = False, queue: bool = True) -> FeedAppendResult:
    """Apply `event` to the user's feed: prepare, one version-conditioned transaction, retry.

    One retry loop of FEED_WRITE_ATTEMPTS: a version conflict re-reads the feed and
    tries again, a transaction conflict or throttling waits and tries again (jittered
    backoff); when the attempts run out, the event is put into `feed_retry` (result
    QUEUED) unless `queue=False`, in which case Conflict/Throttled is raised.

    `outbox=True`: the event is already in `feed_retry` (put by an earlier failure: the
    drainer's call); it is deleted once the event is applied (or found applied).

    Twice, or concurrently with itself: the second finds the event id in the feed and
    writes nothing (ALREADY_APPLIED). Dies half way: the transaction either happened or
    not; an outbox/queued event is applied by the drainer.
    """
    conflicts = 0
    error_text = ""
    try:
        write = feed_write_prepare(user_id=user_id, event=event)

        def reread() -> bool:
            nonlocal write, conflicts
            conflicts += 1
            logger.info("feed_append: feed of user %s changed under us (conflict %d)", user_id, conflicts)
            write = feed_write_prepare(user_id=user_id, event=event)
            return not write.already_applied

        if not write.already_applied:
            outcome = _feed_put(
                lambda: write,
                what="feed_append",
                reread=reread,
                also=lambda transaction, current: _mail_schedule(transaction, current, user_id=user_id, event=event),
            )
        if write.already_applied:
            if outbox:
                _outbox_done(user_id=user_id, event=event)
            return FeedAppendResult(ALREADY_APPLIED, version=write.read_version, conflicts=conflicts)
        if outcome.ok:
            if outbox:
                # After the write, not in its transaction (a transactional delete of an
                # item with an index costs 4 units): if we die first, the drainer finds
                # the event applied (its digest) and deletes the item then.
                _outbox_done(user_id=user_id, event=event)
            return FeedAppendResult(
                APPLIED,
                entry_id=write.entry_id,
                merged=write.merged,
                version=cast(Feed, write.feed).version,  # set unless already applied
                conflicts=conflicts,
            )
        conflicts += 1
        error_text = f"version conflicts persisted over {FEED_WRITE_ATTEMPTS} attempts"
        if not queue:
            raise Conflict(gettext("feed_append: %(error_text)s, retry shortly.") % {"error_text": error_text})
    except (Conflict, Throttled) as error:
        if not queue:
            raise
        error_text = error.message
    except PynamoDBException as error:
        if not (queue and is_transient(error)):
            raise
        error_text = f"{error_code(error) or type(error.cause).__name__}: {error}"
    _enqueue(user_id=user_id, event=event, error=error_text, outbox=outbox)
    logger.warning("feed event %s for user %s queued for retry: %s", event.event_id, user_id, error_text)
    return FeedAppendResult(QUEUED, conflicts=conflicts, error=error_text)


def feed_mark_read(*, user_id: str, entry_ids: list[str] | None = None) -> int:
    """Mark the given entries (all when `entry_ids` is None) read; returns how many were unread.

    Same version-conditioned put as an append (and the `feed` unread count with it), so
    a concurrent append is never lost: on a conflict the marking is recomputed on the
    newer feed, within one retry loop of FEED_WRITE_ATTEMPTS. Twice: the second finds
    nothing unread and writes nothing. Unknown ids are ignored (they may have been capped away).
    """
    wanted = None if entry_ids is None else set(entry_ids)

    def marking() -> tuple[int, FeedWrite]:
        feed = feed_read(user_id=user_id)
        marked = feed_entries_mark_read(feed, entry_ids=wanted, now_ms=clock.now_ms())
        feed.updated_at = clock.now_iso()
        write = FeedWrite(
            user_id=user_id,
            already_applied=not marked,
            feed=feed,
            unread_count=feed_unread_entries(feed),
            read_version=feed.version,
        )
        return marked, write

    marked, write = marking()
    if not marked:
        return 0

    def reread() -> bool:
        nonlocal marked, write
        marked, write = marking()
        return bool(marked)

    outcome = _feed_put(lambda: write, what="feed_mark_read", reread=reread)
    if outcome.ok:
        return marked
    if not marked:  # someone else marked them meanwhile
        return 0
    raise Conflict(gettext("The feed kept changing while it was marked read, retry shortly."))


def feed_silence(*, user_id: str, other_id: str, silenced: Callable[[], bool]) -> bool:
    """Bring the user's feed in step with their block or mute of `other_id` (`silenced()` reads
    it now, strongly); returns whether the feed was written.

    Same version-conditioned put as an append (notifications/feed/merge.py `feed_silence_compute`),
    so a reply being appended meanwhile is either refused by the merge (it read the feed after
    this write) or retracted by it (this write read the feed after the reply). Each attempt
    reads the feed, then the relation: a later block or unblock has a write of its own that
    reads both after it, so the last one wins. Twice: the second finds the feed in step and
    writes nothing. Dies half way: the one put happened or not (the caller's item stays).
    """

    def compute() -> FeedWrite:
        feed = feed_read(user_id=user_id)
        return feed_silence_compute(feed=feed, other_id=other_id, silenced=silenced())

    write = compute()
    if write.already_applied:
        return False

    def reread() -> bool:
        nonlocal write
        write = compute()
        return not write.already_applied

    outcome = _feed_put(lambda: write, what="feed_silence", reread=reread)
    if outcome.ok:
        return True
    if write.already_applied:
        return False
    raise Conflict(gettext("The feed kept changing while a block or mute was applied, retry shortly."))


# --- the retry worker ----------------------------------------------------------
# An event lands in `feed_retry` when `feed_append` ran out of attempts or throughput; the
# table also holds the outbox jobs (notifications/outbox.py: a comment's fan-out, a block's
# retraction). Each event is applied at most once (the apply finds it by its digest
# otherwise), with several workers at once.


@dataclass
class FeedRetryStats:
    applied: int = 0
    already_applied: int = 0
    postponed: int = 0  # failed again, due later
    skipped: int = 0  # claimed by another worker first

    @property
    def summary(self) -> str:
        return (
            f"{self.applied} applied, {self.already_applied} already applied, "
            f"{self.postponed} failed again (due later), {self.skipped} taken by another worker"
        )

    def count(self, status: str) -> None:
        if status == APPLIED:
            self.applied += 1
        elif status == ALREADY_APPLIED:
            self.already_applied += 1
        elif status == QUEUED:
            self.postponed += 1
        else:
            self.skipped += 1


def feed_retry_process(*, retry: FeedRetry) -> str:
    """Claim one due retry and apply it. Returns APPLIED, ALREADY_APPLIED, QUEUED or "skipped".

    The claim and the back-off are the outbox's (notifications/outbox.py `outbox_claim`, a
    lease, so two drainers never work on the same retry at once; `outbox_postpone`). The item
    holds an outbox job (a comment's fan-out, a block's retraction: `outbox_apply` runs it) or
    a single event, applied at most once (the feed keeps its digest, so a second apply writes
    nothing) and deleted after it. A failure pushes `due_at` out. Nothing is ever dropped.
    """
    attempts = outbox_claim(retry)
    if attempts is None:
        return "skipped"
    try:
        job = outbox_job(retry)
        if job is not None:
            outbox_apply(job)
            return APPLIED
        event = FeedEvent.from_json(retry.event)
        result = feed_append(user_id=retry.user_id, event=event, outbox=True, queue=False)
    except (Conflict, Throttled, PynamoDBException) as error:
        message = getattr(error, "message", None) or str(error)
        outbox_postpone(retry, attempts=attempts, error=message)
        level = logging.ERROR if attempts >= 10 else logging.WARNING
        logger.log(level, "feed_retry %s failed again (attempt %d): %s", retry.retry_id, attempts, message)
        return QUEUED
    return result.status


def feed_retries_process(*, limit: int = 100, now_ms: int | None = None) -> FeedRetryStats:
    """Apply up to `limit` retries due at `now_ms` (now) once each. Safe on several machines at once."""
    stats = FeedRetryStats()
    for retry in feed_retries_due(limit=limit, now_ms=now_ms):
        stats.count(feed_retry_process(retry=retry))
    return stats
