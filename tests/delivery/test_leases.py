"""Chunk leases: claims are exclusive, expired leases are taken over, and a holder whose
lease expired while it was alive cannot double-deliver: its late writes still carry the
target-exists condition."""

import time
from unittest import mock

import pytest

from delivery import batches, dispatch, leases, models, preparation, selectors
from delivery.models import Delivery, DeliveryChunk
from notifications.models import Feed
from project.clock import ManualClock, clock_override
from tests.delivery.helpers import assert_exactly_once, create, message_counts

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]


@pytest.fixture
def prepared(make_user, settings):
    """A delivery of one chunk of five targets, prepared."""
    settings.DELIVERY_CHUNK_SIZE = 10
    staff = make_user("boss", is_staff=True)
    users = [make_user() for _ in range(4)]
    delivery = create(staff)
    preparation.delivery_prepare(delivery_id=delivery.delivery_id)
    return delivery, [str(staff.pk)] + [str(u.pk) for u in users]


def later(seconds):
    """The clock `seconds` from now (standing still there)."""
    return clock_override(ManualClock(time.time() + seconds))


def test_a_leased_chunk_is_not_handed_out_twice(prepared):
    delivery, _ = prepared
    first = leases.chunk_claim(delivery_id=delivery.delivery_id, owner="a", lease_seconds=30)
    assert first.seq == 0
    assert leases.chunk_claim(delivery_id=delivery.delivery_id, owner="b", lease_seconds=30) is None
    stored = Delivery.get(delivery.delivery_id, consistent_read=True)
    assert (stored.cursor, stored.in_flight, stored.status) == (1, {0}, "dispatching")
    chunk = DeliveryChunk.get(models.chunk_key(delivery.delivery_id, 0), consistent_read=True)
    assert (chunk.lease_owner, chunk.lease_token) == ("a", first.token)


def test_an_expired_lease_is_taken_over_once(prepared):
    delivery, _ = prepared
    first = leases.chunk_claim(delivery_id=delivery.delivery_id, owner="a", lease_seconds=30)
    with later(31):
        second = leases.chunk_claim(delivery_id=delivery.delivery_id, owner="b", lease_seconds=30)
        assert second.seq == first.seq and second.token != first.token
        assert leases.chunk_claim(delivery_id=delivery.delivery_id, owner="c", lease_seconds=30) is None
    assert not leases.chunk_lease_renew(lease=first)  # a knows it lost the chunk
    assert leases.chunk_lease_renew(lease=second)


def test_late_holder_cannot_redeliver_what_the_new_holder_delivered(prepared):
    """Isolates the target condition: the feed no longer remembers the event and accepts the write."""
    delivery, targets = prepared
    event = batches.delivery_feed_event(delivery)
    stale = leases.chunk_claim(delivery_id=delivery.delivery_id, owner="a", lease_seconds=10)
    stale_pending = selectors.targets_pending(delivery_id=delivery.delivery_id, user_ids=stale.user_ids)
    assert stale_pending == targets
    # a stalls (GC pause, network partition) past its lease; b takes over and delivers everything.
    with later(11):
        fresh = leases.chunk_claim(delivery_id=delivery.delivery_id, owner="b", lease_seconds=10)
        outcome = dispatch.chunk_dispatch(lease=fresh, event=event, batch_size=2)
    assert outcome.finished and outcome.delivered == 5
    # Take the second line of defence away: the feeds forget the event id (as after
    # FEED_MAX_ENTRIES newer events), so a feed write of the stale holder would be accepted.
    for user_id in targets:
        feed = Feed.get(user_id, consistent_read=True)
        feed.applied = []
        feed.save()
    result = batches.targets_deliver(delivery_id=delivery.delivery_id, seq=0, user_ids=stale_pending, event=event)
    assert result.delivered == [] and sorted(result.gone) == sorted(targets)
    assert dispatch.delivery_finish(delivery_id=delivery.delivery_id)
    assert_exactly_once(delivery.delivery_id, targets)


