"""Sharded counters (seed 004): a counter is the sum of its shard items.

A counter key names what is counted (`like#<comment_id>`, `view#<comment_id>`).
Writers add to one shard, so concurrent writers on a hot counter spread over
several items instead of colliding on one; readers sum the shards with one
strongly consistent Query.
"""

from __future__ import annotations

import zlib
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from pynamodb.transactions import TransactWrite

from social.models import CounterShard

LIKES = "like"
VIEWS = "view"

_readers = ThreadPoolExecutor(max_workers=8, thread_name_prefix="counter-read")


def counter_key(*, kind: str, object_id: str) -> str:
    return f"{kind}#{object_id}"


def counter_shard_count(*, key: str) -> int:
    kind = key.split("#", 1)[0]
    return {LIKES: settings.LIKE_COUNTER_SHARDS, VIEWS: settings.VIEW_COUNTER_SHARDS}.get(kind, 1)


def counter_shard_for(*, key: str, member: str) -> int:
    """The shard a member's contribution goes to: stable, so an undo hits the same shard."""
    return zlib.crc32(member.encode()) % counter_shard_count(key=key)


def counter_add(transaction: TransactWrite, *, key: str, delta: int, member: str) -> None:
    """Add `delta` to the counter inside `transaction` (an ADD: no read, no condition)."""
    shard = CounterShard(counter_key=key, shard=counter_shard_for(key=key, member=member))
    transaction.update(shard, actions=[CounterShard.count.add(delta)])


def counter_value(*, key: str) -> int:
    """The counter's exact value: one strongly consistent Query over its shards."""
    total = sum(shard.count for shard in CounterShard.query(key, consistent_read=True))
    # A shard can dip below zero when the shard count changed between a like and its
    # undo; the sum of shards is still exact, and never shown below zero.
    return max(0, int(total))


def counter_values(*, keys: list[str]) -> dict[str, int]:
    """Values of several counters, queried concurrently (one Query each)."""
    unique = list(dict.fromkeys(keys))
    if len(unique) <= 1:
        return {key: counter_value(key=key) for key in unique}
    return dict(zip(unique, _readers.map(lambda key: counter_value(key=key), unique), strict=True))
