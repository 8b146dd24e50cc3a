"""Compaction of a sharded counter (docs/explanation/counters.md): its shard items folded into one
base item, so a counter that a storm spread over many shards is read with a small Query again.
The like fold compacts a comment's counter after folding its likes (notifications/like_fold/).
"""

from __future__ import annotations

import logging

from pynamodb.transactions import TransactWrite

from project.dynamo.transactions import transact
from social.models import CounterShard

logger = logging.getLogger(__name__)

# The base item of a counter (shard -1) takes what `counter_compact` folds in; writers
# never pick it, so it is written only by compaction.
BASE_SHARD = -1
COMPACT_MIN_ITEMS = 8
_COMPACT_MAX_ITEMS = 99  # + the base item: TransactWriteItems' 100 actions


def counter_compact(*, key: str) -> bool:
    """Move the counts of a counter's shard items into its base item, so reads stay small.

    One transaction: delete every shard item on condition its count is still what was
    read, and ADD their sum to the base item; the sum of all items is the same before
    and after, so reads stay exact at every moment. A write landing on a shard meanwhile
    fails that shard's condition: nothing is changed, the next compaction tries again.
    Only when the counter has COMPACT_MIN_ITEMS shard items or more. After a storm has
    spread a hot comment's likes over up to COUNTER_SHARDS_MAX shards, the comment's
    page then reads one item (plus those written since) instead of a 100-item Query.
    Returns whether it compacted; raises nothing the caller must handle but Conflict.
    """
    items = [item for item in CounterShard.query(key, consistent_read=True) if int(item.shard) != BASE_SHARD]
    if len(items) < COMPACT_MIN_ITEMS:
        return False
    items = items[:_COMPACT_MAX_ITEMS]

    def build(transaction: TransactWrite) -> None:
        for item in items:
            transaction.delete(CounterShard(key, item.shard), condition=CounterShard.count == item.count)
        transaction.update(CounterShard(key, BASE_SHARD), actions=[CounterShard.count.add(sum(i.count for i in items))])

    compacted = transact(build, what="counter_compact", attempts=1).ok
    if compacted:
        logger.info("counter %s: %d shard items compacted into its base item", key, len(items))
    return compacted
