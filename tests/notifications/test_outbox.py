"""The outbox job's life (notifications/outbox.py), with a job of its own that counts units:
recorded with its write or not at all, run by the request within its budget, claimed once by
the drainers, resumed from its progress, postponed when it fails, and finished for good, also
when a process dies between two of these calls. The shapes of the items the fan-out and the
retraction store are pinned at the end."""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, replace
from typing import ClassVar
from unittest import mock

import pytest

from notifications import outbox
from notifications.fanout import FanOut
from notifications.feed.events import FEED_RETRY_SHARDS
from notifications.feed.services import APPLIED, QUEUED, feed_retries_process, feed_retry_process
from notifications.models import FeedRetry
from notifications.outbox import (
    OUTBOX_DELAY_MS,
    OUTBOX_LEASE_MS,
    OutboxJob,
    OutboxRun,
    outbox_add,
    outbox_claim,
    outbox_send,
)
from notifications.silence import Silence
from project.clock import ManualClock, clock_override
from project.dynamo.transactions import LabelledTransactWrite, transact
from project.errors import Throttled

UNITS: list[int] = []  # every unit any run of a `Count` did, in order
FAILING: list[Exception] = []  # what the next run raises, if anything


@dataclass(frozen=True)
class Count(OutboxJob):
    """Units 1..upto, two a request's run, three a drainer's."""

    kind: ClassVar[str] = "count"

    name: str
    upto: int
    done: int = 0

    @property
    def job_id(self) -> str:
        return self.name

    @property
    def user_id(self) -> str:
        return "7"

    def run(self, *, inline: bool) -> OutboxRun:
        if FAILING:
            raise FAILING.pop()
        last = min(self.upto, self.done + (2 if inline else 3))
        UNITS.extend(range(self.done + 1, last + 1))
        return OutboxRun(rest=None if last == self.upto else replace(self, done=last), then=lambda: UNITS.append(0))


class Died(BaseException):
    """The process ends here (not an Exception: nothing catches it)."""


@pytest.fixture(autouse=True)
def counting(monkeypatch):
    monkeypatch.setitem(outbox.OUTBOX_JOBS, Count.kind, f"{__name__}.Count")
    UNITS.clear()
    FAILING.clear()
    with clock_override(ManualClock()) as clock:
        yield clock


def items() -> list[FeedRetry]:
    return [item for shard in range(FEED_RETRY_SHARDS) for item in FeedRetry.query(str(shard), consistent_read=True)]


def stored(job: OutboxJob) -> Count:
    [item] = items()
    return Count.from_json(item.event)


def record(job: OutboxJob) -> None:
    transact(lambda transaction: outbox_add(transaction, job=job), what="test_record")


def drain_due(clock) -> None:
    """The drainer once everything recorded is due."""
    clock.advance(OUTBOX_DELAY_MS / 1000)
    feed_retries_process()


def test_a_job_commits_with_its_write_or_not_at_all_and_twice_is_one_item(counting):
    job = Count("a", upto=5)

    def refused(transaction: LabelledTransactWrite) -> None:
        outbox_add(transaction, job=job)
        transaction.condition_check(FeedRetry, "0", "missing", condition=FeedRetry.retry_id.exists(), label="x")

    assert not transact(refused, what="test_refused").ok
    assert items() == []
    record(job)
    record(job)
    [item] = items()
    assert (item.shard, item.retry_id, item.user_id) == (job.shard, "count#a", "7")
    assert json.loads(item.event) == {"count": {"name": "a", "upto": 5, "done": 0}}
    assert (item.due_at, item.attempts) == (counting.now_ms() + OUTBOX_DELAY_MS, 0)


def test_the_request_runs_its_budget_and_the_drainer_resumes_from_the_progress(counting):
    job = Count("a", upto=6)
    record(job)
    outbox_send(job)
    assert UNITS == [1, 2, 0]  # two units, then its follow-up
    assert stored(job).done == 2
    feed_retries_process()  # the rest is due at once
    assert UNITS == [1, 2, 0, 3, 4, 5]  # a drainer's run: no follow-up
    feed_retries_process()
    assert UNITS == [1, 2, 0, 3, 4, 5, 6]
    assert items() == []
    feed_retries_process()  # nothing left: nothing runs
    assert UNITS == [1, 2, 0, 3, 4, 5, 6]


def test_a_death_between_the_run_and_its_record_repeats_only_that_run(counting):
    job = Count("a", upto=4)
    record(job)
    with mock.patch.object(FeedRetry, "update", side_effect=Died()), pytest.raises(Died):
        outbox_send(job)  # units 1 and 2 done, the process dies before keeping the progress
    assert stored(job).done == 0 and UNITS == [1, 2]
    feed_retries_process()
    assert UNITS == [1, 2]  # not due yet: the request's item waits OUTBOX_DELAY_MS
    drain_due(counting)
    assert UNITS == [1, 2, 1, 2, 3]  # the run after the last progress kept, repeated
    assert stored(job).done == 3
    feed_retries_process()
    assert UNITS == [1, 2, 1, 2, 3, 4] and items() == []


