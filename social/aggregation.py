"""Counter aggregation: due counters' shards summed into `counter_totals` (docs/explanation/counters.md).

Writes (`counter_aggregate`, `counters_aggregate_pending`, run by `aggregate_counters`)
and reads (`counters_pending`, `counters_due_backlog`, `counter_total_get`) of the
`counter_totals` table live together here because they share one protocol:

1. A change raises the counter's due flag (social/counters.py): `changed_at`,
   `due_at` = changed_at + COUNTER_AGGREGATION_DELAY, `due_part` (the write shard of
   the sparse `due` index).
2. An aggregator Queries each `due` partition for `due_at <= now` and *claims* a
   counter with a conditional write (`due_at` still the value it saw): `due_at`
   becomes the claim's expiry, `changed_at` is removed. Two aggregators never both
   hold a claim; one that dies (or stops) leaves a `due_at` that comes due again, so
   the next run repairs the total.
3. If a view writer counted on the flag (`relied_on`), it waits until the flag
   settled (`changed_at` + 1.75 x the delay: view writers count on a flag for 1.5 x
   the delay instead of writing it on every view). Then it sums the shards with a
   strongly consistent Query and writes the total and the ranking attributes
   (social/ranking.py) on condition it still holds the claim. A change that
   landed after the claim raised `changed_at` again, so the flag stays up (due
   again after the delay); otherwise the flag is removed.
"""

from __future__ import annotations

import itertools
import logging
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from django.conf import settings
from pynamodb.constants import ALL_OLD
from pynamodb.exceptions import UpdateError

from project.clock import clock
from project.errors import condition_failed
from project.operations.backlog import Backlog, backlog_of_parts
from social.counters import counter_key_parts, counter_value, flag_settle_seconds
from social.models import CounterTotal
from social.ranking import rank_part, rank_sort

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class AggregateOutcome:
    key: str
    total: int
    still_due: bool  # changed again while being aggregated: another aggregation is scheduled


@dataclass(frozen=True)
class PendingCounter:
    key: str
    due_at: float


# --- writes -----------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    key: str
    token: str
    read_after: float  # epoch seconds: writers may rely on the flag until just before this


def counter_claim(*, key: str, seen_due_at: float) -> Claim | None:
    """Claim one counter whose due flag was seen with `seen_due_at` (a conditional write).

    None when another aggregator claimed it first or it changed under us. The claim
    moves `due_at` to the claim's expiry (now + COUNTER_AGGREGATION_LEASE) and removes
    `changed_at`, so a change landing from now on raises the flag again.
    """
    token = uuid.uuid4().hex
    now = clock.now()
    try:
        # The connection's update_item (PynamoDB's private accessor): Model.update has no
        # ReturnValues=ALL_OLD, which tells whether this claim won.
        old = CounterTotal._get_connection().update_item(
            key,
            actions=[
                CounterTotal.due_at.set(now + settings.COUNTER_AGGREGATION_LEASE),
                CounterTotal.claim.set(token),
                CounterTotal.changed_at.remove(),
                CounterTotal.relied_on.remove(),
            ],
            condition=CounterTotal.due_at == seen_due_at,
            return_values=ALL_OLD,
        )
    except UpdateError as error:
        if condition_failed(error):
            return None
        raise
    previous = old.get("Attributes", {})
    changed_at = previous.get("changed_at", {}).get("N")
    relied_on = previous.get("relied_on", {}).get("BOOL", False)
    read_after = float(changed_at) + flag_settle_seconds() if changed_at is not None and relied_on else now
    return Claim(key, token, read_after)


def counter_claim_finish(claim: Claim) -> AggregateOutcome | None:
    """Sum the claimed counter's shards (strongly consistent) and write its total and rank.

    Call it no earlier than `claim.read_after`. Written on condition the claim is still
    ours: if it expired and another aggregator took over, nothing is written (None). A
    change that landed after the claim keeps the flag up, due again after the delay.
    """
    key = claim.key
    total = counter_value(key=key)
    kind, object_id = counter_key_parts(key)
    actions = [
        CounterTotal.total.set(total),
        CounterTotal.aggregated_at.set(clock.now()),
        CounterTotal.kind.set(kind),
        CounterTotal.object_id.set(object_id),
        CounterTotal.claim.remove(),
    ]
    if total > 0:
        actions += [
            CounterTotal.rank_part.set(rank_part(kind, object_id)),
            CounterTotal.rank_sort.set(rank_sort(total, object_id)),
        ]
    else:
        actions += [CounterTotal.rank_part.remove(), CounterTotal.rank_sort.remove()]
    # The private connection (as in the claim above): an update by key without reading the
    # item first, which Model.update (an instance method) would need.
    connection = CounterTotal._get_connection()
    try:
        connection.update_item(
            key,
            actions=[*actions, CounterTotal.due_at.remove(), CounterTotal.due_part.remove()],
            condition=(CounterTotal.claim == claim.token) & CounterTotal.changed_at.does_not_exist(),
        )
        return AggregateOutcome(key, total, still_due=False)
    except UpdateError as error:
        if not condition_failed(error):
            raise
    try:
        connection.update_item(
            key,
            actions=[*actions, CounterTotal.due_at.set(clock.now() + settings.COUNTER_AGGREGATION_DELAY)],
            condition=CounterTotal.claim == claim.token,
        )
    except UpdateError as error:
        if condition_failed(error):
            logger.warning("counter %s: claim expired before the total was written; left to its new owner", key)
            return None
        raise
    return AggregateOutcome(key, total, still_due=True)


