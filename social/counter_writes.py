"""A transaction that adds to one shard of a sharded counter (social/counters.py): likes and
reactions write through it.

The shard is picked anew for every attempt (`ShardPick`: never one this process is writing
already), and an attempt that met contention grows the counter, so the writes of one popular
comment spread over more shards instead of cancelling each other on AWS.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from project.dynamo.transactions import transact
from social.counters import ShardPick
from social.models import CounterShard

if TYPE_CHECKING:
    from project.dynamo.transactions import LabelledTransactWrite, TransactOutcome


@dataclass(frozen=True)
class CounterWritten:
    outcome: TransactOutcome  # not ok: a condition of `build`'s actions failed, nothing written
    contended: bool  # an attempt met a conflict or throttling before the last one


def counter_transact(
    *,
    key: str,
    shards: int,
    build: Callable[[LabelledTransactWrite, int, bool], None],
    what: str,
) -> CounterWritten:
    """Run the transaction `build(transaction, shard, contended)` describes, where `shard` is the
    counter item this attempt adds to (0..shards-1, as grown meanwhile) and `contended` whether
    an earlier attempt met contention; retried as `transact` retries (conflicts, throttling).

    An attempt throttled as a whole (no per-action reasons), or cancelled on the counter's own
    table (the shard collided), grows the counter (`ShardPick.contended`) before the next one.
    """
    shards_table = CounterShard.Meta.table_name
    contention: list[TransactOutcome] = []
    with ShardPick(key, shards=shards) as pick:

        def grow_on_contention(outcome: TransactOutcome) -> None:
            contention.append(outcome)
            if not outcome.codes or any(action.table == shards_table for action in outcome.cancelled_actions):
                pick.contended()

        outcome = transact(
            lambda transaction: build(transaction, pick.next(), bool(contention)),
            what=what,
            on_retry=grow_on_contention,
        )
    return CounterWritten(outcome=outcome, contended=bool(contention))
