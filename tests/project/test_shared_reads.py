"""Reads many viewers share are kept a moment per process (project/dynamo/shared_reads.py): the
timeline's newest comments and list pages' like counts are read once for many requests,
while what a person changed themselves is still read exactly."""

import threading
import time
from collections import Counter
from unittest import mock

import pytest

from actions.comments import comment_create
from actions.likes import like_add
from project.clock import ManualClock, clock_override
from project.dynamo import shared_reads, wire
from project.dynamo.shared_reads import SharedReads
from project.testing.harness import WAIT_SECONDS, wait_for
from social import counters, fold_effects, selectors
from social.models import LiveChange

pytestmark = pytest.mark.django_db


@pytest.fixture
def calls():
    """DynamoDB calls made, by (operation, table suffix)."""
    real = wire.make_api_call
    seen: Counter = Counter()

    def spy(self, operation_name, api_params):
        table = api_params.get("TableName") or ",".join(api_params.get("RequestItems", {}))
        seen[(operation_name, table.split("_", 2)[-1])] += 1
        return real(self, operation_name, api_params)

    with mock.patch.object(wire, "make_api_call", spy):
        yield seen


@pytest.fixture
def shared(settings):
    settings.SHARED_READ_SECONDS = 60.0  # far longer than any test: nothing expires by itself
    counters.counters_forget_caches()
    selectors._shared_days.clear()
    selectors._shared_comments.clear()
    yield
    counters.counters_forget_caches()
    selectors._shared_days.clear()
    selectors._shared_comments.clear()


def test_the_timeline_of_many_requests_is_read_once_and_each_viewer_still_sees_their_own_writes(
    client, make_user, calls, shared
):
    alice, bob = make_user("alice"), make_user("bob")
    ids = [comment_create(author_id=str(alice.pk), body=f"Comment {n}").comment_id for n in range(5)]
    client.force_login(bob)
    assert client.get("/").status_code == 200
    first = sum(count for (operation, table), count in calls.items() if table in {"comments", "counters"})
    assert first >= 6  # the day shards and five counts
    calls.clear()
    for _ in range(3):
        assert client.get("/").status_code == 200
    assert calls[("Query", "comments")] == 0
    assert calls[("Query", "counters")] == 0

    # Bob likes a comment: his own count is read exactly (the fresh cookie), not from the copy.
    response = client.put(f"/api/comments/{ids[0]}/like/", content_type="application/json")
    assert response.status_code == 200
    calls.clear()
    page = client.get("/").content.decode()
    assert calls[("Query", "counters")] == 2  # that comment's like count and its reactions, exactly
    assert f'data-like-count="{ids[0]}">1<' in page

    # Alice posts: she sees her comment on the next page although the shared copy predates it.
    client.force_login(alice)
    client.post("/", {"body": "Brand new", "idempotency_key": "k" * 32})
    assert "Brand new" in client.get("/").content.decode()


def test_counts_shared_by_requests_are_the_eventually_consistent_ones_only(make_user, calls, shared):
    alice, bob = make_user("alice"), make_user("bob")
    comment_id = comment_create(author_id=str(alice.pk), body="Counted").comment_id
    key = counters.counter_key(kind=counters.LIKES, object_id=comment_id)
    assert counters.counter_value(key=key, consistent=False) == 0
    like_add(comment_id=comment_id, user_id=str(bob.pk))
    assert counters.counter_value(key=key, consistent=False) == 0  # the process's copy
    assert counters.counter_value(key=key) == 1  # an exact read is never shared
    counters.counters_forget_caches()
    assert counters.counter_value(key=key, consistent=False) == 1


def test_off_with_zero_seconds(make_user, calls, settings):
    settings.SHARED_READ_SECONDS = 0
    alice = make_user("alice")
    comment_id = comment_create(author_id=str(alice.pk), body="Counted").comment_id
    key = counters.counter_key(kind=counters.LIKES, object_id=comment_id)
    for _ in range(3):
        counters.counter_value(key=key, consistent=False)
    assert calls[("Query", "counters")] == 3


def test_one_read_in_flight_per_key_and_a_failed_read_is_not_kept(settings, monkeypatch):
    settings.SHARED_READ_SECONDS = 60.0
    reads = SharedReads[int](maxsize=4)
    started, release = threading.Event(), threading.Event()
    count = Counter()
    waiting: list[int] = []

    class CountedEvent(threading.Event):
        def wait(self, timeout=None):
            waiting.append(1)
            return super().wait(timeout)

    class CountedFlight(shared_reads._Flight):
        def __init__(self) -> None:
            super().__init__()
            self.done = CountedEvent()

    monkeypatch.setattr(shared_reads, "_Flight", CountedFlight)

    def slow() -> int:
        count["reads"] += 1
        started.set()
        release.wait(WAIT_SECONDS)
        return 7

    leader = threading.Thread(target=lambda: reads.get("k", slow))
    leader.start()
    assert started.wait(WAIT_SECONDS)
    results: list[int] = []
    others = [threading.Thread(target=lambda: results.append(reads.get("k", slow))) for _ in range(4)]
    for thread in others:
        thread.start()
    wait_for(lambda: len(waiting) == 4, what="four requests waiting for the one read in flight")
    release.set()
    for thread in [leader, *others]:
        thread.join(WAIT_SECONDS)
    assert results == [7, 7, 7, 7]
    assert count["reads"] == 1

    def failing() -> int:
        raise RuntimeError("DynamoDB is away")

    with pytest.raises(RuntimeError):
        reads.get("other", failing)
    assert reads.get("other", lambda: 3) == 3


@pytest.fixture
def manual():
    with clock_override(ManualClock(time.time())) as clock:
        yield clock


