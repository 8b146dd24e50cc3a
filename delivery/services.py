"""Writes of the delivery room: create, prepare, claim, deliver, finish, cancel.

The guarantee (DESIGN.md 4, issue 5): every target of a delivery gets its message
exactly once, nobody else gets it, across crashes at any instant, re-runs and
several dispatchers on several machines. It rests on durable items and
conditions only (never on ClientRequestToken's 10-minute window):

1. Prepare freezes the audience into immutable chunk items (conditional put: the
   first writer's content wins) and writes one `delivery_targets` item per user.
   Target puts run in transactions with a condition check that the chunk's
   `targets_written` flag is still unset; the flag is set before the delivery can
   become `ready`, so a stalled preparer can never re-create a target after
   dispatch has deleted it.
2. A message is delivered only in a transaction that also deletes the user's
   target item (condition: it exists) and writes the feed (condition: the version
   read). A second attempt, by anyone, finds the target gone and commits nothing;
   a feed that changed in between cancels the whole transaction, which is retried
   with a fresh read. Nobody outside the chunks has a target item, so nobody else
   can receive the message.
3. Chunk leases only keep dispatchers from doing the same work twice; correctness
   does not depend on them. A holder whose lease expired and was taken over still
   carries the target-exists condition on every write.
4. Counts are exact by construction: a chunk's `delivered` is added in the same
   transactions that deliver, and folded into the delivery's `delivered_count` in
   the transaction that marks the chunk done (once: conditional on `pending`).
   Nothing needs repairing after a crash.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Max
from pynamodb.exceptions import DoesNotExist, PutError, UpdateError
from pynamodb.transactions import TransactWrite

from delivery.models import (
    AUDIENCE_ALL,
    AUDIENCE_GROUP,
    AUDIENCE_USERNAMES,
    CANCELLED,
    CHUNK_DONE,
    CHUNK_PENDING,
    DISPATCHING,
    DONE,
    DRAFT,
    FINAL_STATUSES,
    PREPARING,
    READY,
    Delivery,
    DeliveryChunk,
    DeliveryQueueEntry,
    DeliveryTarget,
)
from notifications.feed import FeedEvent, FeedWrite, feed_read_many, feed_write_compute
from project.errors import ApplicationError, Conflict, NotFound, Throttled
from project.retry import backoff_sleep
from project.transactions import ACTION_GROUPS, write_retrying
from project.transactions import transact_codes as transact  # positions until the split (issue 14, phase B)
from social.activity.services import activity_record_many

logger = logging.getLogger(__name__)

QUEUE = "active"
DELIVERY_ID = re.compile(r"[0-9a-f]{32}")
CHUNK_SIZE_MAX = 1000  # far below the 400 KB item limit whatever the id length
TRANSACTION_ACTIONS_MAX = 100  # TransactWriteItems limit
TARGET_PUTS_PER_TRANSACTION = TRANSACTION_ACTIONS_MAX - 1  # + the chunk's condition check
UNKNOWN_USERNAMES_KEPT = 1000
# Per target: the target delete, the feed put and the unread-count update; per
# batch: the delivery's status check and the chunk's count.
ACTIONS_PER_TARGET = 3
BATCH_SIZE_MAX = (TRANSACTION_ACTIONS_MAX - 2) // ACTIONS_PER_TARGET


def chunk_size() -> int:
    return max(1, min(CHUNK_SIZE_MAX, int(getattr(settings, "DELIVERY_CHUNK_SIZE", CHUNK_SIZE_MAX))))


def clock() -> float:
    """Wall-clock seconds for leases (patched by tests to make a lease expire)."""
    return time.time()


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def chunk_key(delivery_id: str, seq: int) -> str:
    return f"{delivery_id}#{seq}"


def _conditional_update(item, *, actions, condition) -> bool:
    """One UpdateItem; False when its condition failed (another writer got there first)."""
    try:
        write_retrying(lambda: item.update(actions=actions, condition=condition), what="delivery update")
    except UpdateError as error:
        if error.cause_response_code == "ConditionalCheckFailedException":
            return False
        raise
    return True


def _get(model, *keys):
    try:
        return model.get(*keys, consistent_read=True)
    except DoesNotExist:
        return None


def delivery_get_consistent(*, delivery_id: str) -> Delivery:
    delivery = _get(Delivery, delivery_id) if DELIVERY_ID.fullmatch(delivery_id or "") else None
    if delivery is None:
        raise NotFound("No such delivery.")
    return delivery


# --- create ---------------------------------------------------------------


@dataclass(frozen=True)
class Audience:
    """Who a delivery goes to: every active user, one Django group, or named users."""

    kind: str
    group: str | None = None
    usernames: tuple[str, ...] = ()
    ignore_unknown: bool = False


class UnknownUsernames(ApplicationError):
    """Some usernames match no active account: reported, never silently dropped."""

    def __init__(self, unknown: list[str]):
        shown = ", ".join(unknown[:20]) + (f" and {len(unknown) - 20} more" if len(unknown) > 20 else "")
        super().__init__(
            f"{len(unknown)} username(s) match no active account: {shown}. "
            "Fix the list, or send to the known ones only (ignore_unknown).",
            field="audience",
        )
        self.unknown = unknown


def clean_usernames(raw: list[str] | tuple[str, ...]) -> list[str]:
    """Strip, drop blanks and duplicates, sort (so resolving and chunking are deterministic)."""
    return sorted({name.strip().lstrip("@") for name in raw if name and name.strip().lstrip("@")})


def _resolve_usernames(names: list[str]) -> Iterator[tuple[list[str], list[str]]]:
    """(user ids, unknown names) per slice of at most one chunk of names."""
    User = get_user_model()
    size = chunk_size()
    for start in range(0, len(names), size):
        batch = names[start : start + size]
        found = dict(
            User.objects.filter(username__in=batch, is_active=True).values_list("username", "pk").order_by("pk")
        )
        yield [str(found[name]) for name in batch if name in found], [name for name in batch if name not in found]


def delivery_create(*, title: str, body: str, url: str | None, audience: Audience, created_by) -> Delivery:
    """Create a delivery in `draft`; the dispatcher (or the admin's Prepare) prepares it.

    A usernames audience is resolved now, so unknown names are reported to the
    person creating it (UnknownUsernames, a 400) unless `ignore_unknown`; its chunks
    are frozen here (the list is already in the request), before the delivery item
    exists. The delivery and its queue entry are written in one transaction, last:
    a crash before it leaves only chunks no delivery points at (they hold no
    targets, so nobody can receive anything from them).

    Twice: two deliveries (each call mints its own id).
    """
    from django.contrib.auth.models import Group

    title, body = title.strip(), body.strip()
    if not title:
        raise ApplicationError("The title is empty.", field="title")
    if not body:
        raise ApplicationError("The body is empty.", field="body")
    delivery_id = uuid.uuid4().hex
    # The message becomes a feed entry: the feed's bounds apply (FeedEventTooLarge is a 400).
    FeedEvent(f"delivery#{delivery_id}", "message", None, None, title, body, url or "", delivery_id)
    created_at = now_iso()
    delivery = Delivery(
        delivery_id,
        title=title,
        body=body,
        url=url or None,
        audience_kind=audience.kind,
        status=DRAFT,
        created_by_id=str(created_by.pk),
        created_by_name=created_by.get_username(),
        created_at=created_at,
        updated_at=created_at,
    )
    if audience.kind == AUDIENCE_GROUP:
        if not audience.group or not Group.objects.filter(name=audience.group).exists():
            raise ApplicationError(f"No group named {audience.group!r}.", field="audience")
        delivery.audience_group = audience.group
    elif audience.kind == AUDIENCE_USERNAMES:
        names = clean_usernames(audience.usernames)
        if not names:
            raise ApplicationError("The list of usernames is empty.", field="audience")
        delivery.audience_requested = len(names)
        resolved = list(_resolve_usernames(names))
        unknown = [name for _, missing in resolved for name in missing]
        if unknown and not audience.ignore_unknown:
            raise UnknownUsernames(unknown)
        seq = 0
        for user_ids, _ in resolved:
            if user_ids:
                DeliveryChunk(chunk_key(delivery_id, seq), delivery_id=delivery_id, seq=seq, user_ids=user_ids).save(
                    condition=DeliveryChunk.chunk_key.does_not_exist()
                )
                seq += 1
        delivery.chunk_count = seq
        delivery.unknown_usernames = unknown[:UNKNOWN_USERNAMES_KEPT] or None
        delivery.unknown_count = len(unknown)
    elif audience.kind != AUDIENCE_ALL:
        raise ApplicationError(f"Unknown audience kind {audience.kind!r}.", field="audience")

    def build(transaction: TransactWrite) -> None:
        transaction.save(delivery, condition=Delivery.delivery_id.does_not_exist())
        transaction.save(
            DeliveryQueueEntry(QUEUE, delivery_id, created_at=created_at),
            condition=DeliveryQueueEntry.delivery_id.does_not_exist(),
        )

    transact(build, what="delivery_create")
    logger.info(
        "delivery %s created by %s (audience %s%s)",
        delivery_id,
        delivery.created_by_name,
        audience.kind,
        f", {delivery.unknown_count} unknown usernames left out" if delivery.unknown_count else "",
    )
    return delivery


# --- prepare --------------------------------------------------------------


def _audience_ids_after(delivery: Delivery, *, after: int, limit: int) -> list[str]:
    """The next `limit` user ids of an all/group audience after `after` (keyset, ascending).

    Bounded by `audience_max_id`, so the audience is the one that existed when
    preparing began; one slice at a time, so memory does not grow with it.
    """
    User = get_user_model()
    users = User.objects.filter(is_active=True, pk__gt=after)
    if delivery.audience_max_id is not None:
        users = users.filter(pk__lte=int(delivery.audience_max_id))
    if delivery.audience_kind == AUDIENCE_GROUP:
        users = users.filter(groups__name=delivery.audience_group)
    return [str(pk) for pk in users.order_by("pk").values_list("pk", flat=True)[:limit]]


def _chunk_freeze(delivery: Delivery, seq: int) -> DeliveryChunk | None:
    """Chunk `seq`, frozen now from the audience query if it does not exist yet.

    None when the audience has no one left (all/group). The put is conditional, so
    when two preparers race the first content wins and both go on with it.
    """
    existing = _get(DeliveryChunk, chunk_key(delivery.delivery_id, seq))
    if existing is not None or delivery.audience_kind == AUDIENCE_USERNAMES:
        return existing
    user_ids = _audience_ids_after(delivery, after=int(delivery.prepare_after), limit=chunk_size())
    if not user_ids:
        return None
    chunk = DeliveryChunk(chunk_key(delivery.delivery_id, seq), delivery_id=delivery.delivery_id, seq=seq)
    chunk.user_ids = user_ids
    try:
        write_retrying(lambda: chunk.save(condition=DeliveryChunk.chunk_key.does_not_exist()), what="chunk freeze")
    except PutError as error:
        if error.cause_response_code != "ConditionalCheckFailedException":
            raise
        return _get(DeliveryChunk, chunk.chunk_key)
    return chunk


def _chunk_targets_write(chunk: DeliveryChunk) -> None:
    """Write the chunk's target items, then flag the chunk `targets_written`.

    Each transaction checks the flag is still unset: once it is set (by us or a
    concurrent preparer) no target of this chunk can ever be put again, so a
    delivered (deleted) target is never resurrected. Re-putting a target before
    the flag is harmless: nobody delivers before the delivery is `ready`.
    """
    if chunk.targets_written:
        return
    user_ids = list(chunk.user_ids)
    for start in range(0, len(user_ids), TARGET_PUTS_PER_TRANSACTION):
        slice_ids = user_ids[start : start + TARGET_PUTS_PER_TRANSACTION]

        def build(transaction: TransactWrite, slice_ids=slice_ids) -> None:
            transaction.condition_check(
                DeliveryChunk,
                chunk.chunk_key,
                condition=DeliveryChunk.targets_written == False,  # noqa: E712
            )
            for user_id in slice_ids:
                transaction.save(DeliveryTarget(user_id, chunk.delivery_id, chunk_seq=chunk.seq))

        if transact(build, what="delivery targets write"):
            return  # another preparer finished this chunk's targets
    _conditional_update(
        chunk,
        actions=[DeliveryChunk.targets_written.set(True)],
        condition=DeliveryChunk.chunk_key.exists(),
    )


def delivery_prepare(*, delivery_id: str, should_stop: Callable[[], bool] = lambda: False) -> Delivery:
    """Freeze the audience into chunks and target items; `draft -> preparing -> ready`.

    Streaming: one chunk of user ids in memory at a time. Idempotent and resumable:
    the delivery item records how many chunks are complete and the keyset position
    of the audience query, both advanced by one conditional update per chunk, and
    each chunk's content is immutable once written; a re-run after a crash at any
    point resumes at the first incomplete chunk and produces the same chunks and
    targets (no duplicates: a target's key is (user, delivery); no gaps: a chunk
    counts as prepared only after its targets are written). Concurrent preparers
    of the same delivery are safe (every step is conditional), just wasteful.
    Returns the delivery as it stands (`ready`, or cancelled/done if it was).
    """
    delivery = delivery_get_consistent(delivery_id=delivery_id)
    if delivery.status == DRAFT:
        actions = [Delivery.status.set(PREPARING), Delivery.updated_at.set(now_iso())]
        if delivery.audience_kind != AUDIENCE_USERNAMES:
            top = get_user_model().objects.aggregate(top=Max("pk"))["top"] or 0
            actions.append(Delivery.audience_max_id.set(top))
        _conditional_update(delivery, actions=actions, condition=Delivery.status == DRAFT)
        delivery = delivery_get_consistent(delivery_id=delivery_id)
    while delivery.status == PREPARING and not should_stop():
        seq = int(delivery.frozen_chunks)
        if delivery.chunk_count is not None and seq >= int(delivery.chunk_count):
            _conditional_update(
                delivery,
                actions=[Delivery.status.set(READY), Delivery.updated_at.set(now_iso())],
                condition=(Delivery.status == PREPARING) & (Delivery.frozen_chunks == delivery.chunk_count),
            )
            logger.info(
                "delivery %s ready: %s targets in %s chunks", delivery_id, delivery.total_targets, delivery.chunk_count
            )
        else:
            chunk = _chunk_freeze(delivery, seq)
            if chunk is None:  # the audience is exhausted: the chunk count is known now
                _conditional_update(
                    delivery,
                    actions=[Delivery.chunk_count.set(seq)],
                    condition=(Delivery.status == PREPARING) & (Delivery.frozen_chunks == seq),
                )
            else:
                _chunk_targets_write(chunk)
                actions = [
                    Delivery.frozen_chunks.set(seq + 1),
                    Delivery.total_targets.add(len(chunk.user_ids)),
                    Delivery.updated_at.set(now_iso()),
                ]
                if delivery.audience_kind != AUDIENCE_USERNAMES:
                    actions.append(Delivery.prepare_after.set(int(chunk.user_ids[-1])))
                _conditional_update(
                    delivery,
                    actions=actions,
                    condition=(Delivery.status == PREPARING) & (Delivery.frozen_chunks == seq),
                )
        delivery = delivery_get_consistent(delivery_id=delivery_id)
    return delivery


# --- dispatch: leases -----------------------------------------------------


@dataclass
class ChunkLease:
    """A chunk claimed by one dispatcher until `expires_at` (renewed while it works)."""

    delivery_id: str
    seq: int
    user_ids: list[str]
    owner: str
    token: str
    expires_at: float
    lease_seconds: float

    @property
    def chunk_key(self) -> str:
        return chunk_key(self.delivery_id, self.seq)


def _lease_actions(owner: str, token: str, expires_at: float) -> list:
    return [
        DeliveryChunk.lease_owner.set(owner),
        DeliveryChunk.lease_token.set(token),
        DeliveryChunk.lease_expires_at.set(expires_at),
    ]


def chunk_claim(*, delivery_id: str, owner: str, lease_seconds: float) -> ChunkLease | None:
    """Claim the next chunk to dispatch, or take over one whose lease expired.

    Handing out a new chunk is one transaction: advance the delivery's cursor
    (condition: it still points at that chunk), add the chunk to `in_flight`, set
    `dispatching`, and lease the chunk (condition: still pending). Two claimers
    never get the same chunk; a crash leaves either nothing or a leased chunk that
    is listed in `in_flight`, where it is taken over once its lease expires
    (conditional on the old token and the expiry, so two takers can't both win).
    None when there is nothing to claim right now (all handed out and leased, or
    the delivery is not dispatchable).
    """
    for attempt in range(20):
        delivery = delivery_get_consistent(delivery_id=delivery_id)
        if delivery.status not in (READY, DISPATCHING) or delivery.chunk_count is None:
            return None
        token = uuid.uuid4().hex
        now = clock()
        expires_at = now + lease_seconds
        cursor = int(delivery.cursor)
        if cursor < int(delivery.chunk_count):
            chunk = DeliveryChunk(chunk_key(delivery_id, cursor))

            def build(
                transaction: TransactWrite, cursor=cursor, chunk=chunk, token=token, expires_at=expires_at
            ) -> None:
                transaction.update(
                    Delivery(delivery_id),
                    actions=[
                        Delivery.cursor.set(cursor + 1),
                        Delivery.in_flight.add({cursor}),
                        Delivery.status.set(DISPATCHING),
                        Delivery.updated_at.set(now_iso()),
                    ],
                    condition=(Delivery.cursor == cursor) & Delivery.status.is_in(READY, DISPATCHING),
                )
                transaction.update(
                    chunk,
                    actions=_lease_actions(owner, token, expires_at),
                    condition=DeliveryChunk.status == CHUNK_PENDING,
                )

            try:
                lost = bool(transact(build, what="delivery chunk claim"))
            except Conflict:  # on AWS, claimers meeting on the delivery item cancel each other
                lost = True
            if lost:
                backoff_sleep(min(attempt, 4))
                continue  # another dispatcher took it (or the delivery changed): look again
            claimed = _get(DeliveryChunk, chunk.chunk_key)
            return ChunkLease(delivery_id, cursor, list(claimed.user_ids), owner, token, expires_at, lease_seconds)
        for seq in sorted(int(s) for s in (delivery.in_flight or ())):
            chunk = _get(DeliveryChunk, chunk_key(delivery_id, seq))
            if chunk is None or chunk.status != CHUNK_PENDING or chunk.lease_expires_at > now:
                continue
            taken = _conditional_update(
                chunk,
                actions=_lease_actions(owner, token, expires_at),
                condition=(DeliveryChunk.status == CHUNK_PENDING)
                & (DeliveryChunk.lease_expires_at == chunk.lease_expires_at)
                & (DeliveryChunk.lease_expires_at < now),
            )
            if taken:
                logger.info("delivery %s chunk %s taken over from %s", delivery_id, seq, chunk.lease_owner)
                return ChunkLease(delivery_id, seq, list(chunk.user_ids), owner, token, expires_at, lease_seconds)
        return None
    return None


def chunk_lease_renew(*, lease: ChunkLease) -> bool:
    """Extend the lease (condition: we still hold it). False when it was taken over."""
    expires_at = clock() + lease.lease_seconds
    renewed = _conditional_update(
        DeliveryChunk(lease.chunk_key),
        actions=[DeliveryChunk.lease_expires_at.set(expires_at)],
        condition=(DeliveryChunk.lease_token == lease.token) & (DeliveryChunk.status == CHUNK_PENDING),
    )
    if renewed:
        lease.expires_at = expires_at
    return renewed


def chunk_lease_release(*, lease: ChunkLease) -> None:
    """Let another dispatcher take the chunk at once (stopping, or giving up on it for now)."""
    _conditional_update(
        DeliveryChunk(lease.chunk_key),
        actions=[DeliveryChunk.lease_expires_at.set(0)],
        condition=(DeliveryChunk.lease_token == lease.token) & (DeliveryChunk.status == CHUNK_PENDING),
    )


# --- dispatch: delivering a chunk -------------------------------------------


def targets_pending(*, delivery_id: str, user_ids: list[str]) -> list[str]:
    """Those of `user_ids` whose target item still exists (strongly consistent BatchGetItem)."""
    found = {
        target.user_id
        for target in DeliveryTarget.batch_get(
            [(user_id, delivery_id) for user_id in user_ids], consistent_read=True, attributes_to_get=["user_id"]
        )
    }
    return [user_id for user_id in user_ids if user_id in found]


def delivery_feed_event(delivery: Delivery) -> FeedEvent:
    """The feed entry a delivery becomes: one event id per delivery, so a second merge is a no-op."""
    return FeedEvent(
        event_id=f"delivery#{delivery.delivery_id}",
        kind="message",
        actor_id=None,
        rollup_key=None,
        delivery_id=delivery.delivery_id,  # the entry shows the delivery's title and body, read when shown
    )


class _ActionPositions:
    """Which TransactItems positions each target's actions take (in the order
    `project.transactions.ACTION_GROUPS` says PynamoDB sends them)."""

    GROUPS = ACTION_GROUPS

    def __init__(self, transaction: TransactWrite):
        self.transaction = transaction
        self.spans: dict[str, list[tuple[int, int]]] = {}

    def _lengths(self) -> list[int]:
        return [len(getattr(self.transaction, group)) for group in self.GROUPS]

    def record(self, key: str, add: Callable[[], None]) -> None:
        before = self._lengths()
        add()
        after = self._lengths()
        self.spans[key] = [(group, index) for group in range(4) for index in range(before[group], after[group])]

    def total(self) -> int:
        return sum(self._lengths())

    def failed(self, key: str, codes: list[str | None]) -> bool:
        lengths = self._lengths()
        offsets = [sum(lengths[:group]) for group in range(4)]
        return any(
            codes[offsets[group] + index] not in (None, "None")
            for group, index in self.spans.get(key, [])
            if offsets[group] + index < len(codes)
        )


@dataclass
class BatchResult:
    delivered: list[str] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)  # target no longer exists: someone else did it
    deferred: list[str] = field(default_factory=list)  # kept conflicting: try again later
    cancelled: bool = False  # the delivery is no longer dispatching


FEED_ATTEMPTS = 5


def _prepare_feed_writes(user_ids: list[str], event: FeedEvent) -> dict[str, FeedWrite]:
    """Each target's feed with the event applied: one consistent BatchGetItem for the batch."""
    feeds = feed_read_many(user_ids=user_ids)
    return {user_id: feed_write_compute(feed=feeds[user_id], event=event) for user_id in user_ids}


def targets_deliver(*, delivery_id: str, seq: int, user_ids: list[str], event: FeedEvent) -> BatchResult:
    """Deliver to `user_ids` (targets of chunk `seq`) in as few transactions as possible.

    One transaction per batch: a condition check that the delivery is still
    `dispatching` (so nothing is delivered after a cancel commits), an ADD of the
    batch size to the chunk's `delivered`, and per target the delete of its target
    item (condition: exists) plus its version-conditioned feed write. When DynamoDB
    cancels it, the reasons say which target failed: targets already gone are
    dropped (someone delivered them), feeds that moved are re-read, the rest goes
    again; when conflicts persist the batch is split in halves, down to single
    targets, and a single target that still fails is deferred, so one conflict
    never stalls the others.

    Twice or concurrently: the second transaction for a target finds it gone. Dies
    half way: each transaction is all or nothing; what did not commit is still
    pending and is found by the next consistent read of the chunk.
    """
    result = BatchResult()
    remaining = list(user_ids)
    for attempt in range(FEED_ATTEMPTS):
        if not remaining:
            return result
        writes = _prepare_feed_writes(remaining, event)
        with_actions: dict[str, object] = {}

        def build(transaction: TransactWrite, writes=writes, with_actions=with_actions) -> None:
            positions = _ActionPositions(transaction)
            with_actions["positions"] = positions
            positions.record(
                "#delivery",
                lambda: transaction.condition_check(Delivery, delivery_id, condition=Delivery.status == DISPATCHING),
            )
            positions.record(
                "#chunk",
                lambda: transaction.update(
                    DeliveryChunk(chunk_key(delivery_id, seq)),
                    actions=[DeliveryChunk.delivered.add(len(writes))],
                    condition=DeliveryChunk.status == CHUNK_PENDING,
                ),
            )
            for user_id, write in writes.items():

                def add(user_id=user_id, write=write) -> None:
                    transaction.delete(DeliveryTarget(user_id, delivery_id), condition=DeliveryTarget.user_id.exists())
                    if not write.already_applied:
                        # Nothing to write when the event is already in the feed (a second
                        # line of defence): deleting the target is all that is left to do.
                        write.add_to(transaction)

                positions.record(user_id, add)
            if positions.total() > TRANSACTION_ACTIONS_MAX:
                raise ValueError(f"batch of {len(writes)} targets needs {positions.total()} actions (max 100)")

        try:
            codes = transact(build, what="delivery batch")
        except (Conflict, Throttled):
            if len(remaining) == 1:
                result.deferred.extend(remaining)
                return result
            half = len(remaining) // 2
            for part in (remaining[:half], remaining[half:]):
                sub = targets_deliver(delivery_id=delivery_id, seq=seq, user_ids=part, event=event)
                result.delivered += sub.delivered
                result.gone += sub.gone
                result.deferred += sub.deferred
                if sub.cancelled:
                    result.cancelled = True
                    return result
            return result
        if not codes:
            result.delivered.extend(remaining)
            return result
        positions: _ActionPositions = with_actions["positions"]
        if positions.failed("#delivery", codes):
            result.cancelled = True
            return result
        gone = [user_id for user_id in remaining if codes[_delete_position(positions, user_id)] not in (None, "None")]
        result.gone.extend(gone)
        remaining = [user_id for user_id in remaining if user_id not in gone]
        moved = [user_id for user_id in remaining if positions.failed(user_id, codes)]
        if moved and len(moved) < len(remaining):
            # Deliver the others now, without the feeds that moved under us: a busy
            # feed must not hold its whole batch back.
            others = [user_id for user_id in remaining if user_id not in moved]
            sub = targets_deliver(delivery_id=delivery_id, seq=seq, user_ids=others, event=event)
            result.delivered += sub.delivered
            result.gone += sub.gone
            result.deferred += sub.deferred
            if sub.cancelled:
                result.cancelled = True
                return result
            remaining = moved
        if moved:
            backoff_sleep(attempt)  # re-read the feeds that moved after a short pause
    result.deferred.extend(remaining)
    return result


def _delete_position(positions: _ActionPositions, user_id: str) -> int:
    lengths = positions._lengths()
    group, index = next(span for span in positions.spans[user_id] if span[0] == 1)
    return sum(lengths[:group]) + index


@dataclass
class ChunkOutcome:
    """What a dispatcher achieved on one chunk."""

    seq: int
    delivered: int = 0
    finished: bool = False  # the chunk is done (by us or someone else)
    stopped: bool = False  # asked to stop: lease released, work left for others
    lost_lease: bool = False  # another dispatcher took the chunk over
    cancelled: bool = False
    deferred: int = 0  # targets that kept conflicting (chunk released for a later attempt)


def chunk_dispatch(
    *,
    lease: ChunkLease,
    event: FeedEvent,
    batch_size: int,
    should_stop: Callable[[], bool] = lambda: False,
    on_delivered: Callable[[int], None] = lambda n: None,
) -> ChunkOutcome:
    """Deliver every pending target of a leased chunk, then mark it done.

    Reads the chunk's pending targets with strongly consistent reads, delivers them
    `batch_size` at a time (`targets_deliver`), renews the lease when half of it is
    gone and stops if it was taken over (the new holder carries on; any late write
    of ours is harmless, see the module doc). Stops between batches when asked,
    releasing the lease. A chunk is done only when a consistent read shows none of
    its targets left.
    """
    outcome = ChunkOutcome(seq=lease.seq)
    for _round in range(3):
        pending = targets_pending(delivery_id=lease.delivery_id, user_ids=lease.user_ids)
        if not pending:
            return _chunk_complete_or_release(lease, outcome)
        deferred: list[str] = []
        for start in range(0, len(pending), batch_size):
            if should_stop():
                chunk_lease_release(lease=lease)
                outcome.stopped = True
                return outcome
            if lease.expires_at - clock() < lease.lease_seconds / 2 and not chunk_lease_renew(lease=lease):
                outcome.lost_lease = True
                return outcome
            result = targets_deliver(
                delivery_id=lease.delivery_id, seq=lease.seq, user_ids=pending[start : start + batch_size], event=event
            )
            if result.delivered:
                outcome.delivered += len(result.delivered)
                activity_record_many(user_ids=result.delivered, action="delivery_received", object_id=lease.delivery_id)
                on_delivered(len(result.delivered))
            if result.cancelled:
                outcome.cancelled = True
                return outcome
            deferred += result.deferred
        if deferred:
            backoff_sleep(4)
    outcome.deferred = len(targets_pending(delivery_id=lease.delivery_id, user_ids=lease.user_ids))
    if outcome.deferred:
        logger.warning(
            "delivery %s chunk %s: %d targets kept conflicting; chunk released for a later attempt",
            lease.delivery_id,
            lease.seq,
            outcome.deferred,
        )
        chunk_lease_release(lease=lease)
        return outcome
    return _chunk_complete_or_release(lease, outcome)


def _chunk_complete_or_release(lease: ChunkLease, outcome: ChunkOutcome) -> ChunkOutcome:
    """Complete a chunk with no targets left; if its transaction keeps meeting others on
    the delivery item (AWS), release the lease so the next claimer completes it at once."""
    try:
        outcome.finished = chunk_complete(delivery_id=lease.delivery_id, seq=lease.seq)
    except Conflict:
        logger.warning("delivery %s chunk %s: completion kept conflicting; released", lease.delivery_id, lease.seq)
        chunk_lease_release(lease=lease)
    return outcome


def chunk_complete(*, delivery_id: str, seq: int) -> bool:
    """Mark a chunk whose targets are all gone `done` and fold its counts into the delivery.

    One transaction: the chunk goes `pending -> done` on condition its counts are
    the ones just read, and the delivery's `delivered_count`/`skipped_count` grow by
    them, `chunks_done` by one, and the chunk leaves `in_flight`. So the counts are
    added exactly once whoever completes the chunk and whenever a crash happens.
    With no targets left, no transaction can change the chunk's counts any more.
    """
    chunk = _get(DeliveryChunk, chunk_key(delivery_id, seq))
    if chunk is None:
        return False
    if chunk.status == CHUNK_DONE:
        return True
    size = len(chunk.user_ids)
    if int(chunk.delivered) + int(chunk.skipped) != size:
        logger.error(
            "delivery %s chunk %s: %s delivered + %s skipped != %s targets",
            delivery_id,
            seq,
            chunk.delivered,
            chunk.skipped,
            size,
        )

    def build(transaction: TransactWrite) -> None:
        transaction.update(
            chunk,
            actions=[DeliveryChunk.status.set(CHUNK_DONE), DeliveryChunk.done_at.set(now_iso())],
            condition=(DeliveryChunk.status == CHUNK_PENDING)
            & (DeliveryChunk.delivered == chunk.delivered)
            & (DeliveryChunk.skipped == chunk.skipped),
        )
        transaction.update(
            Delivery(delivery_id),
            actions=[
                Delivery.delivered_count.add(int(chunk.delivered)),
                Delivery.skipped_count.add(int(chunk.skipped)),
                Delivery.chunks_done.add(1),
                Delivery.in_flight.delete({seq}),
                Delivery.updated_at.set(now_iso()),
            ],
            condition=Delivery.delivery_id.exists(),
        )

    if transact(build, what="delivery chunk complete"):
        chunk = _get(DeliveryChunk, chunk_key(delivery_id, seq))
        return chunk is not None and chunk.status == CHUNK_DONE
    return True


def _finish_transaction(delivery: Delivery, *, status: str, condition) -> Callable[[TransactWrite], None]:
    """A transaction that moves `delivery` to a final `status` (on `condition`) and takes
    it off the dispatch queue: both or neither."""

    def build(transaction: TransactWrite) -> None:
        finished_at = now_iso()
        transaction.update(
            delivery,
            actions=[
                Delivery.status.set(status),
                Delivery.finished_at.set(finished_at),
                Delivery.updated_at.set(finished_at),
            ],
            condition=condition,
        )
        transaction.delete(DeliveryQueueEntry(QUEUE, delivery.delivery_id))

    return build


def delivery_finish(*, delivery_id: str) -> bool:
    """`dispatching`/`ready` -> `done` once every chunk was handed out and completed.

    Conditional on the cursor being at the end and nothing in flight; the queue
    entry is deleted in the same transaction. True when the delivery is done.
    """
    delivery = delivery_get_consistent(delivery_id=delivery_id)
    if delivery.status == DONE:
        return True
    if delivery.status not in (READY, DISPATCHING) or delivery.chunk_count is None:
        return False
    if int(delivery.cursor) < int(delivery.chunk_count) or delivery.in_flight:
        return False

    build = _finish_transaction(
        delivery,
        status=DONE,
        condition=Delivery.status.is_in(READY, DISPATCHING)
        & (Delivery.cursor == delivery.chunk_count)
        & Delivery.in_flight.does_not_exist(),
    )

    if transact(build, what="delivery finish"):
        return delivery_get_consistent(delivery_id=delivery_id).status == DONE
    logger.info(
        "delivery %s done: %s delivered, %s skipped of %s targets",
        delivery_id,
        delivery.delivered_count,
        delivery.skipped_count,
        delivery.total_targets,
    )
    return True


# --- a dispatcher ------------------------------------------------------------


@dataclass
class DispatchReport:
    delivery_id: str
    status: str
    delivered: int = 0
    chunks: int = 0
    unfinished_chunks: int = 0  # released after persistent conflicts (exit non-zero)


def delivery_dispatch(
    *,
    delivery_id: str,
    owner: str,
    batch_size: int,
    lease_seconds: float,
    should_stop: Callable[[], bool] = lambda: False,
    on_delivered: Callable[[int], None] = lambda n: None,
    wait_for_others: bool = True,
    poll_seconds: float = 0.5,
) -> DispatchReport:
    """One dispatcher's loop on one delivery: claim a chunk, deliver it, repeat.

    Runs until the delivery is done, cancelled, or (with `wait_for_others=False`)
    nothing is claimable. With `wait_for_others`, it waits for chunks other
    dispatchers hold and takes them over if their lease expires (their holder
    died). Several of these may run at once, in threads or on other machines.
    """
    report = DispatchReport(delivery_id=delivery_id, status="")
    delivery = delivery_get_consistent(delivery_id=delivery_id)
    event = delivery_feed_event(delivery)
    given_up: dict[int, int] = {}
    while not should_stop():
        lease = chunk_claim(delivery_id=delivery_id, owner=owner, lease_seconds=lease_seconds)
        if lease is None:
            try:
                if delivery_finish(delivery_id=delivery_id):
                    break
            except Conflict:  # other dispatchers finishing at the same moment (AWS): look again
                pass
            delivery = delivery_get_consistent(delivery_id=delivery_id)
            if delivery.status not in (READY, DISPATCHING) or not wait_for_others:
                break
            if delivery.in_flight and {int(s) for s in delivery.in_flight} <= set(given_up):
                break  # only chunks we gave up on are left: report them
            time.sleep(poll_seconds)
            continue
        outcome = chunk_dispatch(
            lease=lease, event=event, batch_size=batch_size, should_stop=should_stop, on_delivered=on_delivered
        )
        report.delivered += outcome.delivered
        report.chunks += int(outcome.finished)
        if outcome.cancelled:
            break
        if outcome.deferred:
            given_up[lease.seq] = given_up.get(lease.seq, 0) + 1
            if given_up[lease.seq] >= 3:
                report.unfinished_chunks += 1
                break
    report.status = delivery_get_consistent(delivery_id=delivery_id).status
    return report


# --- cancel and account deletion ----------------------------------------------


def delivery_cancel(*, delivery_id: str) -> Delivery:
    """Cancel: nothing more is delivered; what was delivered stays (and stays counted).

    One transaction sets `cancelled` (condition: not done/cancelled yet) and removes
    the queue entry. Every delivery transaction checks `dispatching` on the delivery
    item, so a batch either committed before the cancel or fails after it.
    Twice: the second call changes nothing and returns the cancelled delivery.
    """
    delivery = delivery_get_consistent(delivery_id=delivery_id)
    if delivery.status in FINAL_STATUSES:
        if delivery.status == DONE:
            raise ApplicationError("This delivery is already done; it can't be cancelled.", field="status")
        return delivery

    build = _finish_transaction(delivery, status=CANCELLED, condition=~Delivery.status.is_in(*FINAL_STATUSES))

    if transact(build, what="delivery cancel"):
        return delivery_cancel(delivery_id=delivery_id)  # it changed meanwhile: answer from the new state
    logger.info("delivery %s cancelled", delivery_id)
    return delivery_get_consistent(delivery_id=delivery_id)


def delivery_targets_drop_for_user(*, user_id: str) -> int:
    """A user deleted their account: drop their pending targets (they receive nothing more).

    Per target, one transaction deletes it (condition: exists, and its chunk's
    targets are all written, so a preparer can't put it back) and adds 1 to the
    chunk's `skipped`, so delivered + skipped still equals the chunk's size.
    Returns how many were dropped. Twice: the second finds nothing.
    """
    dropped = 0
    for target in DeliveryTarget.query(user_id, consistent_read=True):

        def build(transaction: TransactWrite, target=target) -> None:
            transaction.delete(target, condition=DeliveryTarget.user_id.exists())
            transaction.update(
                DeliveryChunk(chunk_key(target.delivery_id, int(target.chunk_seq))),
                actions=[DeliveryChunk.skipped.add(1)],
                condition=(DeliveryChunk.status == CHUNK_PENDING) & (DeliveryChunk.targets_written == True),  # noqa: E712
            )

        if not transact(build, what="delivery target drop"):
            dropped += 1
    if dropped:
        logger.info("user %s deleted: %d pending delivery target(s) dropped", user_id, dropped)
    return dropped
