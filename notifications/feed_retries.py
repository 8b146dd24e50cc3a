"""The feed's retry worker: apply events waiting in `feed_retry` (`manage.py process_feed_retries`).

An event lands there when `feed_append` ran out of attempts or throughput, and, for
replies, through the outbox in the reply's own transaction. Each is applied at most
once (the apply finds it by its digest otherwise), with several workers at once.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pynamodb.exceptions import PynamoDBException, UpdateError

from notifications.feed import ALREADY_APPLIED, APPLIED, QUEUED, feed_append
from notifications.feed_events import FeedEvent
from notifications.feed_selectors import feed_retries_due
from notifications.models import FeedRetry
from project.clock import clock
from project.errors import Conflict, Throttled, error_code

logger = logging.getLogger(__name__)

FEED_RETRY_LEASE_MS = 60_000  # how long a drainer owns a claimed retry before another may take it
FEED_RETRY_MAX_DELAY_MS = 300_000


@dataclass
class FeedRetryStats:
    applied: int = 0
    already_applied: int = 0
    postponed: int = 0  # failed again, due later
    skipped: int = 0  # claimed by another worker first

    def count(self, status: str) -> None:
        if status == APPLIED:
            self.applied += 1
        elif status == ALREADY_APPLIED:
            self.already_applied += 1
        elif status == QUEUED:
            self.postponed += 1
        else:
            self.skipped += 1


def _retry_delay_ms(attempts: int) -> int:
    return min(FEED_RETRY_MAX_DELAY_MS, 1000 * 2 ** min(attempts, 10))


def feed_retry_process(*, retry: FeedRetry) -> str:
    """Claim one due retry and apply its event. Returns APPLIED, ALREADY_APPLIED, QUEUED or "skipped".

    The claim is a conditional update of `due_at` (the value we saw) to now + a lease, so
    two drainers never work on the same retry at once; a drainer that dies holding it
    lets the lease run out and another takes it. The event is applied at most once (the
    feed keeps its digest, so a second apply writes nothing) and the retry item is
    deleted after it; a failure pushes `due_at` out with exponential backoff. Nothing
    is ever dropped.
    """
    seen_due = retry.due_at
    attempts = int(retry.attempts or 0) + 1
    try:
        retry.update(
            actions=[
                FeedRetry.due_at.set(clock.now_ms() + FEED_RETRY_LEASE_MS),
                FeedRetry.attempts.set(attempts),
            ],
            condition=FeedRetry.due_at == seen_due,
        )
    except UpdateError as error:
        if error_code(error) == "ConditionalCheckFailedException":
            return "skipped"
        raise
    event = FeedEvent.from_json(retry.event)
    try:
        result = feed_append(user_id=retry.user_id, event=event, outbox=True, queue=False)
    except (Conflict, Throttled, PynamoDBException) as error:
        message = getattr(error, "message", None) or str(error)
        try:
            retry.update(
                actions=[
                    FeedRetry.due_at.set(clock.now_ms() + _retry_delay_ms(attempts)),
                    FeedRetry.last_error.set(message[:500]),
                ],
                condition=FeedRetry.retry_id.exists(),
            )
        except PynamoDBException:
            logger.warning("feed_retry %s: could not postpone (the lease expires instead)", retry.retry_id)
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
