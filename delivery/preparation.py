"""Preparing a delivery: freeze its audience into chunks and target items (`draft -> ready`).

Guarantee 1 of `delivery/services.py`: chunk content is immutable once written (the
first writer wins), and no target of a chunk can be put again once the chunk is
flagged `targets_written`, which happens before the delivery becomes `ready`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.db.models import Max
from pynamodb.exceptions import PutError

from delivery.models import (
    AUDIENCE_GROUP,
    AUDIENCE_USERNAMES,
    DRAFT,
    PREPARING,
    READY,
    Delivery,
    DeliveryChunk,
    DeliveryTarget,
    chunk_key,
)
from delivery.selectors import delivery_get_consistent, item_get_consistent
from delivery.services import TRANSACTION_ACTIONS_MAX, chunk_size
from project.clock import clock
from project.dynamo.transactions import LabelledTransactWrite, conditional_update, transact, write_retrying
from project.errors import condition_failed

if TYPE_CHECKING:
    from pynamodb.expressions.update import Action

logger = logging.getLogger(__name__)

TARGET_PUTS_PER_TRANSACTION = TRANSACTION_ACTIONS_MAX - 1  # + the chunk's condition check


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
    existing = item_get_consistent(DeliveryChunk, chunk_key(delivery.delivery_id, seq))
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
        if not condition_failed(error):
            raise
        return item_get_consistent(DeliveryChunk, chunk.chunk_key)
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

        def build(transaction: LabelledTransactWrite, slice_ids: list[str] = slice_ids) -> None:
            transaction.condition_check(
                DeliveryChunk,
                chunk.chunk_key,
                condition=DeliveryChunk.targets_written == False,  # noqa: E712
                label="chunk",
            )
            for user_id in slice_ids:
                transaction.save(DeliveryTarget(user_id, chunk.delivery_id, chunk_seq=chunk.seq))

        if not transact(build, what="delivery targets write").ok:
            return  # another preparer finished this chunk's targets
    conditional_update(
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
        actions: list[Action] = [Delivery.status.set(PREPARING), Delivery.updated_at.set(clock.now_iso())]
        if delivery.audience_kind != AUDIENCE_USERNAMES:
            top = get_user_model().objects.aggregate(top=Max("pk"))["top"] or 0
            actions.append(Delivery.audience_max_id.set(top))
        conditional_update(delivery, actions=actions, condition=Delivery.status == DRAFT)
        delivery = delivery_get_consistent(delivery_id=delivery_id)
    while delivery.status == PREPARING and not should_stop():
        seq = int(delivery.frozen_chunks)
        if delivery.chunk_count is not None and seq >= int(delivery.chunk_count):
            conditional_update(
                delivery,
                actions=[Delivery.status.set(READY), Delivery.updated_at.set(clock.now_iso())],
                condition=(Delivery.status == PREPARING) & (Delivery.frozen_chunks == delivery.chunk_count),
            )
            logger.info(
                "delivery %s ready: %s targets in %s chunks", delivery_id, delivery.total_targets, delivery.chunk_count
            )
        else:
            chunk = _chunk_freeze(delivery, seq)
            if chunk is None:  # the audience is exhausted: the chunk count is known now
                conditional_update(
                    delivery,
                    actions=[Delivery.chunk_count.set(seq)],
                    condition=(Delivery.status == PREPARING) & (Delivery.frozen_chunks == seq),
                )
            else:
                _chunk_targets_write(chunk)
                chunk_actions: list[Action] = [
                    Delivery.frozen_chunks.set(seq + 1),
                    Delivery.total_targets.add(len(chunk.user_ids)),
                    Delivery.updated_at.set(clock.now_iso()),
                ]
                if delivery.audience_kind != AUDIENCE_USERNAMES:
                    chunk_actions.append(Delivery.prepare_after.set(int(chunk.user_ids[-1])))
                conditional_update(
                    delivery,
                    actions=chunk_actions,
                    condition=(Delivery.status == PREPARING) & (Delivery.frozen_chunks == seq),
                )
        delivery = delivery_get_consistent(delivery_id=delivery_id)
    return delivery
