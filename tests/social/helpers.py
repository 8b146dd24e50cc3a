"""Helpers for the counter and ranking tests: waits for the indexes AWS updates asynchronously."""

from __future__ import annotations

from project.testing.harness import wait_for
from social import aggregation
from social.models import CounterTotal


def due_index_caught_up() -> None:
    """Wait until the `due` index lists every due flag as its `counter_totals` item holds it now.

    On AWS a GSI trails each write (by up to 2 s under the read lag model), and an aggregator
    finds only the flags the index lists: a test that expects a run to find a flag, or none
    to be left, waits for this first (a condition, not a sleep).
    """

    def caught_up() -> bool:
        items = CounterTotal.scan(consistent_read=True, attributes_to_get=["counter_key", "due_at"])
        held = {(item.counter_key, float(item.due_at)) for item in items if item.due_at is not None}
        listed = {(pending.key, pending.due_at) for pending in aggregation.counters_pending(due_only=False)}
        return listed == held

    wait_for(caught_up, what="the due index listing the due flags")


def pending_keys() -> list[str]:
    """The counters with a due flag, as the due index lists them once it caught up."""
    due_index_caught_up()
    return sorted(pending.key for pending in aggregation.counters_pending(due_only=False))


def aggregate(*, due_only: bool) -> int:
    """One aggregation run (`aggregate_counters` without --loop) once the due index lists every flag."""
    due_index_caught_up()
    return aggregation.counters_aggregate_pending(due_only=due_only)
