"""Sharded counters, due flags and aggregation against DynamoDB Local (with injected faults)."""

import threading
import time
from unittest import mock

import pytest

from actions.comments import comment_create
from actions.likes import like_add, like_remove
from project.clock import ManualClock, clock_override
from project.dynamo import wire
from project.testing.harness import in_threads, wait_for
from social import aggregation, counters, ranking
from social.counters import LIKES, VIEWS, counter_key
from social.models import CounterShard, CounterTotal
from tests.social.helpers import aggregate, due_index_caught_up, pending_keys

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]


@pytest.fixture(autouse=True)
def quick_aggregation(settings):
    """Flags come due 0.2 s after a change, on the project's clock, which stands still here
    unless a test moves it: an aggregator waiting for a flag to settle moves it, never sleeps."""
    settings.COUNTER_AGGREGATION_DELAY = 0.2
    settings.COUNTER_AGGREGATION_LEASE = 30.0
    counters.counters_forget_caches()
    with clock_override(ManualClock(time.time())):
        yield
    counters.counters_forget_caches()


@pytest.fixture
def comment(make_user):
    author = make_user("author")
    return comment_create(author_id=str(author.pk), body="Hot take")


def ranked_ids():
    return [r.comment.id for r in ranking.ranking_top(kind=LIKES, limit=10)]


def total_of(key):
    item = aggregation.counter_total_get(key=key)
    return None if item is None or item.total is None else int(item.total)


def shard_items(key):
    return list(CounterShard.query(key, consistent_read=True))


def test_like_raises_one_due_flag_and_aggregation_writes_the_total(comment):
    key = counter_key(kind=LIKES, object_id=comment.comment_id)
    like_add(comment_id=comment.comment_id, user_id="1")
    first = aggregation.counter_total_get(key=key)
    like_add(comment_id=comment.comment_id, user_id="2")
    second = aggregation.counter_total_get(key=key)
    assert pending_keys() == [key]
    assert second.due_at == first.due_at and second.changed_at == first.changed_at  # not pushed back
    assert total_of(key) is None

    assert aggregate(due_only=False) == 1
    assert total_of(key) == 2
    assert pending_keys() == []
    after = aggregation.counter_total_get(key=key)
    assert after.due_at is None and after.due_part is None and after.claim is None and after.changed_at is None


def test_not_yet_due_counters_wait_for_the_loop_but_not_for_a_one_off_run(comment):
    key = counter_key(kind=LIKES, object_id=comment.comment_id)
    with clock_override(ManualClock()) as clock:
        like_add(comment_id=comment.comment_id, user_id="1")
        assert aggregate(due_only=True) == 0  # due only after the delay
        assert pending_keys() == [key]
        clock.advance(0.25)
        assert aggregate(due_only=True) == 1
    assert total_of(key) == 1


@pytest.mark.slow
def test_burst_of_concurrent_increments_across_shards_keeps_one_flag_and_exact_total(comment):
    likes = counter_key(kind=LIKES, object_id=comment.comment_id)
    views = counter_key(kind=VIEWS, object_id=comment.comment_id)
    counters.counter_set_shards(key=likes, shards=10)
    counters.counter_set_shards(key=views, shards=10)
    flags_seen = []
    stop = threading.Event()

    def watch_flags():
        while True:  # at least one look, however late the thread runs
            found = [p.key for p in aggregation.counters_pending(due_only=False)]
            flags_seen.append((found.count(likes), found.count(views)))
            if stop.is_set():
                return

    watcher = threading.Thread(target=watch_flags)
    watcher.start()

    def writer(index):
        for n in range(25):
            like_add(comment_id=comment.comment_id, user_id=f"{index}-{n}")
            counters.counter_increment(key=views)

    in_threads(writer, 8)
    stop.set()
    watcher.join()

    assert len({item.shard for item in shard_items(likes)}) > 1  # the burst did spread
    assert len({item.shard for item in shard_items(views)}) > 1
    assert flags_seen and all(like_flags <= 1 and view_flags <= 1 for like_flags, view_flags in flags_seen)
    assert pending_keys() == sorted([likes, views])
    assert aggregate(due_only=False) == 2
    assert total_of(likes) == 200
    assert total_of(views) == 200
    assert pending_keys() == []


def test_view_writers_reuse_a_fresh_flag_instead_of_writing_it_every_time(comment, settings):
    settings.COUNTER_AGGREGATION_DELAY = 5.0  # a reuse window of 7.5 s; the clock stands still meanwhile
    key = counter_key(kind=VIEWS, object_id=comment.comment_id)
    real = wire.make_api_call
    flag_writes = []

    def counting(self, operation_name, api_params):
        if operation_name == "UpdateItem" and api_params["TableName"] == CounterTotal.Meta.table_name:
            flag_writes.append(api_params)
        return real(self, operation_name, api_params)

    with mock.patch.object(wire, "make_api_call", counting):
        for _ in range(20):
            counters.counter_increment(key=key)
    assert counters.counter_value(key=key) == 20
    assert len(flag_writes) == 1
    settings.COUNTER_AGGREGATION_DELAY = 0.2
    aggregate(due_only=False)
    assert total_of(key) == 20


