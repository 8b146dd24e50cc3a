"""Reads of the delivery room. No Scan: key lookups, Queries and BatchGetItem only.

The staff listing takes its order from the `by_created` GSI (eventually consistent) and
reads what it shows strongly consistently; everything a dispatcher decides on is read
strongly consistently (the helpers below, used by the write modules too).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from django.utils.translation import gettext
from pynamodb.exceptions import DoesNotExist

from delivery.models import (
    CANCELLED,
    CHUNK_DONE,
    DISPATCHING,
    LIST_BUCKET,
    QUEUE,
    Delivery,
    DeliveryChunk,
    DeliveryQueueEntry,
    DeliveryTarget,
    chunk_key,
)
from project.clock import clock, parse_iso
from project.dynamo.cursors import HEX_ID, ISO_AT, cursor_encode, cursor_fields
from project.errors import NotFound
from project.operations.backlog import Backlog

if TYPE_CHECKING:
    from pynamodb.models import Model

PAGE_SIZE = 20
PAGE_SIZE_MAX = 100
PENDING_SHOWN = 50
DELIVERY_ID = re.compile(r"[0-9a-f]{32}")

_M = TypeVar("_M", bound="Model")


def item_get_consistent(model: type[_M], hash_key: Any, range_key: Any = None) -> _M | None:
    """One item by key, strongly consistent; None when there is none."""
    try:
        return model.get(hash_key, range_key, consistent_read=True)
    except DoesNotExist:
        return None


def delivery_get_consistent(*, delivery_id: str) -> Delivery:
    """A delivery by id (strongly consistent); NotFound when there is none or the id is malformed."""
    delivery = item_get_consistent(Delivery, delivery_id) if DELIVERY_ID.fullmatch(delivery_id or "") else None
    if delivery is None:
        raise NotFound(gettext("No such delivery."))
    return delivery


def targets_pending(*, delivery_id: str, user_ids: list[str]) -> list[str]:
    """Those of `user_ids` whose target item still exists (strongly consistent BatchGetItem)."""
    found = {
        target.user_id
        for target in DeliveryTarget.batch_get(
            [(user_id, delivery_id) for user_id in user_ids], consistent_read=True, attributes_to_get=["user_id"]
        )
    }
    return [user_id for user_id in user_ids if user_id in found]


@dataclass(frozen=True)
class DeliveryProgress:
    """A delivery with live counts: done chunks' counts plus what in-flight chunks did so far."""

    delivery: Delivery
    delivered: int
    skipped: int

    @property
    def total(self) -> int:
        return int(self.delivery.total_targets)

    @property
    def pending(self) -> int:
        """Targets that have not received it (for a cancelled delivery: never will)."""
        return max(0, self.total - self.delivered - self.skipped)

    @property
    def percent(self) -> int:
        return (
            int(100 * (self.delivered + self.skipped) / self.total)
            if self.total
            else 100 * (self.delivery.status == "done")
        )


def delivery_get(*, delivery_id: str) -> Delivery:
    """A delivery by id (strongly consistent); NotFound when there is none."""
    return delivery_get_consistent(delivery_id=delivery_id)


def delivery_progress(*, delivery: Delivery) -> DeliveryProgress:
    """Live counts: one BatchGetItem of the in-flight chunks (at most one per dispatcher)."""
    delivered, skipped = int(delivery.delivered_count), int(delivery.skipped_count)
    seqs = sorted(int(seq) for seq in (delivery.in_flight or ()))
    if seqs and delivery.status in (DISPATCHING, CANCELLED):
        for chunk in DeliveryChunk.batch_get(
            [chunk_key(delivery.delivery_id, seq) for seq in seqs],
            consistent_read=True,
            attributes_to_get=["chunk_key", "delivered", "skipped", "status"],
        ):
            if chunk.status != CHUNK_DONE:
                delivered += int(chunk.delivered)
                skipped += int(chunk.skipped)
    return DeliveryProgress(delivery=delivery, delivered=delivered, skipped=skipped)


@dataclass(frozen=True)
class DeliveryPage:
    results: list[Delivery]
    next_cursor: str | None


DELIVERIES_CURSOR = {"created_at": ISO_AT, "delivery_id": HEX_ID}


def _start_key(cursor: str) -> dict[str, dict[str, str]]:
    """The `by_created` key to start after, rebuilt from the cursor's checked sort-key values."""
    position = cursor_fields(cursor, query="deliveries", fields=DELIVERIES_CURSOR)
    return {
        "list_bucket": {"S": LIST_BUCKET},
        "created_at": {"S": position["created_at"]},
        "delivery_id": {"S": position["delivery_id"]},
    }