def _shown_count(page: str, comment_id: str) -> str:
    return page.split(f'data-like-count="{comment_id}">', 1)[1].split("<", 1)[0]


def test_a_list_page_shows_a_kept_count_until_a_signal_touches_it(client, make_user, calls, shared, manual):
    alice, bob, carol, dave = (make_user(name) for name in ("alice", "bob", "carol", "dave"))
    first, second = (comment_create(author_id=str(alice.pk), body=body).comment_id for body in ("First", "Second"))
    like_add(comment_id=first, user_id=str(carol.pk))  # folded at once outside a request: signalled
    manual.advance(5)  # past LIVE_SIGNAL_LAG: an eventually consistent read now reflects the like
    client.force_login(bob)
    page = client.get("/").content.decode()
    assert (_shown_count(page, first), _shown_count(page, second)) == ("1", "0")

    manual.advance(1)
    counters.counters_forget_caches()  # no shared read left: only the kept counts can spare the Queries
    calls.clear()
    page = client.get("/").content.decode()
    assert calls[("Query", "counters")] == 0
    assert (_shown_count(page, first), _shown_count(page, second)) == ("1", "0")

    like_add(comment_id=second, user_id=str(dave.pk))  # its fold signals the second comment
    manual.advance(1)
    counters.counters_forget_caches()
    calls.clear()
    page = client.get("/").content.decode()
    assert calls[("Query", "counters")] == 1  # the signalled count alone is read again
    assert (_shown_count(page, first), _shown_count(page, second)) == ("1", "1")


def test_a_list_page_reads_its_counts_when_the_log_cannot_vouch_and_a_lost_signal_within_the_net(
    client, make_user, calls, shared, manual, settings
):
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    comment_id = comment_create(author_id=str(alice.pk), body="Counted").comment_id
    client.force_login(bob)
    assert _shown_count(client.get("/").content.decode(), comment_id) == "0"

    # The like's signal is never put (lost: the fold sends it with its events' delete, or a
    # plain put fails): the kept count holds until the net.
    with (
        mock.patch.object(LiveChange, "save", side_effect=RuntimeError("injected")),
        mock.patch.object(fold_effects, "live_signal_items", return_value=[]),
    ):
        like_add(comment_id=comment_id, user_id=str(carol.pk))
    manual.advance(1)
    counters.counters_forget_caches()
    assert _shown_count(client.get("/").content.decode(), comment_id) == "0"
    manual.advance(settings.LIVE_FULL_EVERY / 2)
    counters.counters_forget_caches()
    calls.clear()
    assert _shown_count(client.get("/").content.decode(), comment_id) == "1"
    assert calls[("Query", "counters")] == 1

    # The log cannot be read: nothing is kept, every count is read.
    manual.advance(5)
    counters.counters_forget_caches()
    calls.clear()
    with mock.patch.object(LiveChange, "query", side_effect=RuntimeError("injected")):
        assert _shown_count(client.get("/").content.decode(), comment_id) == "1"
    assert calls[("Query", "counters")] == 1


def test_viewers_with_and_without_comments_of_their_own_just_written_share_one_timeline_read(
    client, make_user, calls, shared
):
    alice, bob = make_user("alice"), make_user("bob")
    for n in range(3):
        comment_create(author_id=str(alice.pk), body=f"Comment {n}")
    client.force_login(bob)
    assert client.get("/").status_code == 200  # read, and kept a moment

    client.force_login(alice)
    client.post("/", {"body": "Brand new", "idempotency_key": "k" * 32})  # alice's page now adds her own
    calls.clear()
    page = client.get("/").content.decode()
    assert "Brand new" in page and "Comment 2" in page
    assert calls[("Query", "comments")] == 0  # the day's shards: not read again for her


def _shown_badge(page: str) -> str:
    return page.split("data-unread-badge", 1)[1].split(">", 1)[1].split("<", 1)[0]


def test_a_page_shows_the_badge_another_page_read_until_a_signal_for_its_viewer(
    client, make_user, calls, shared, manual
):
    """The header's badge, read for a page, is shown again on the viewer's next pages of this
    process while the change log has no signal for them; a like on their comment (its fold
    signals them) is read on the next page, and the inbox and a browser that just marked read
    always read it exactly."""
    alice, bob = make_user("alice"), make_user("bob")
    comment_id = comment_create(author_id=str(bob.pk), body="Mine").comment_id
    client.force_login(bob)
    assert _shown_badge(client.get("/").content.decode()) == "0"
    manual.advance(1)
    calls.clear()
    assert _shown_badge(client.get("/").content.decode()) == "0"
    assert calls[("Query", "unread_counts")] == 0

    like_add(comment_id=comment_id, user_id=str(alice.pk))  # folded at once here: bob is signalled
    manual.advance(1)
    calls.clear()
    assert _shown_badge(client.get("/").content.decode()) == "1"
    assert calls[("Query", "unread_counts")] == 1

    calls.clear()
    assert _shown_badge(client.get("/notifications/").content.decode()) == "1"  # the inbox: exact
    assert calls[("Query", "unread_counts")] == 1


def test_a_page_reads_the_badge_when_the_log_cannot_vouch(client, make_user, calls, shared, manual):
    bob = make_user("bob")
    client.force_login(bob)
    assert _shown_badge(client.get("/").content.decode()) == "0"
    manual.advance(5)  # past the last refresh's vouching: the next refresh fails
    calls.clear()
    with mock.patch.object(LiveChange, "query", side_effect=RuntimeError("injected")):
        assert _shown_badge(client.get("/").content.decode()) == "0"
    assert calls[("Query", "unread_counts")] == 1
