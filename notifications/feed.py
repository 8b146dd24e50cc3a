"""Writes of the per-user feed (DESIGN.md 3 `feed` and 4 "Feed write", seed 002).

The feed is one item per user holding its newest entries. Every producer (replies,
delivered messages, ...) goes through `feed_append`: read the item consistently, merge
the event into an unread entry with the same roll-up key or insert a new entry, cap the
list, and put the item back on condition that its `version` is still the one read. Two
writers that read the same version cannot both win; the loser re-reads and merges again
(seed 002 lost entries exactly there before it added the condition).

When conflicts or throughput run out, the event is put into the `feed_retry` table and
`manage.py process_feed_retries` applies it later. Every event carries an id and the
feed remembers digests of the events it applied (`Feed.applied`), so applying an event
twice writes nothing the second time.

Entries are small records (notifications/feed_format.py): what an event points at (the
reply, the delivery) is kept by id and its text read when the feed is shown.

`feed_write_prepare` + `FeedWrite.add_to` let a producer apply an event inside its own
TransactWriteItems (delivery deletes its target item in the same transaction).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
import zlib
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

from botocore.exceptions import BotoCoreError
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from pynamodb.exceptions import DeleteError, DoesNotExist, PutError, PynamoDBException, UpdateError
from pynamodb.transactions import TransactWrite

from notifications.feed_format import FeedEntry, Record, digest, iso_to_ms, pack_entry
from notifications.models import Feed, FeedRetry, UnreadCount
from project.errors import ApplicationError, Conflict, Throttled, error_code, is_throttling
from project.retry import backoff_sleep
from project.transactions import LabelledTransactWrite
from project.transactions import transact_codes as transact  # positions until the split (issue 14, phase B)

logger = logging.getLogger(__name__)

FEED_SOURCE = "feed"  # the feed's item in unread_counts

# Bounds that keep one entry small, so a full feed stays far below DynamoDB's 400 KB
# item limit. An event that points at a reply or a delivery stores no text at all (about
# 55 bytes an entry); only events that point at nothing keep title/body/url inline.
FEED_TITLE_MAX_CHARS = 100
FEED_BODY_MAX_CHARS = 400
FEED_URL_MAX_CHARS = 500
FEED_TEXT_MAX_BYTES = 1500  # title + body + url in UTF-8 (about 500 Japanese characters)
FEED_ID_MAX_CHARS = 100  # event_id, rollup_key, delivery_id
FEED_KIND_MAX_CHARS = 32
FEED_ACTOR_ID_MAX_CHARS = 24
FEED_ACTORS_KEPT = 10  # distinct actor ids kept per entry (see _merge for the count beyond)
FEED_ENTRY_MAX_BYTES = 2800
FEED_ITEM_BUDGET_BYTES = 300_000  # what FEED_MAX_ENTRIES full-size entries may take at most

FEED_WRITE_ATTEMPTS = 8  # version conflicts re-read and retried before the event is queued
FEED_BACKOFF_BASE_SECONDS = 0.04
FEED_RETRY_SHARDS = 4
FEED_RETRY_LEASE_MS = 60_000  # how long a drainer owns a claimed retry before another may take it
FEED_RETRY_MAX_DELAY_MS = 300_000
FEED_REPLY_OUTBOX_DELAY_MS = 60_000  # the replying request applies it; the drainer only if it did not

APPLIED = "applied"
ALREADY_APPLIED = "already_applied"
QUEUED = "queued"


class FeedEventTooLarge(ApplicationError):
    """A feed event whose text or ids exceed the bounds above (a 400 on `field`)."""


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _now_ms() -> int:
    return int(time.time() * 1000)


FEED_MAX_ENTRIES_LIMIT = FEED_ITEM_BUDGET_BYTES // FEED_ENTRY_MAX_BYTES


def feed_settings_errors() -> list[str]:
    """What is wrong with the feed's settings (a system check reports it at start-up)."""
    limit = settings.FEED_MAX_ENTRIES
    if not isinstance(limit, int) or not 1 <= limit <= FEED_MAX_ENTRIES_LIMIT:
        return [
            f"FEED_MAX_ENTRIES={limit!r}: must be an integer between 1 and {FEED_MAX_ENTRIES_LIMIT} "
            "so that a full feed stays far below DynamoDB's 400 KB item limit."
        ]
    return []