def test_late_holder_and_new_holder_share_a_chunk_without_duplicates(prepared):
    """a wakes up half way through b's work: between them, each target once, counts exact."""
    delivery, targets = prepared
    event = batches.delivery_feed_event(delivery)
    stale = leases.chunk_claim(delivery_id=delivery.delivery_id, owner="a", lease_seconds=10)
    with later(11):
        fresh = leases.chunk_claim(delivery_id=delivery.delivery_id, owner="b", lease_seconds=10)
    first = batches.targets_deliver(delivery_id=delivery.delivery_id, seq=0, user_ids=targets[:2], event=event)
    assert first.delivered == targets[:2]
    late = batches.targets_deliver(delivery_id=delivery.delivery_id, seq=0, user_ids=stale.user_ids, event=event)
    assert sorted(late.delivered) == sorted(targets[2:]) and sorted(late.gone) == sorted(targets[:2])
    with later(11):
        outcome = dispatch.chunk_dispatch(lease=fresh, event=event, batch_size=2)
    assert outcome.finished and outcome.delivered == 0
    assert dispatch.delivery_finish(delivery_id=delivery.delivery_id)
    assert_exactly_once(delivery.delivery_id, targets)
    chunk = DeliveryChunk.get(models.chunk_key(delivery.delivery_id, 0), consistent_read=True)
    assert chunk.delivered == 5


def test_stopping_releases_the_chunk_for_others(prepared):
    delivery, _ = prepared
    event = batches.delivery_feed_event(delivery)
    lease = leases.chunk_claim(delivery_id=delivery.delivery_id, owner="a", lease_seconds=60)
    outcome = dispatch.chunk_dispatch(lease=lease, event=event, batch_size=2, should_stop=lambda: True)
    assert outcome.stopped and outcome.delivered == 0
    other = leases.chunk_claim(delivery_id=delivery.delivery_id, owner="b", lease_seconds=60)
    assert other is not None and other.seq == 0  # no need to wait a minute for the lease


def test_conflicting_feed_is_retried_and_the_rest_of_the_batch_goes_through(prepared):
    """A feed that changes under every attempt is deferred; the other targets are delivered."""
    from notifications.feed import events as feed_events
    from notifications.feed import merge as feed_merge
    from notifications.feed import services as feed_services

    delivery, targets = prepared
    event = batches.delivery_feed_event(delivery)
    leases.chunk_claim(delivery_id=delivery.delivery_id, owner="a", lease_seconds=60)
    busy = targets[1]
    real_compute = feed_merge.feed_write_compute

    def compute_then_someone_writes(*, feed, event):
        write = real_compute(feed=feed, event=event)
        if feed.user_id == busy:  # another producer writes this feed right after we read it
            feed_services.feed_append(
                user_id=busy, event=feed_events.FeedEvent(f"other#{time.time_ns()}", "reply", "9", None, "hi")
            )
        return write

    with (
        mock.patch.object(batches, "feed_write_compute", compute_then_someone_writes),
        mock.patch.object(batches, "backoff_sleep", lambda attempt: None),
    ):
        result = batches.targets_deliver(delivery_id=delivery.delivery_id, seq=0, user_ids=targets, event=event)
    assert result.deferred == [busy]
    assert sorted(result.delivered) == sorted(t for t in targets if t != busy)
    counts = message_counts(delivery.delivery_id, targets)
    assert counts[busy] == 0 and all(counts[t] == 1 for t in targets if t != busy)
    # Later, once the feed is quiet, the deferred target is delivered by a normal run.
    with later(120):
        dispatch.delivery_dispatch(delivery_id=delivery.delivery_id, owner="b", batch_size=2, lease_seconds=60)
    assert_exactly_once(delivery.delivery_id, targets)


def test_a_dispatcher_that_fails_mid_chunk_releases_its_lease_and_another_finishes_at_once(prepared):
    """DynamoDB failing under one dispatcher (not a kill): the chunk is free for the next
    dispatcher now, not after the lease's 30 s, and every target still gets one message."""
    delivery, targets = prepared
    real_deliver = batches.targets_deliver
    calls = []

    def fails_on_the_second_batch(**kwargs):
        calls.append(kwargs["user_ids"])
        if len(calls) == 2:
            raise RuntimeError("DynamoDB unreachable")
        return real_deliver(**kwargs)

    with mock.patch.object(batches, "targets_deliver", fails_on_the_second_batch), pytest.raises(RuntimeError):
        dispatch.delivery_dispatch(delivery_id=delivery.delivery_id, owner="a", batch_size=2, lease_seconds=30)
    chunk = DeliveryChunk.get(models.chunk_key(delivery.delivery_id, 0), consistent_read=True)
    assert chunk.lease_expires_at == 0 and chunk.status == "pending"
    assert sum(message_counts(delivery.delivery_id, targets).values()) == 2

    # Same clock: no expiry needed for the next dispatcher to take the chunk over.
    report = dispatch.delivery_dispatch(delivery_id=delivery.delivery_id, owner="b", batch_size=2, lease_seconds=30)
    assert report.status == "done" and report.delivered == 3
    assert_exactly_once(delivery.delivery_id, targets)