def counter_aggregate(*, key: str, seen_due_at: float, sleep=clock.sleep) -> AggregateOutcome | None:
    """Claim, wait for the flag to settle, sum and write one counter (see the module doc).

    Twice or concurrently: only one claim succeeds per `due_at`, and only the claim
    holder writes the total. Dies after the claim: the claim's `due_at` comes due and
    the next run aggregates again; the total is always a fresh sum of the shards, so
    nothing is double counted.
    """
    claim = counter_claim(key=key, seen_due_at=seen_due_at)
    if claim is None:
        return None
    wait = claim.read_after - clock.now()
    if wait > 0:
        sleep(wait)
    return counter_claim_finish(claim)


CLAIM_BATCH = 100
# A stopping aggregator notices within this many seconds while it waits for flags to settle.
STOP_CHECK_SECONDS = 0.2


def _wait(seconds: float, *, stop, sleep) -> bool:
    """Sleep `seconds` in slices, asking `stop()` before each; False when it said stop."""
    while seconds > 0:
        if stop():
            return False
        step = min(seconds, STOP_CHECK_SECONDS)
        sleep(step)
        seconds -= step
    return not stop()


def counters_aggregate_pending(
    *, due_only: bool = True, stop=lambda: False, on_done=lambda outcome: None, sleep=clock.sleep
) -> int:
    """Aggregate every counter with a due flag (only those due now when `due_only`).

    Claims up to CLAIM_BATCH counters, then sums and writes each once its flag settled
    (earliest first). Returns how many counters this call aggregated. `stop()` is asked
    between claims, between counters and every STOP_CHECK_SECONDS of a wait, so SIGTERM
    finishes the current counter only; a claim left behind expires after
    COUNTER_AGGREGATION_LEASE and is taken again. Safe to run in several processes at once.
    """
    done = 0
    pending = counters_pending(due_only=due_only, stop=stop)
    while not stop():
        claims = []
        for seen in itertools.islice(pending, CLAIM_BATCH):
            if stop():
                break
            claim = counter_claim(key=seen.key, seen_due_at=seen.due_at)
            if claim is not None:
                claims.append(claim)
        if not claims:
            break
        for claim in sorted(claims, key=lambda claim: claim.read_after):
            if not _wait(claim.read_after - clock.now(), stop=stop, sleep=sleep):
                break
            outcome = counter_claim_finish(claim)
            if outcome is not None:
                done += 1
                on_done(outcome)
    return done


# --- reads ------------------------------------------------------------------


def counters_pending(
    *, due_only: bool = True, now: float | None = None, stop: Callable[[], bool] = lambda: False
) -> Iterator[PendingCounter]:
    """Counters with a due flag, from one Query per `due` partition (never a Scan); `stop()` is
    asked before each partition, so a stopping worker does not read the empty ones."""
    now = clock.now() if now is None else now
    condition = CounterTotal.due_at <= now if due_only else None
    for part in range(settings.COUNTER_DUE_SHARDS):
        if stop():
            return
        for item in CounterTotal.due_index.query(str(part), range_key_condition=condition):
            yield PendingCounter(item.counter_key, float(item.due_at))


def counters_pending_count() -> int:
    return sum(1 for _ in counters_pending(due_only=False))


def counters_due_backlog(*, now: float | None = None) -> Backlog:
    """Counters due for aggregation now (`aggregate_counters`' queue), oldest due first.

    One Query per partition of the keys-only `due` index (`due_at <= now`), at most
    BACKLOG_CAP entries in all: 10 RCU at the cap, 0.5 RCU per partition when none
    is due. A claimed counter's `due_at` is its claim's expiry, in the future: not counted.
    """
    now = clock.now() if now is None else now
    return backlog_of_parts(
        CounterTotal,
        index="due",
        part_key="due_part",
        sort_key="due_at",
        parts=settings.COUNTER_DUE_SHARDS,
        label="counters due",
        oldest_at=float,
        sort_at_most=now,
    )


def counter_total_get(*, key: str) -> CounterTotal | None:
    """The `counter_totals` item of one counter (staff lookups), strongly consistent."""
    try:
        return CounterTotal.get(key, consistent_read=True)
    except CounterTotal.DoesNotExist:
        return None