def delivery_list(
    *, limit: int | None = None, cursor: str | None = None, written: Collection[str] = ()
) -> DeliveryPage:
    """Deliveries newest first, cursor-paginated (a staff page and API).

    The order comes from the `by_created` GSI, which trails writes (AWS updates an index
    asynchronously: usually well under a second), while staff land here right after creating,
    preparing or cancelling one. So the page's deliveries are read again strongly consistently
    (one BatchGetItem: the statuses and counts shown are current), together with the
    `written` ones (those this browser just created, project/http/fresh.py), which are added where
    they sort when the index does not list them yet.
    """
    limit = max(1, min(PAGE_SIZE_MAX, limit or PAGE_SIZE))
    position = cursor_fields(cursor, query="deliveries", fields=DELIVERIES_CURSOR) if cursor else None
    query = Delivery.by_created.query(
        LIST_BUCKET,
        scan_index_forward=False,
        limit=limit,
        last_evaluated_key=_start_key(cursor) if cursor else None,
    )
    indexed = list(query)
    listed = {delivery.delivery_id for delivery in indexed}
    more = bool(query.last_evaluated_key) and len(listed) == limit
    # The page covers (newest first) what is older than the cursor and, when more follow, no
    # older than its last listed delivery: one of the browser's own outside that is on another page.
    after = (position["created_at"], position["delivery_id"]) if position else None
    ends = (indexed[-1].created_at, indexed[-1].delivery_id) if more else None
    wanted = [*listed, *(delivery_id for delivery_id in written if delivery_id not in listed)]
    found = Delivery.batch_get(wanted, consistent_read=True) if wanted else []
    results = sorted(
        (
            delivery
            for delivery in found
            if delivery.delivery_id in listed
            or (
                (after is None or (delivery.created_at, delivery.delivery_id) < after)
                and (ends is None or (delivery.created_at, delivery.delivery_id) > ends)
            )
        ),
        key=lambda delivery: (delivery.created_at, delivery.delivery_id),
        reverse=True,
    )
    if len(results) > limit:
        results, more = results[:limit], True
    last_shown = results[-1] if more and results else None
    next_cursor = (
        cursor_encode({"created_at": last_shown.created_at, "delivery_id": last_shown.delivery_id}, query="deliveries")
        if last_shown
        else None
    )
    return DeliveryPage(results=results, next_cursor=next_cursor)


def deliveries_active() -> list[str]:
    """Ids of deliveries that still need preparing or dispatching, oldest first (consistent Query)."""
    entries = DeliveryQueueEntry.query(QUEUE, consistent_read=True)
    return [entry.delivery_id for entry in sorted(entries, key=lambda entry: entry.created_at)]


@dataclass(frozen=True)
class ChunkView:
    seq: int
    size: int
    status: str
    delivered: int
    skipped: int
    lease_owner: str | None
    lease_live: bool


def delivery_chunks(*, delivery: Delivery) -> list[ChunkView]:
    """Every chunk's state (staff detail page): BatchGetItem, 100 keys a call."""
    count = int(delivery.chunk_count if delivery.chunk_count is not None else delivery.frozen_chunks)
    keys = [chunk_key(delivery.delivery_id, seq) for seq in range(count)]
    now = clock.now()
    chunks = [
        ChunkView(
            seq=int(chunk.seq),
            size=len(chunk.user_ids),
            status=chunk.status,
            delivered=int(chunk.delivered),
            skipped=int(chunk.skipped),
            lease_owner=chunk.lease_owner,
            lease_live=chunk.lease_expires_at > now,
        )
        for chunk in DeliveryChunk.batch_get(keys, consistent_read=True)
    ]
    return sorted(chunks, key=lambda chunk: chunk.seq)


def delivery_pending_sample(*, delivery: Delivery, chunks: list[ChunkView], limit: int = PENDING_SHOWN) -> list[str]:
    """Up to `limit` user ids still waiting for the delivery, read from chunks not done yet."""
    sample: list[str] = []
    for view in chunks:
        if view.status == CHUNK_DONE or len(sample) >= limit:
            continue
        chunk = DeliveryChunk.get(chunk_key(delivery.delivery_id, view.seq), consistent_read=True)
        sample += targets_pending(delivery_id=delivery.delivery_id, user_ids=list(chunk.user_ids))
    return sample[:limit]


BACKLOG_DELIVERIES_MAX = 25


def deliveries_backlog() -> Backlog:
    """Chunks not delivered yet of the deliveries in the queue (`dispatch_deliveries`' work),
    and since when the oldest of those deliveries waits.

    One eventually consistent Query of `delivery_queue` (at most 25 entries of ~100 bytes:
    0.5 RCU) and one BatchGetItem of those deliveries (0.5 RCU per 4 KB item). A delivery
    still being prepared counts the chunks frozen so far. Capped at 25 deliveries.
    """
    entries = list(DeliveryQueueEntry.query(QUEUE, limit=BACKLOG_DELIVERIES_MAX))
    oldest = min((parse_iso(entry.created_at).timestamp() for entry in entries), default=None)
    chunks = 0
    if entries:
        for delivery in Delivery.batch_get(
            [entry.delivery_id for entry in entries],
            attributes_to_get=["delivery_id", "chunk_count", "frozen_chunks", "chunks_done"],
        ):
            known = delivery.chunk_count if delivery.chunk_count is not None else delivery.frozen_chunks
            chunks += max(0, int(known or 0) - int(delivery.chunks_done or 0))
    return Backlog(
        label="unfinished delivery chunks",
        count=chunks,
        capped=len(entries) >= BACKLOG_DELIVERIES_MAX,
        oldest_at=oldest,
    )
