"""Chunk leases: which dispatcher works on which chunk (guarantee 3 of `delivery/services.py`).

Leases only keep dispatchers from doing the same work twice; correctness never depends
on them. Lease times are `project.clock` seconds (tests move a `ManualClock`).
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import cast

from delivery.models import CHUNK_PENDING, DISPATCHING, READY, Delivery, DeliveryChunk, chunk_key
from delivery.selectors import delivery_get_consistent, item_get_consistent
from project.clock import clock
from project.dynamo.retry import backoff_sleep
from project.dynamo.transactions import LabelledTransactWrite, conditional_update, transact
from project.errors import Conflict

logger = logging.getLogger(__name__)

CLAIM_ATTEMPTS = 20


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
    for attempt in range(CLAIM_ATTEMPTS):
        delivery = delivery_get_consistent(delivery_id=delivery_id)
        if delivery.status not in (READY, DISPATCHING) or delivery.chunk_count is None:
            return None
        token = uuid.uuid4().hex
        now = clock.now()
        expires_at = now + lease_seconds
        cursor = int(delivery.cursor)
        if cursor < int(delivery.chunk_count):
            chunk = DeliveryChunk(chunk_key(delivery_id, cursor))

            def build(
                transaction: LabelledTransactWrite, cursor=cursor, chunk=chunk, token=token, expires_at=expires_at
            ) -> None:
                transaction.update(
                    Delivery(delivery_id),
                    actions=[
                        Delivery.cursor.set(cursor + 1),
                        Delivery.in_flight.add({cursor}),
                        Delivery.status.set(DISPATCHING),
                        Delivery.updated_at.set(clock.now_iso()),
                    ],
                    condition=(Delivery.cursor == cursor) & Delivery.status.is_in(READY, DISPATCHING),
                    label="delivery",
                )
                transaction.update(
                    chunk,
                    actions=_lease_actions(owner, token, expires_at),
                    condition=DeliveryChunk.status == CHUNK_PENDING,
                    label="chunk",
                )

            try:
                lost = not transact(build, what="delivery chunk claim").ok
            except Conflict:  # on AWS, claimers meeting on the delivery item cancel each other
                lost = True
            if lost:
                backoff_sleep(min(attempt, 4))
                continue  # another dispatcher took it (or the delivery changed): look again
            # Just claimed by this transaction, and no code deletes a chunk.
            claimed = cast(DeliveryChunk, item_get_consistent(DeliveryChunk, chunk.chunk_key))
            return ChunkLease(delivery_id, cursor, list(claimed.user_ids), owner, token, expires_at, lease_seconds)
        for seq in sorted(int(s) for s in (delivery.in_flight or ())):
            stale = item_get_consistent(DeliveryChunk, chunk_key(delivery_id, seq))
            if stale is None or stale.status != CHUNK_PENDING or stale.lease_expires_at > now:
                continue
            taken = conditional_update(
                stale,
                actions=_lease_actions(owner, token, expires_at),
                condition=(DeliveryChunk.status == CHUNK_PENDING)
                & (DeliveryChunk.lease_expires_at == stale.lease_expires_at)
                & (DeliveryChunk.lease_expires_at < now),
            )
            if taken:
                logger.info("delivery %s chunk %s taken over from %s", delivery_id, seq, stale.lease_owner)
                return ChunkLease(delivery_id, seq, list(stale.user_ids), owner, token, expires_at, lease_seconds)
        return None
    return None


def chunk_lease_renew(*, lease: ChunkLease) -> bool:
    """Extend the lease (condition: we still hold it). False when it was taken over."""
    expires_at = clock.now() + lease.lease_seconds
    renewed = conditional_update(
        DeliveryChunk(lease.chunk_key),
        actions=[DeliveryChunk.lease_expires_at.set(expires_at)],
        condition=(DeliveryChunk.lease_token == lease.token) & (DeliveryChunk.status == CHUNK_PENDING),
    )
    if renewed:
        lease.expires_at = expires_at
    return renewed


def chunk_lease_release(*, lease: ChunkLease) -> None:
    """Let another dispatcher take the chunk at once (stopping, or giving up on it for now)."""
    conditional_update(
        DeliveryChunk(lease.chunk_key),
        actions=[DeliveryChunk.lease_expires_at.set(0)],
        condition=(DeliveryChunk.lease_token == lease.token) & (DeliveryChunk.status == CHUNK_PENDING),
    )
