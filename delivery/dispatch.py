"""Dispatching a delivery: claim a chunk, deliver its targets batch by batch
(`targets_deliver`, delivery/batches.py), complete it, finish the delivery.

Guarantees 2 and 4 of `delivery/services.py`: a message is delivered only in a
transaction that also deletes the user's target item (condition: it exists, in
delivery/batches.py), and a chunk's counts are folded into the delivery once, in the
transaction marking it done. `delivery_dispatch` is one dispatcher's loop; several may run at once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from delivery import batches
from delivery.leases import ChunkLease, chunk_claim, chunk_lease_release, chunk_lease_renew
from delivery.models import (
    CHUNK_DONE,
    CHUNK_PENDING,
    DISPATCHING,
    DONE,
    READY,
    Delivery,
    DeliveryChunk,
    chunk_key,
)
from delivery.selectors import delivery_get_consistent, item_get_consistent, targets_pending
from delivery.services import finish_transaction
from notifications.feed.events import FeedEvent
from project.clock import clock
from project.dynamo.retry import backoff_sleep
from project.dynamo.transactions import LabelledTransactWrite, transact
from project.errors import Conflict
from social.activity.services import activity_record_many

logger = logging.getLogger(__name__)


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

    An error on the way (DynamoDB unreachable, throttled beyond the retries) releases
    the lease before it is raised, so another dispatcher carries on at once instead of
    after the lease's expiry; a process killed outright leaves its lease to expire.
    """
    try:
        return _chunk_dispatch(
            lease=lease, event=event, batch_size=batch_size, should_stop=should_stop, on_delivered=on_delivered
        )
    except Exception:
        _lease_release_after_error(lease)
        raise


def _lease_release_after_error(lease: ChunkLease) -> None:
    try:
        chunk_lease_release(lease=lease)
    except Exception:  # the error that brought us here may stop this write too: the lease expires instead
        logger.warning("delivery %s chunk %s: lease not released; it expires", lease.delivery_id, lease.seq)
    else:
        logger.warning("delivery %s chunk %s: dispatch failed; lease released", lease.delivery_id, lease.seq)


def _chunk_dispatch(
    *,
    lease: ChunkLease,
    event: FeedEvent,
    batch_size: int,
    should_stop: Callable[[], bool],
    on_delivered: Callable[[int], None],
) -> ChunkOutcome:
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
            if lease.expires_at - clock.now() < lease.lease_seconds / 2 and not chunk_lease_renew(lease=lease):
                outcome.lost_lease = True
                return outcome
            result = batches.targets_deliver(
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
    chunk = item_get_consistent(DeliveryChunk, chunk_key(delivery_id, seq))
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

    def build(transaction: LabelledTransactWrite) -> None:
        transaction.update(
            chunk,
            actions=[DeliveryChunk.status.set(CHUNK_DONE), DeliveryChunk.done_at.set(clock.now_iso())],
            condition=(DeliveryChunk.status == CHUNK_PENDING)
            & (DeliveryChunk.delivered == chunk.delivered)
            & (DeliveryChunk.skipped == chunk.skipped),
            label="chunk",
        )
        transaction.update(
            Delivery(delivery_id),
            actions=[
                Delivery.delivered_count.add(int(chunk.delivered)),
                Delivery.skipped_count.add(int(chunk.skipped)),
                Delivery.chunks_done.add(1),
                Delivery.in_flight.delete({seq}),
                Delivery.updated_at.set(clock.now_iso()),
            ],
            condition=Delivery.delivery_id.exists(),
            label="delivery",
        )

    if not transact(build, what="delivery chunk complete").ok:
        again = item_get_consistent(DeliveryChunk, chunk_key(delivery_id, seq))
        return again is not None and again.status == CHUNK_DONE
    return True


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

    build = finish_transaction(
        delivery,
        status=DONE,
        condition=Delivery.status.is_in(READY, DISPATCHING)
        & (Delivery.cursor == delivery.chunk_count)
        & Delivery.in_flight.does_not_exist(),
    )

    if not transact(build, what="delivery finish").ok:
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
    event = batches.delivery_feed_event(delivery)
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
            clock.sleep(poll_seconds)
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