def feed_max_entries() -> int:
    """FEED_MAX_ENTRIES, checked at start-up by `notifications.checks` (and here, for safety)."""
    errors = feed_settings_errors()
    if errors:
        raise ImproperlyConfigured(errors[0])
    return settings.FEED_MAX_ENTRIES


def _applied_kept() -> int:
    """Event digests kept (6 bytes each). Only events merged into an existing entry need
    theirs: an event that made an entry is also found by that entry while it is in the feed."""
    return 32


@dataclass(frozen=True)
class FeedEvent:
    """Something that happened for a user. Validated on construction (FeedEventTooLarge)."""

    event_id: str  # unique per event; the merge is idempotent on it
    kind: str  # "reply", "message", ...
    actor_id: str | None  # who caused it (None for staff broadcasts)
    rollup_key: str | None  # events with the same key merge into one unread entry
    title: str = ""
    body: str = ""
    url: str = ""
    delivery_id: str | None = None
    created_at: str | None = None  # ISO; now when None
    object_id: str | None = None  # what the entry shows: a reply's comment id (the text is read from it)

    def __post_init__(self):
        for name in ("event_id", "kind"):
            if not getattr(self, name):
                raise FeedEventTooLarge(f"A feed event needs a {name}.", field=name)
        limits = {
            "event_id": FEED_ID_MAX_CHARS,
            "rollup_key": FEED_ID_MAX_CHARS,
            "delivery_id": FEED_ID_MAX_CHARS,
            "object_id": FEED_ID_MAX_CHARS,
            "kind": FEED_KIND_MAX_CHARS,
            "actor_id": FEED_ACTOR_ID_MAX_CHARS,
            "title": FEED_TITLE_MAX_CHARS,
            "body": FEED_BODY_MAX_CHARS,
            "url": FEED_URL_MAX_CHARS,
        }
        for name, limit in limits.items():
            value = getattr(self, name)
            if value is not None and len(value) > limit:
                raise FeedEventTooLarge(
                    f"At most {limit} characters in a feed entry's {name} (got {len(value)}).", field=name
                )
        text_bytes = sum(len(value.encode()) for value in (self.title, self.body, self.url))
        if text_bytes > FEED_TEXT_MAX_BYTES:
            raise FeedEventTooLarge(
                f"Title, body and url of a feed entry take {text_bytes} bytes in UTF-8; at most "
                f"{FEED_TEXT_MAX_BYTES} (about {FEED_TEXT_MAX_BYTES // 3} Japanese characters).",
                field="body",
            )

    @property
    def source_id(self) -> str | None:
        """The id the entry's text is read from when shown: the reply, or the delivery."""
        return self.object_id or self.delivery_id

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> FeedEvent:
        return cls(**json.loads(text))

    def entry_text(self) -> tuple[str, str, str]:
        """The title, body and url an entry stores inline: none when it points at a source."""
        return ("", "", "") if self.source_id else (self.title, self.body, self.url)


def feed_entry_id(event_id: str) -> str:
    """The id of the entry an event creates: derived from the event, so a re-run derives the same one."""
    return hashlib.blake2b(event_id.encode(), digest_size=8).hexdigest()


def feed_entry_size(entry: FeedEntry) -> int:
    """Bytes the entry takes in the item (its packed record)."""
    return len(pack_entry(entry))


