"""The feed's concurrent writers under AWS's conflict rules (project/testing/aws_conflicts.py).

DynamoDB Local serialises transactions; on AWS a feed write that meets another one in
flight on the same item is cancelled (`TransactionConflict`) or refused
(`TransactionConflictException`). Whatever the writers meet, every event lands once.
"""

import threading

import pytest

from notifications.feed import events as feed_events
from notifications.feed import services as feed_services
from notifications.feed.events import FeedEvent
from notifications.models import Feed, UnreadCount
from project.errors import Conflict, Throttled
from tests.notifications.test_feed_concurrency import WRITERS, assert_each_event_once, drain, run_writers

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]


def test_eight_writers_under_aws_conflicts_lose_nothing(aws_conflicts):
    results, errors = run_writers(8)
    assert errors == []
    assert len(results) == WRITERS * 8
    drain()  # a writer that lost too many races queued its event for the retry worker
    assert_each_event_once([f"w{w}-e{n}" for w in range(WRITERS) for n in range(8)])
    refused = aws_conflicts.cancelled + aws_conflicts.refused_writes + sum(r.conflicts for r in results)
    assert refused > 0, "the writers never met: the test did not test the conflict rules"


def test_concurrent_replies_under_aws_conflicts_count_each_person_once(aws_conflicts):
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
    assert (entry.actor_count, entry.event_count) == (WRITERS, WRITERS * 3)
    assert sorted(entry.actor_ids) == sorted(str(actor) for actor in range(WRITERS))


def test_mark_read_under_aws_conflicts_with_writers_loses_nothing(aws_conflicts):
    """Readers marking all read while writers append: every event lands once, read or not,
    and the badge is exactly the feed's unread entries when they are done."""
    stop, marked, refused = threading.Event(), [], []

    def reader():
        while not (stop.is_set() and marked):  # at least one marking, however the threads run
            try:
                marked.append(feed_services.feed_mark_read(user_id="1"))
            except (Conflict, Throttled):  # a client's "retry shortly": nothing was written
                refused.append(1)

    readers = [threading.Thread(target=reader) for _ in range(2)]
    for thread in readers:
        thread.start()
    try:
        results, errors = run_writers(4)
    finally:
        stop.set()
        for thread in readers:
            thread.join()
    assert errors == [] and len(results) == WRITERS * 4
    drain()
    expected = [f"w{w}-e{n}" for w in range(WRITERS) for n in range(4)]
    item = Feed.get("1", consistent_read=True)
    entry_ids = [entry.entry_id for entry in item.entries]
    assert sorted(entry_ids) == sorted(feed_events.feed_entry_id(event_id) for event_id in expected)
    unread = sum(1 for entry in item.entries if not entry.read)
    assert int(UnreadCount.get("1", "feed", consistent_read=True).count) == unread
    assert sum(marked) + unread == len(expected)  # each entry marked read once, or still unread