def test_a_death_between_the_last_run_and_the_delete_leaves_a_job_that_finishes(counting):
    job = Count("a", upto=2)
    record(job)
    with mock.patch.object(FeedRetry, "delete", side_effect=Died()), pytest.raises(Died):
        outbox_send(job)
    assert [item.retry_id for item in items()] == ["count#a"]
    drain_due(counting)
    assert UNITS == [1, 2, 1, 2] and items() == []


def test_a_late_request_s_progress_written_last_repeats_a_part_and_skips_none(counting):
    job = Count("a", upto=6)
    record(job)
    drain_due(counting)  # the request never ran: a drainer does units 1-3
    assert stored(job).done == 3
    outbox_send(job)  # the request, late, from the start: units 1-2, its progress written last
    assert stored(job).done == 2
    feed_retries_process()
    feed_retries_process()
    assert UNITS == [1, 2, 3, 1, 2, 0, 3, 4, 5, 6] and items() == []


def test_a_claimed_item_is_taken_by_one_drainer_and_a_dead_ones_lease_runs_out(counting):
    record(Count("a", upto=3))
    counting.advance(OUTBOX_DELAY_MS / 1000)
    [first] = items()
    [second] = items()  # another drainer read it too
    assert outbox_claim(first) == 1
    assert feed_retry_process(retry=second) == "skipped"  # its claim fails: the value it read is gone
    # The first drainer dies holding it: nothing is due until its lease runs out.
    feed_retries_process()
    assert UNITS == []
    counting.advance(OUTBOX_LEASE_MS / 1000)
    feed_retries_process()
    assert UNITS == [1, 2, 3] and items() == []


def test_a_failing_run_is_postponed_with_back_off_and_keeps_its_error(counting):
    record(Count("a", upto=3))
    counting.advance(OUTBOX_DELAY_MS / 1000)
    FAILING.append(Throttled("busy"))
    [item] = items()
    assert feed_retry_process(retry=item) == QUEUED
    [item] = items()
    assert (item.attempts, item.due_at, item.last_error) == (1, counting.now_ms() + 2000, "busy")
    feed_retries_process()
    assert UNITS == []  # due in 2 s
    counting.advance(2)
    [item] = items()
    assert feed_retry_process(retry=item) == APPLIED
    assert UNITS == [1, 2, 3] and items() == []


def test_the_request_never_raises_and_a_finished_job_is_not_brought_back(counting):
    job = Count("a", upto=5)
    record(job)
    FAILING.append(RuntimeError("DynamoDB unreachable"))
    outbox_send(job)  # logged, left to the drainer
    assert stored(job).done == 0
    drain_due(counting)
    drain_due(counting)
    assert UNITS == [1, 2, 3, 4, 5] and items() == []
    outbox_send(job)  # a late request: its progress is not written over a finished job
    assert items() == []


def test_the_fan_out_and_the_retraction_keep_the_items_they_store():
    """Items already in `feed_retry` are read by these keys and this JSON."""
    fanout = FanOut(comment_id="c1", actor_id="3", thread_id="t1", created_at="2026-01-01T00:00:00Z", key="edit9")
    assert fanout.retry_id == "fanout#c1#edit9"
    assert fanout.shard == str(zlib.crc32(b"c1") % FEED_RETRY_SHARDS)
    assert (fanout.user_id, FanOut(**{**vars(fanout), "key": ""}).retry_id) == ("3", "fanout#c1")
    stored_fanout = (
        '{"fanout":{"comment_id":"c1","actor_id":"3","thread_id":"t1","created_at":"2026-01-01T00:00:00Z",'
        '"parent_id":null,"parent_author_id":null,"mention_ids":[],"watchers":false,"key":"edit9","done_through":""}}'
    )
    assert fanout.to_json() == stored_fanout
    assert outbox.outbox_job(FeedRetry("0", fanout.retry_id, event=stored_fanout)) == fanout
    silence = Silence(owner_id="4", other_id="5")
    assert (silence.retry_id, silence.user_id) == ("silence#4#5", "4")
    assert silence.shard == str(zlib.crc32(b"4") % FEED_RETRY_SHARDS)
    assert silence.to_json() == '{"silence":{"owner_id":"4","other_id":"5"}}'
    assert outbox.outbox_job(FeedRetry("0", silence.retry_id, event=silence.to_json())) == silence
    assert outbox.outbox_job(FeedRetry("0", "4#reply:c1", event="{}")) is None  # a single feed event