@pytest.mark.slow
def test_views_landing_while_aggregators_run_are_never_left_out(comment, settings):
    """Views land while two aggregators claim, wait for flags to settle and sum, on the
    project's clock: each view moves it 5 ms, so flags come due (and views start relying on
    a pending flag) at the same points of the run on any machine."""
    key = counter_key(kind=VIEWS, object_id=comment.comment_id)
    counters.counter_set_shards(key=key, shards=4)
    viewers_done = threading.Event()

    def aggregator():
        while not viewers_done.is_set():
            aggregation.counters_aggregate_pending(due_only=True)
            viewers_done.wait(0.02)  # a poll interval, not a wait for something to happen

    with clock_override(ManualClock()) as clock:
        aggregators = [threading.Thread(target=aggregator) for _ in range(2)]
        for thread in aggregators:
            thread.start()

        def viewer(index):
            for _ in range(40):
                counters.counter_increment(key=key)
                clock.advance(0.005)

        try:
            in_threads(viewer, 4)
        finally:
            viewers_done.set()
            for thread in aggregators:
                thread.join()
        # The flag the last views raised (unless the aggregators took it already) comes due.
        clock.advance(10 * settings.COUNTER_AGGREGATION_DELAY)
        aggregate(due_only=True)
    assert total_of(key) == 160
    assert pending_keys() == []


def _kill_after_shards_are_read():
    """Make the first counter_totals write after a shard Query die, as a crashed aggregator would."""
    real = wire.make_api_call
    state = {"read": False, "killed": 0}

    def fake(self, operation_name, api_params):
        table = api_params.get("TableName")
        if operation_name == "Query" and table == CounterShard.Meta.table_name:
            state["read"] = True
        elif (
            operation_name == "UpdateItem"
            and table == CounterTotal.Meta.table_name
            and state["read"]
            and not state["killed"]
        ):
            state["killed"] += 1
            raise SystemExit("aggregator killed")
        return real(self, operation_name, api_params)

    return mock.patch.object(wire, "make_api_call", fake), state


def test_aggregator_killed_between_reading_shards_and_writing_total_is_repaired(comment, settings):
    with clock_override(ManualClock()) as clock:
        key = counter_key(kind=LIKES, object_id=comment.comment_id)
        for user in ("1", "2", "3"):
            like_add(comment_id=comment.comment_id, user_id=user)
        aggregate(due_only=False)
        like_add(comment_id=comment.comment_id, user_id="4")

        settings.COUNTER_AGGREGATION_LEASE = 0.5
        patcher, state = _kill_after_shards_are_read()
        with patcher, pytest.raises(SystemExit):
            aggregate(due_only=False)
        assert state["killed"] == 1
        assert total_of(key) == 3  # the dead aggregator wrote nothing
        assert pending_keys() == [key]  # its claim stays in the due index
        assert aggregate(due_only=True) == 0  # a live claim is left alone by the loop...
        clock.advance(0.55)
        assert aggregate(due_only=True) == 1  # ...until it expires
        assert total_of(key) == 4
        assert pending_keys() == []


def test_a_one_off_run_repairs_a_dead_claim_at_once(comment):
    key = counter_key(kind=LIKES, object_id=comment.comment_id)
    like_add(comment_id=comment.comment_id, user_id="1")
    patcher, _ = _kill_after_shards_are_read()
    with patcher, pytest.raises(SystemExit):
        aggregate(due_only=False)
    assert aggregate(due_only=False) == 1
    assert total_of(key) == 1


def test_change_during_aggregation_keeps_the_flag_up(comment):
    key = counter_key(kind=LIKES, object_id=comment.comment_id)
    like_add(comment_id=comment.comment_id, user_id="1")
    real_value = aggregation.counter_value

    def value_with_a_like_landing_first(**kwargs):
        value = real_value(**kwargs)
        like_add(comment_id=comment.comment_id, user_id="2")  # lands after the shard read
        return value

    due_index_caught_up()
    with mock.patch.object(aggregation, "counter_value", value_with_a_like_landing_first):
        outcome = aggregation.counter_aggregate(
            key=key, seen_due_at=next(aggregation.counters_pending(due_only=False)).due_at
        )
    assert outcome.total == 1 and outcome.still_due
    assert pending_keys() == [key]
    assert aggregate(due_only=False) == 1
    assert total_of(key) == 2
    assert pending_keys() == []


