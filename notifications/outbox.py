"""Outbox jobs: what a write promises to do once it has committed, kept in `feed_retry` until done.

Some writes must be followed by more than their own transaction can hold: a comment tells its
parent's author, the people it mentions and its thread's watchers (thousands of feed writes,
notifications/fanout.py), a block retracts what the blocked person put in the owner's inbox
(notifications/silence.py). Each such promise is one `OutboxJob`: a frozen dataclass saying
what to do and how far it got, stored as one `feed_retry` item. Every job lives the same way:

- **recorded** in the write's own transaction (`outbox_add`): the write and its promise commit
  together or not at all. The item's key names the job (`<kind>#<job_id>`), so recording the
  same job twice leaves one item. It is due OUTBOX_DELAY_MS later: the drainer's turn comes
  only if the request does not finish the job first.
- **run by the request** right after the commit (`outbox_send`, with `inline=True`: a small
  budget, the person who wrote is waiting). It never raises: whatever fails stays in the item.
- **claimed by the drainer** once due (`process_feed_retries`: `outbox_claim`, a conditional
  update of `due_at` to a lease, so two drainers never run one item at once, and one that dies
  holding it lets the lease run out), then run with `inline=False` (`outbox_apply`). A run that
  raises is postponed with back-off (`outbox_postpone`), its `attempts` and `last_error` kept.
- **resumed**: a run may stop part way and return the job with its progress (`OutboxRun.rest`);
  the item keeps that progress and is due at once, so the next run starts where this one stopped.
- **completed**: a run that returns no `rest` deletes the item.

A job's `run` must be safe to repeat, whole or in part (each step state-based, or keyed by an
id its target remembers): a process may die at any point, and a run is then repeated from the
last progress the item kept; the request's run and a drainer's may overlap (a late request, or
its progress write making the item due under a drainer's lease), and a slower one's progress
may be written last, so a part is done again, never skipped. Progress is written only while
the item exists (a condition) and a delete of a deleted item changes nothing, so a finished job
never comes back.
"""

from __future__ import annotations

import json
import logging
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import ClassVar, Self

from django.utils.module_loading import import_string
from pynamodb.exceptions import DeleteError, PynamoDBException, UpdateError

from notifications.feed.events import FEED_RETRY_SHARDS
from notifications.models import FeedRetry
from project.clock import clock
from project.dynamo.transactions import LabelledTransactWrite
from project.errors import condition_failed, error_code

logger = logging.getLogger(__name__)

OUTBOX_DELAY_MS = 60_000  # the request runs the job; the drainer only if it did not finish it
OUTBOX_LEASE_MS = 60_000  # how long a drainer owns a claimed item before another may take it
OUTBOX_MAX_DELAY_MS = 300_000  # the longest back-off of an item that keeps failing

# Every kind of job, by the first part of its item's retry id. Dotted paths, imported when an
# item is drained: the jobs write through the feed's services, whose drainer reads this.
OUTBOX_JOBS = {
    "fanout": "notifications.fanout.FanOut",
    "silence": "notifications.silence.Silence",
    "moderation": "notifications.moderation_notices.ModerationNotice",
}


@dataclass(frozen=True)
class OutboxRun:
    """What one run of a job left."""

    rest: OutboxJob | None = None  # the job with its progress when it stopped part way; None: done
    # The request's best-effort follow-up once the item is deleted or updated (a drainer skips
    # it: what it would do has a worker of its own); it must not raise.
    then: Callable[[], None] | None = None