@dataclass
class FeedWrite:
    """The state a feed will have once an event is applied: one version-conditioned put.

    `add_to(transaction, label=...)` adds the put of the feed item (condition: the version
    that was read, or "no item yet") and the `unread_counts` `feed` update to a
    `project.transactions` transaction, under the caller's label. A failed condition on
    that label in the outcome means another writer changed the feed: prepare again.
    """

    user_id: str
    already_applied: bool  # the event id is already in the feed: nothing to write
    feed: Feed | None = None
    entry_id: str | None = None
    merged: bool = False  # rolled up into an existing unread entry
    unread_count: int = 0
    read_version: int | None = None  # None: the feed item does not exist yet
    # The unread count moved (a new entry, or marked read); a merge into an unread entry
    # leaves it as it is, and then the `unread_counts` item is not rewritten.
    count_changed: bool = True

    @property
    def action_count(self) -> int:
        if self.already_applied:
            return 0
        return 2 if self.count_changed else 1

    def add_to(self, transaction: LabelledTransactWrite, *, label: object = None) -> None:
        """Add the feed put and the unread-count update, both labelled `label`."""
        if self.already_applied:
            return
        # PynamoDB adds the VersionAttribute condition and the increment.
        transaction.save(self.feed, label=label)
        if self.count_changed:
            transaction.update(
                UnreadCount(self.user_id, FEED_SOURCE),
                actions=[UnreadCount.count.set(self.unread_count)],
                label=label,
            )


def feed_read(*, user_id: str) -> Feed:
    """The user's feed item read consistently (an empty, unsaved one when there is none)."""
    try:
        return Feed.get(user_id, consistent_read=True)
    except DoesNotExist:
        return _feed_empty(user_id)


def _feed_empty(user_id: str) -> Feed:
    feed = Feed(user_id)
    feed.entries, feed.applied = [], []
    return feed


def feed_read_many(*, user_ids: list[str]) -> dict[str, Feed]:
    """Several users' feeds with strongly consistent BatchGetItem (100 keys a request;
    PynamoDB retries unprocessed keys); an empty, unsaved feed for a user without one."""
    found = {feed.user_id: feed for feed in Feed.batch_get(list(dict.fromkeys(user_ids)), consistent_read=True)}
    return {user_id: found.get(user_id) or _feed_empty(user_id) for user_id in user_ids}


def feed_unread_entries(feed: Feed) -> int:
    return sum(1 for entry in feed.entries if not entry.read)


def _sort_and_cap(entries: list[FeedEntry] | list[Record], limit: int) -> list:
    """Newest first; beyond `limit`, drop the oldest read entries first, then the oldest unread.

    Works on entries and on records alike (both have `updated_ms`, `entry_id`, `read`).
    """
    entries.sort(key=lambda entry: (entry.updated_ms, entry.entry_id), reverse=True)
    excess = len(entries) - limit
    if excess <= 0:
        return entries
    dropped = set()
    for index in range(len(entries) - 1, -1, -1):
        if excess == 0:
            break
        if entries[index].read:
            dropped.add(index)
            excess -= 1
    for index in range(len(entries) - 1, -1, -1):
        if excess == 0:
            break
        if index not in dropped:
            dropped.add(index)
            excess -= 1
    return [entry for index, entry in enumerate(entries) if index not in dropped]


def _merge(entry: FeedEntry, event: FeedEvent, created_ms: int) -> None:
    """Roll `event` into the unread `entry` ("Bob and 3 others replied").

    `actor_count` counts distinct people: an actor already in `actor_ids` is not counted
    again. Only the newest FEED_ACTORS_KEPT actors are kept (the item must stay small), so
    an actor who acted before that many others since is counted a second time.
    """
    if event.actor_id is not None:
        actors = list(entry.actor_ids or [])
        if event.actor_id in actors:
            actors.remove(event.actor_id)
        else:
            entry.actor_count = int(entry.actor_count or 0) + 1
        actors.append(event.actor_id)
        entry.actor_ids = actors[-FEED_ACTORS_KEPT:]
    entry.event_count = int(entry.event_count or 1) + 1
    if created_ms >= entry.updated_ms:  # the newest event is the one shown
        entry.updated_ms = created_ms
        entry.object_id = event.source_id
        entry.title, entry.body, entry.url = event.entry_text()