def test_concurrent_aggregators_claim_each_counter_once(make_user):
    author = make_user("author")
    keys = []
    for n in range(12):
        comment = comment_create(author_id=str(author.pk), body=f"comment {n}")
        for user in range(n % 4 + 1):
            like_add(comment_id=comment.comment_id, user_id=str(user))
        keys.append((counter_key(kind=LIKES, object_id=comment.comment_id), n % 4 + 1))
    due_index_caught_up()
    done = in_threads(lambda _: aggregation.counters_aggregate_pending(due_only=False), 3)
    assert sum(done) == 12  # every counter aggregated by exactly one of the three
    assert {key: total_of(key) for key, _ in keys} == dict(keys)
    assert pending_keys() == []


def test_a_stale_flag_seen_twice_is_claimed_once(comment):
    key = counter_key(kind=LIKES, object_id=comment.comment_id)
    like_add(comment_id=comment.comment_id, user_id="1")
    due_index_caught_up()
    seen = next(aggregation.counters_pending(due_only=False)).due_at
    assert aggregation.counter_aggregate(key=key, seen_due_at=seen) is not None
    assert aggregation.counter_aggregate(key=key, seen_due_at=seen) is None


def test_changing_the_shard_count_keeps_the_count(comment, fold_likes):
    key = counter_key(kind=LIKES, object_id=comment.comment_id)
    for user in range(1, 21):
        like_add(comment_id=comment.comment_id, user_id=str(user))
    assert counters.counter_shard_count(key=key) == 1
    counters.counter_set_shards(key=key, shards=10)
    counters.counters_forget_caches()  # as another web process would, after its cache expired
    assert counters.counter_shard_count(key=key) == 10
    for user in range(21, 41):
        like_add(comment_id=comment.comment_id, user_id=str(user))
    for user in range(1, 11):  # liked on shard 0, unliked on their new shard
        assert not like_remove(comment_id=comment.comment_id, user_id=str(user)).liked
    assert counters.counter_value(key=key) == 30
    assert len(shard_items(key)) > 1
    assert sum(int(item.count) for item in shard_items(key)) == 30
    fold_likes()
    aggregate(due_only=False)
    assert total_of(key) == 30

    counters.counter_set_shards(key=key, shards=1)  # and back down: still nothing lost
    counters.counters_forget_caches()
    for user in range(11, 21):
        like_remove(comment_id=comment.comment_id, user_id=str(user))
    assert counters.counter_value(key=key) == 20
    fold_likes()  # the fold raises the due flag (here the requests left it to the folder: 10 likes a second)
    aggregate(due_only=False)
    assert total_of(key) == 20


def test_shard_count_out_of_range_is_refused(comment):
    from project.errors import ApplicationError

    key = counter_key(kind=LIKES, object_id=comment.comment_id)
    for bad in (0, 101):
        with pytest.raises(ApplicationError):
            counters.counter_set_shards(key=key, shards=bad)
    with pytest.raises(ApplicationError):
        counters.counter_set_shards(key="bogus#x", shards=2)
    assert counters.counter_shard_count(key=key) == 1


def test_count_back_to_zero_leaves_the_ranking(comment):
    key = counter_key(kind=LIKES, object_id=comment.comment_id)
    like_add(comment_id=comment.comment_id, user_id="1")
    aggregate(due_only=False)
    wait_for(lambda: ranked_ids() == [comment.comment_id], what="the ranking listing the comment")
    like_remove(comment_id=comment.comment_id, user_id="1")
    aggregate(due_only=False)
    assert total_of(key) == 0
    wait_for(lambda: ranked_ids() == [], what="the ranking leaving it out")  # its index trails the total


def test_a_stop_during_the_wait_for_a_relied_on_flag_leaves_the_claim_to_expire(settings):
    """Views rely on the flag, so the aggregator waits for it to settle; a stop (SIGTERM)
    ends that wait at its next check instead of sitting it out, and the claim left behind
    is taken again once it expires, with the full count."""
    settings.COUNTER_AGGREGATION_DELAY = 60.0
    with clock_override(ManualClock()) as clock:
        key = counter_key(kind=VIEWS, object_id="seen")
        counters.counter_increment(key=key)
        clock.advance(60)  # due now; settled only 45 s from now (1.75 x the delay)
        stopping, slept = [], []

        def sleep(seconds):
            slept.append(seconds)
            clock.advance(seconds)
            stopping.append(True)  # the signal arrives during the first slice of the wait

        due_index_caught_up()
        assert aggregation.counters_aggregate_pending(due_only=True, stop=lambda: bool(stopping), sleep=sleep) == 0
        assert slept == [aggregation.STOP_CHECK_SECONDS]  # one slice, not the 45 s
        assert total_of(key) is None and pending_keys() == [key]
        counters.counter_increment(key=key)  # a view after the stop: in the sum below
        clock.advance(settings.COUNTER_AGGREGATION_LEASE + 60)
        assert aggregate(due_only=True) == 1
        assert total_of(key) == 2