@dataclass(frozen=True)
class OutboxJob:
    """One promise in `feed_retry`. A subclass is a frozen dataclass of what to do (and how far it
    got) with a `kind` (a key of OUTBOX_JOBS), `job_id` (unique within the kind), `user_id` (whose
    write recorded it), `shard_key` (hashed into the item's shard; default `user_id`) and `run`."""

    kind: ClassVar[str]

    @property
    def job_id(self) -> str:
        raise NotImplementedError

    @property
    def user_id(self) -> str:
        raise NotImplementedError

    @property
    def shard_key(self) -> str:
        return self.user_id

    def run(self, *, inline: bool) -> OutboxRun:
        """Do the job, or the part of it one run does (`inline`: the request's run, a small
        budget), after the progress this job holds. Safe to repeat (the module's docstring)."""
        raise NotImplementedError

    @property
    def retry_id(self) -> str:
        return f"{self.kind}#{self.job_id}"

    @property
    def shard(self) -> str:
        return str(zlib.crc32(self.shard_key.encode()) % FEED_RETRY_SHARDS)

    def to_json(self) -> str:
        return json.dumps({self.kind: asdict(self)}, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Self:
        return cls(**json.loads(text)[cls.kind])


def outbox_add(transaction: LabelledTransactWrite, *, job: OutboxJob) -> None:
    """Add the job's item to the write's own transaction: one put under the job's key (twice:
    one item), due OUTBOX_DELAY_MS later. Labelled with the job's kind."""
    transaction.save(
        FeedRetry(
            job.shard,
            job.retry_id,
            user_id=job.user_id,
            event=job.to_json(),
            due_at=clock.now_ms() + OUTBOX_DELAY_MS,
            attempts=0,
            last_error="",
            created_at=clock.now_iso(),
        ),
        label=job.kind,
    )


def outbox_job(item: FeedRetry) -> OutboxJob | None:
    """The job a `feed_retry` item holds; None for an item that is a single feed event."""
    kind = item.retry_id.partition("#")[0]
    if kind not in OUTBOX_JOBS:
        return None
    job_class: type[OutboxJob] = import_string(OUTBOX_JOBS[kind])
    return job_class.from_json(item.event)


def _record(job: OutboxJob, run: OutboxRun) -> None:
    """Delete the finished job's item, or keep the progress and make the rest due now."""
    item = FeedRetry(job.shard, job.retry_id)
    if run.rest is None:
        try:
            item.delete()
        except DeleteError as error:  # the next run finds nothing left to do and deletes it
            logger.warning("outbox job %s not deleted (%s)", job.retry_id, error_code(error))
        return
    try:
        item.update(
            actions=[FeedRetry.event.set(run.rest.to_json()), FeedRetry.due_at.set(clock.now_ms())],
            condition=FeedRetry.retry_id.exists(),
        )
    except UpdateError as error:
        if not condition_failed(error):
            raise
        # Gone: another run finished it (it is not brought back).


def outbox_send(job: OutboxJob) -> None:
    """The request's run, right after the commit: the job's inline budget, then its item deleted
    or its progress kept, then its follow-up. Never raises: the item keeps what is not done."""
    try:
        run = job.run(inline=True)
        _record(job, run)
    except Exception:  # the write committed; its item is run by process_feed_retries
        logger.exception("outbox job %s left to process_feed_retries", job.retry_id)
        return
    if run.then is not None:
        run.then()


def outbox_apply(job: OutboxJob) -> None:
    """The drainer's run of a job whose item it claimed: then the item deleted or its progress
    kept (due at once). Errors raise: the caller postpones the item (`outbox_postpone`)."""
    _record(job, job.run(inline=False))


def outbox_claim(item: FeedRetry) -> int | None:
    """Claim a due item for OUTBOX_LEASE_MS: a conditional update of `due_at` from the value read.
    Returns the item's attempts with this one, or None when another drainer claimed it first
    (or a run deleted it). A drainer that dies holding it lets the lease run out."""
    attempts = int(item.attempts or 0) + 1
    try:
        item.update(
            actions=[FeedRetry.due_at.set(clock.now_ms() + OUTBOX_LEASE_MS), FeedRetry.attempts.set(attempts)],
            condition=FeedRetry.due_at == item.due_at,
        )
    except UpdateError as error:
        if condition_failed(error):
            return None
        raise
    return attempts


def _retry_delay_ms(attempts: int) -> int:
    return min(OUTBOX_MAX_DELAY_MS, 1000 << min(attempts, 10))  # 1 s doubling per attempt


def outbox_postpone(item: FeedRetry, *, attempts: int, error: str) -> None:
    """A claimed item whose run failed: due again after a back-off, `last_error` kept. If even this
    fails, the claim's lease runs out instead; a deleted item is not brought back."""
    try:
        item.update(
            actions=[
                FeedRetry.due_at.set(clock.now_ms() + _retry_delay_ms(attempts)),
                FeedRetry.last_error.set(error[:500]),
            ],
            condition=FeedRetry.retry_id.exists(),
        )
    except PynamoDBException:
        logger.warning("feed_retry %s: could not postpone (the lease expires instead)", item.retry_id)