def feed_write_prepare(*, user_id: str, event: FeedEvent) -> FeedWrite:
    """Read the feed consistently and compute it with `event` applied. Writes nothing.

    Runs any number of times: it only reads. The result is valid while the feed still
    has the version read; `add_to` makes the write conditional on exactly that.
    """
    return feed_write_compute(feed=feed_read(user_id=user_id), event=event)


def feed_write_compute(*, feed: Feed, event: FeedEvent) -> FeedWrite:
    """`feed` with `event` applied, as `feed_write_prepare` does, from a feed already read.

    Works on the packed records (`Feed.records`): only the entry the event rolls into is
    decoded; the others are ordered, capped and copied by their heads.
    """
    user_id = feed.user_id
    read_version = feed.version
    applied = list(feed.applied)
    event_digest = digest(event.event_id)
    records = list(feed.records)
    entry_id = feed_entry_id(event.event_id)
    if event_digest in applied or any(record.entry_id == entry_id for record in records):
        return FeedWrite(user_id=user_id, already_applied=True, read_version=read_version)
    unread_before = sum(1 for record in records if not record.read)
    created_ms = iso_to_ms(event.created_at) if event.created_at else int(time.time() * 1000)
    rollup = digest(event.rollup_key) if event.rollup_key is not None else None
    position = None
    if rollup is not None:
        position = next(
            (index for index, record in enumerate(records) if not record.read and record.rollup == rollup), None
        )
    if position is not None:
        target = records[position].entry()
        _merge(target, event, created_ms)
        records[position] = Record.of(target)
        entry_id, merged = target.entry_id, True
    else:
        merged = False
        title, body, url = event.entry_text()
        target = FeedEntry(
            entry_id=entry_id,
            kind=event.kind,
            created_ms=created_ms,
            updated_ms=created_ms,
            rollup=rollup,
            object_id=event.source_id,
            actor_ids=[event.actor_id] if event.actor_id is not None else [],
            actor_count=1 if event.actor_id is not None else 0,
            title=title,
            body=body,
            url=url,
        )
        records.append(Record.of(target))
    size = feed_entry_size(target)
    if size > FEED_ENTRY_MAX_BYTES:  # the field bounds make this unreachable; a guard, not a path
        raise FeedEventTooLarge(f"A feed entry would take {size} bytes; at most {FEED_ENTRY_MAX_BYTES}.")
    feed.records = _sort_and_cap(records, feed_max_entries())
    feed.applied = [*applied, event_digest][-_applied_kept() :]
    feed.updated_at = now_iso()
    unread_count = sum(1 for record in feed.records if not record.read)
    return FeedWrite(
        user_id=user_id,
        already_applied=False,
        feed=feed,
        entry_id=entry_id,
        merged=merged,
        unread_count=unread_count,
        read_version=read_version,
        count_changed=unread_count != unread_before,
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


TRANSIENT_CODES = {"InternalServerError", "ServiceUnavailable", "RequestLimitExceeded"}


def is_transient(error: BaseException) -> bool:
    """Throttling, a 5xx, or no answer at all (timeout, connection reset): the write may
    or may not have happened, and trying again later is right (it is idempotent)."""
    if is_throttling(error) or error_code(error) in TRANSIENT_CODES:
        return True
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, BotoCoreError):
            return True
        error = getattr(error, "cause", None) or error.__cause__
    return False


def _retry_shard(user_id: str) -> str:
    return str(zlib.crc32(user_id.encode()) % FEED_RETRY_SHARDS)


def _retry_key(user_id: str, event: FeedEvent) -> tuple[str, str]:
    return _retry_shard(user_id), f"{user_id}#{event.event_id}"


def feed_retry_item(*, user_id: str, event: FeedEvent, delay_ms: int = 0, error: str = "") -> FeedRetry:
    shard, retry_id = _retry_key(user_id, event)
    return FeedRetry(
        shard,
        retry_id,
        user_id=user_id,
        event=event.to_json(),
        due_at=_now_ms() + delay_ms,
        attempts=0,
        last_error=error[:500],
        created_at=now_iso(),
    )


