"""Concurrent writers on one feed, and injected throttling/conflicts: nothing lost, nothing doubled."""

import random
import threading
import time
from unittest import mock

import pytest
from botocore.exceptions import ClientError, ReadTimeoutError

from notifications.feed import events as feed_events
from notifications.feed import services as feed_services
from notifications.feed.encoding import digest
from notifications.feed.events import FeedEvent
from notifications.models import Feed, FeedRetry, UnreadCount
from project.dynamo import wire

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]

WRITERS = 8


def event(writer, n):
    return FeedEvent(
        event_id=f"w{writer}-e{n}",
        kind="message",
        actor_id=None,
        rollup_key=None,
        title=f"writer {writer} event {n}",
    )


def run_writers(events_per_writer, *, user_id="1"):
    results, errors = [], []

    def writer(number):
        for n in range(events_per_writer):
            try:
                results.append(feed_services.feed_append(user_id=user_id, event=event(number, n)))
            except Exception as error:
                errors.append(error)

    threads = [threading.Thread(target=writer, args=(number,)) for number in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results, errors


PAUSE = threading.local()  # the test's own inspection reads are not faulted


def retries_left():
    PAUSE.on = True
    try:
        return [
            item
            for shard in range(feed_events.FEED_RETRY_SHARDS)
            for item in FeedRetry.query(str(shard), consistent_read=True)
        ]
    finally:
        PAUSE.on = False


def drain(rounds=40):
    """Run the drainer until the retry table is empty (as `process_feed_retries --loop` would)."""
    for _ in range(rounds):
        if not retries_left():
            return
        # Everything queued is due "an hour from now": no need to wait out backoff delays.
        feed_services.feed_retries_process(limit=100, now_ms=int(time.time() * 1000) + 3_600_000)
    raise AssertionError(f"retry table did not drain: {retries_left()}")


def assert_each_event_once(expected_ids, *, user_id="1"):
    item = Feed.get(user_id, consistent_read=True)
    digests = {digest(event_id) for event_id in expected_ids}
    assert set(item.applied) <= digests and len(item.applied) == len(set(item.applied)) == min(32, len(digests))
    entry_ids = [entry.entry_id for entry in item.entries]
    assert sorted(entry_ids) == sorted(feed_events.feed_entry_id(event_id) for event_id in expected_ids)
    assert item.version == len(expected_ids)  # one write per event, never one more
    assert UnreadCount.get(user_id, "feed", consistent_read=True).count == len(expected_ids)
    assert [entry.updated_ms for entry in item.entries] == sorted((e.updated_ms for e in item.entries), reverse=True)


def test_eight_concurrent_writers_lose_nothing():
    results, errors = run_writers(12)
    assert errors == []
    assert len(results) == WRITERS * 12
    drain()  # a writer that lost too many races queued its event
    assert_each_event_once([f"w{w}-e{n}" for w in range(WRITERS) for n in range(12)])
    conflicts = sum(result.conflicts for result in results)
    assert conflicts > 0, "the writers never raced: the test did not test the version condition"


def test_concurrent_replies_roll_up_counting_each_person_once():
    def reply(actor):
        for n in range(3):
            feed_services.feed_append(
                user_id="1",
                event=FeedEvent(event_id=f"r-{actor}-{n}", kind="reply", actor_id=str(actor), rollup_key="reply#p"),
            )

    threads = [threading.Thread(target=reply, args=(actor,)) for actor in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    drain()
    [entry] = Feed.get("1", consistent_read=True).entries
    assert entry.actor_count == WRITERS
    assert entry.event_count == WRITERS * 3
    assert sorted(entry.actor_ids) == sorted(str(actor) for actor in range(WRITERS))


def _fault(code, operation):
    return ClientError({"Error": {"Code": code, "Message": "injected"}}, operation)


def _cancelled(reason):
    return ClientError(
        {
            "Error": {"Code": "TransactionCanceledException", "Message": "injected"},
            "CancellationReasons": [{"Code": reason}, {"Code": "None"}],
        },
        "TransactWriteItems",
    )


@pytest.mark.slow
def test_injected_throttling_and_conflicts_lose_and_double_nothing(monkeypatch):
    """A third of the calls fail: conflicts, throttling on reads and writes, and answers lost
    after the write happened (the ambiguous case that would double an event)."""
    monkeypatch.setattr(feed_services, "FEED_WRITE_ATTEMPTS", 3)
    monkeypatch.setattr("project.dynamo.transactions.TRANSACTION_ATTEMPTS", 2)
    real = wire.make_api_call
    rng = random.Random(7)
    lock = threading.Lock()
    injected = {"conflict": 0, "throttle": 0, "lost_answer": 0, "read_throttle": 0, "queue_throttle": 0}

    def roll():
        with lock:
            return rng.random()

    def flaky(self, operation_name, api_params):
        if getattr(PAUSE, "on", False):
            return real(self, operation_name, api_params)
        draw = roll()
        if operation_name == "TransactWriteItems":
            if draw < 0.12:
                injected["conflict"] += 1
                raise _cancelled("TransactionConflict")
            if draw < 0.24:
                injected["throttle"] += 1
                raise _cancelled("ThrottlingError")
            if draw < 0.32:
                answer = real(self, operation_name, api_params)
                injected["lost_answer"] += 1
                raise ReadTimeoutError(endpoint_url="dynamodb")
                return answer
        elif operation_name == "GetItem" and draw < 0.1:
            injected["read_throttle"] += 1
            raise _fault("ProvisionedThroughputExceededException", operation_name)
        elif operation_name in ("UpdateItem", "PutItem", "Query") and draw < 0.1:
            injected["queue_throttle"] += 1
            raise _fault("ThrottlingException", operation_name)
        return real(self, operation_name, api_params)

    with mock.patch.object(wire, "make_api_call", flaky):
        results, errors = run_writers(10)
        # A queue write that was itself throttled surfaces to the producer (it knows the event
        # was not taken); a producer retries it, as the reply hook's outbox does.
        for error in errors:
            assert feed_services.is_transient(error), error
        drain_deadline = time.monotonic() + 60
        while retries_left() and time.monotonic() < drain_deadline:
            try:
                feed_services.feed_retries_process(limit=100, now_ms=int(time.time() * 1000) + 3_600_000)
            except Exception as error:  # the drainer's own query throttled: run again, as --loop does
                assert feed_services.is_transient(error), error
    assert retries_left() == []
    assert injected["lost_answer"] > 0 and injected["throttle"] > 0 and injected["conflict"] > 0
    assert any(result.status == feed_services.QUEUED for result in results)
    # Events whose producer got an error were never queued: apply them now, as a producer retrying would.
    applied = {f"w{w}-e{n}" for w in range(WRITERS) for n in range(10)}
    for event_id in sorted(applied):
        writer, n = event_id[1:].split("-e")
        feed_services.feed_append(user_id="1", event=event(int(writer), int(n)))
    assert_each_event_once(sorted(applied))