def feed_outbox_add(transaction: TransactWrite, *, user_id: str, event: FeedEvent) -> None:
    """Add the event to `feed_retry` inside a producer's own transaction (an outbox).

    The producer then calls `feed_append(..., outbox=True)`, which deletes the retry
    item once the event is applied; if the producer dies first, the drainer applies it
    after FEED_REPLY_OUTBOX_DELAY_MS (or finds it applied, by its digest, and deletes it).
    """
    transaction.save(feed_retry_item(user_id=user_id, event=event, delay_ms=FEED_REPLY_OUTBOX_DELAY_MS))


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
            if error_code(update_error) != "ConditionalCheckFailedException":
                raise
            # Gone: only a transaction that applied the event deletes it.
        return
    try:
        item.save(condition=FeedRetry.retry_id.does_not_exist())
    except PutError as put_error:
        if error_code(put_error) != "ConditionalCheckFailedException":
            raise
        # Already queued by an earlier attempt: the drainer applies it once.


def _outbox_done(*, user_id: str, event: FeedEvent) -> None:
    shard, retry_id = _retry_key(user_id, event)
    try:
        FeedRetry(shard, retry_id).delete()
    except DeleteError as error:
        logger.warning("feed_retry %s not deleted (%s): the drainer will find it already applied", retry_id, error)


def feed_append(*, user_id: str, event: FeedEvent, outbox: bool = False, queue: bool = True) -> FeedAppendResult:
    """Apply `event` to the user's feed: prepare, one version-conditioned transaction, retry.

    On a version conflict it re-reads and retries with jittered backoff, FEED_WRITE_ATTEMPTS
    times; when those or throughput run out, the event is put into `feed_retry` (result
    QUEUED) unless `queue=False`, in which case Conflict/Throttled is raised.

    `outbox=True`: the event is already in `feed_retry` (put by `feed_outbox_add` or by an
    earlier failure); it is deleted once the event is applied (or found applied).

    Twice, or concurrently with itself: the second finds the event id in the feed and
    writes nothing (ALREADY_APPLIED). Dies half way: the transaction either happened or
    not; an outbox/queued event is applied by the drainer.
    """
    conflicts = 0
    error_text = ""
    try:
        for attempt in range(FEED_WRITE_ATTEMPTS):
            write = feed_write_prepare(user_id=user_id, event=event)
            if write.already_applied:
                if outbox:
                    _outbox_done(user_id=user_id, event=event)
                return FeedAppendResult(ALREADY_APPLIED, version=write.read_version, conflicts=conflicts)

            codes = transact(write.add_to, what="feed_append")
            if not codes:
                if outbox:
                    # After the write, not in its transaction (a transactional delete of an
                    # item with an index costs 4 units): if we die first, the drainer finds
                    # the event applied (its digest) and deletes the item then.
                    _outbox_done(user_id=user_id, event=event)
                return FeedAppendResult(
                    APPLIED,
                    entry_id=write.entry_id,
                    merged=write.merged,
                    version=write.feed.version,
                    conflicts=conflicts,
                )
            conflicts += 1
            logger.info("feed_append: feed of user %s changed under us (conflict %d)", user_id, conflicts)
            # A feed write takes tens of milliseconds: spread the retries over that scale.
            backoff_sleep(attempt, base=FEED_BACKOFF_BASE_SECONDS, cap=1.0)
        error_text = f"version conflicts persisted over {FEED_WRITE_ATTEMPTS} attempts"
        if not queue:
            raise Conflict(f"feed_append: {error_text}, retry shortly.")
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


# --- the retry queue ------------------------------------------------------------


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


def feed_retries_due(*, limit: int = 100, now_ms: int | None = None) -> list[FeedRetry]:
    """Retries due now, oldest due first per shard: one LSI Query per shard (no Scan)."""
    now_ms = _now_ms() if now_ms is None else now_ms
    due = []
    for shard in range(FEED_RETRY_SHARDS):
        due.extend(FeedRetry.by_due.query(str(shard), FeedRetry.due_at <= now_ms, limit=limit, consistent_read=True))
    due.sort(key=lambda item: item.due_at)
    return due[:limit]


def _retry_delay_ms(attempts: int) -> int:
    return min(FEED_RETRY_MAX_DELAY_MS, 1000 * 2 ** min(attempts, 10))


def feed_retry_process(*, retry: FeedRetry) -> str:
    """Claim one due retry and apply its event. Returns APPLIED, ALREADY_APPLIED, QUEUED or "skipped".

    The claim is a conditional update of `due_at` (the value we saw) to now + a lease, so
    two drainers never work on the same retry at once; a drainer that dies holding it
    lets the lease run out and another takes it. The apply deletes the retry item in
    the same transaction, so it is applied at most once; a failure pushes `due_at` out
    with exponential backoff. Nothing is ever dropped.
    """
    seen_due = retry.due_at
    attempts = int(retry.attempts or 0) + 1
    try:
        retry.update(
            actions=[FeedRetry.due_at.set(_now_ms() + FEED_RETRY_LEASE_MS), FeedRetry.attempts.set(attempts)],
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
                    FeedRetry.due_at.set(_now_ms() + _retry_delay_ms(attempts)),
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


# --- reading state changes --------------------------------------------------------


def feed_mark_read(*, user_id: str, entry_ids: list[str] | None = None) -> int:
    """Mark the given entries (all when `entry_ids` is None) read; returns how many were unread.

    Same version-conditioned put as an append (and the `feed` unread count with it), so
    a concurrent append is never lost: on a conflict the marking is recomputed on the
    newer feed. Twice: the second finds nothing unread and writes nothing. Unknown ids
    are ignored (they may have been capped away).
    """
    wanted = None if entry_ids is None else set(entry_ids)
    for attempt in range(FEED_WRITE_ATTEMPTS):
        feed = feed_read(user_id=user_id)
        marked = 0
        for entry in feed.entries:
            if not entry.read and (wanted is None or entry.entry_id in wanted):
                entry.read = True
                marked += 1
        if not marked:
            return 0
        feed.updated_at = now_iso()
        write = FeedWrite(
            user_id=user_id,
            already_applied=False,
            feed=feed,
            unread_count=feed_unread_entries(feed),
            read_version=feed.version,
        )
        if not transact(write.add_to, what="feed_mark_read"):
            return marked
        backoff_sleep(attempt, base=FEED_BACKOFF_BASE_SECONDS, cap=1.0)
    raise Conflict("The feed kept changing while it was marked read, retry shortly.")


# --- producers ----------------------------------------------------------------------

REPLY_EXCERPT_CHARS = 140


def _excerpt(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class ReplyNotification:
    """The feed event telling a comment's author about a reply, written through an outbox.

    `add_outbox_to(transaction)` joins the reply's own transaction, so the reply and the
    promise to notify commit together; `send()` then applies the event and deletes the
    outbox item. If `send()` fails or the process dies before
    it, `process_feed_retries` applies the event later: the reply never fails for it.
    """

    user_id: str  # the parent comment's author
    event: FeedEvent

    def add_outbox_to(self, transaction: TransactWrite) -> None:
        feed_outbox_add(transaction, user_id=self.user_id, event=self.event)

    def send(self) -> FeedAppendResult | None:
        try:
            return feed_append(user_id=self.user_id, event=self.event, outbox=True)
        except Exception:  # the reply is already posted; the outbox item keeps the event
            logger.exception("reply notification %s left to process_feed_retries", self.event.event_id)
            return None


def feed_reply_notification(
    *, reply_id: str, replier_id: str, parent_id: str, parent_author_id: str, body: str, created_at: str
) -> ReplyNotification | None:
    """The notification for a reply to `parent_id`, or None for a reply to one's own comment."""
    if replier_id == parent_author_id:
        return None
    event = FeedEvent(
        event_id=f"reply:{reply_id}",
        kind="reply",
        actor_id=replier_id,
        rollup_key=f"reply#{parent_id}",
        object_id=reply_id,  # the entry shows the reply's text, read when the feed is shown
        created_at=created_at,
    )
    return ReplyNotification(user_id=parent_author_id, event=event)
