"""Worker heartbeats: what the polling workers write, what health reads, what each backlog counts."""

from __future__ import annotations

import threading
from datetime import date, timedelta
from unittest import mock

import pytest

from actions.comments import comment_create
from actions.likes import like_add
from delivery import preparation
from delivery import selectors as delivery_selectors
from delivery import services as delivery_services
from notifications import selectors as notification_selectors
from notifications.feed import events as feed_events
from notifications.feed import selectors as feed_selectors
from notifications.feed import services as feed_services
from notifications.selectors import like_events_backlog
from project.clock import ManualClock, clock_override
from project.models import HEARTBEAT_KEPT_SECONDS, WorkerHeartbeat
from project.operations.backlog import Backlog
from project.operations.health_selectors import MISSING, OK, STALE, WORKERS, worker_statuses
from project.operations.health_services import Heartbeat, heartbeat_write
from project.operations.worker_loop import worker_loop
from project.testing.harness import wait_for
from social import aggregation
from social.activity import rollup
from social.activity.periods import day_bounds

T0 = 1_900_000_000.0


@pytest.fixture
def manual_clock():
    with clock_override(ManualClock(T0)) as moved:
        yield moved


def beat(worker: str, instance: str, *, at: float, backlog: Backlog | None = None) -> None:
    heartbeat_write(
        worker=worker, instance=instance, started_at=at, now=at, cycle_at=at, cycle_seconds=0.1, backlog=backlog
    )


def status_of(worker: str, statuses):
    return [status for status in statuses if status.worker == worker]


def test_a_pulse_writes_at_most_every_few_seconds_with_the_backlog(manual_clock, settings):
    settings.WORKER_HEARTBEAT_SECONDS = 5
    measured = []

    def measure():
        measured.append(manual_clock.now())
        return Backlog(label="pending things", count=7, oldest_at=T0 - 30)

    heartbeat = Heartbeat(worker="fold_like_events", backlog=measure)
    heartbeat.pulse()
    manual_clock.advance(2)
    heartbeat.pulse()  # 2 s later: nothing written, nothing measured
    [item] = WorkerHeartbeat.query("fold_like_events")
    assert (item.beat_at, item.backlog, item.backlog_label, item.lag_seconds) == (T0, 7, "pending things", 30)
    assert item.instance == heartbeat.instance and item.expires_at.timestamp() == T0 + HEARTBEAT_KEPT_SECONDS
    assert len(measured) == 1
    manual_clock.advance(3)
    heartbeat.cycle_done(started=T0 + 4, finished=T0 + 5)
    [item] = WorkerHeartbeat.query("fold_like_events")
    assert (item.beat_at, item.cycle_at, item.cycle_seconds) == (T0 + 5, T0 + 5, 1)
    assert len(measured) == 2


def test_health_reads_ok_stale_and_missing_workers(manual_clock, settings):
    settings.WORKER_STALE_SECONDS = 60
    beat("fold_like_events", "web-1:10", at=T0 - 10, backlog=Backlog(label="pending like events", count=3))
    beat("aggregate_counters", "web-1:11", at=T0 - 61)
    statuses = worker_statuses()
    assert [status.worker for status in statuses] == list(WORKERS)
    [fold] = status_of("fold_like_events", statuses)
    assert (fold.state, fold.age_seconds, fold.backlog_text) == (OK, 10, "3")
    assert status_of("aggregate_counters", statuses)[0].state == STALE
    assert {status.state for status in statuses if status.worker not in ("fold_like_events", "aggregate_counters")} == {
        MISSING
    }


def test_a_restarted_process_replaces_the_dead_one_on_its_host_but_not_other_hosts(manual_clock):
    beat("rollup_activity", "web-1:10", at=T0 - 600)  # died; the process manager started :11
    beat("rollup_activity", "web-1:11", at=T0 - 1)
    beat("rollup_activity", "web-2:10", at=T0 - 600)  # a whole host gone quiet: still reported
    rows = status_of("rollup_activity", worker_statuses())
    assert [(row.instance, row.state) for row in rows] == [("web-1:11", OK), ("web-2:10", STALE)]


def test_an_expired_heartbeat_is_not_read_whether_or_not_ttl_deleted_it(manual_clock):
    beat("dispatch_deliveries", "gone:1", at=T0 - HEARTBEAT_KEPT_SECONDS - 1)
    assert [row.state for row in status_of("dispatch_deliveries", worker_statuses())] == [MISSING]


def test_the_loop_beats_after_each_pass_and_removes_its_heartbeat_when_stopped(settings):
    settings.WORKER_HEARTBEAT_SECONDS = 0
    stop = threading.Event()
    seen = []
    heartbeat = Heartbeat(worker="aggregate_counters", backlog=lambda: Backlog(label="counters due", count=0))

    def run_pass():
        seen.append(list(WorkerHeartbeat.query("aggregate_counters")))
        if len(seen) == 3:
            stop.set()
        return True

    worker_loop(run_pass, stop=stop, interval=0, logger=mock.Mock(), name="aggregate_counters", heartbeat=heartbeat)
    assert [len(items) for items in seen] == [0, 1, 1]  # written after the first pass
    assert seen[2][0].beat_at >= seen[1][0].beat_at
    assert list(WorkerHeartbeat.query("aggregate_counters")) == []  # a clean stop leaves none behind


def test_a_failing_pass_writes_no_heartbeat_and_a_failing_write_does_not_stop_the_worker(settings):
    settings.WORKER_HEARTBEAT_SECONDS = 0
    stop = threading.Event()
    passes = []
    heartbeat = Heartbeat(worker="fold_like_events")

    def run_pass():
        passes.append(1)
        if len(passes) == 1:
            raise RuntimeError("the table is unreachable")
        if len(passes) == 3:
            stop.set()
        return True

    # DynamoDB refusing the heartbeat's put (an injected fault): the worker goes on working.
    with mock.patch.object(WorkerHeartbeat, "save", side_effect=ConnectionError("refused")) as save:
        worker_loop(
            run_pass,
            stop=stop,
            interval=0,
            logger=mock.Mock(),
            name="x",
            keep_going_on=lambda e: True,
            heartbeat=heartbeat,
        )
    assert len(passes) == 3 and save.call_count == 2  # passes 2 and 3 tried; the failed one did not


@pytest.mark.django_db  # posting reads its author's account (the spam screen)
def test_counting_stops_at_the_cap_and_says_so(no_fold_in_request):
    comment = comment_create(author_id="1", body="hello").comment_id
    for liker in range(5):
        like_add(comment_id=comment, user_id=f"liker{liker}")
    assert (like_events_backlog().count, like_events_backlog().capped) == (5, False)
    with mock.patch.object(notification_selectors, "BACKLOG_CAP", 2):
        capped = like_events_backlog()
    assert (capped.count, capped.capped) == (2, True)  # "at least 2"


@pytest.fixture
def no_fold_in_request(settings):
    settings.LIKE_FOLD_AFTER_RESPONSE = False


@pytest.mark.django_db
def test_pending_like_events_and_their_age(no_fold_in_request, fold_likes):
    with clock_override(ManualClock(T0)):
        comment = comment_create(author_id="1", body="hello").comment_id
        like_add(comment_id=comment, user_id="2")
    with clock_override(ManualClock(T0 + 40)):
        like_add(comment_id=comment, user_id="3")
    backlog = like_events_backlog()
    assert (backlog.label, backlog.count, backlog.capped) == ("pending like events", 2, False)
    assert backlog.oldest_at == pytest.approx(T0, abs=0.01)
    fold_likes()
    assert like_events_backlog().count == 0


@pytest.mark.django_db
def test_counters_due_and_since_when(settings):
    settings.COUNTER_AGGREGATION_DELAY = 1.0
    with clock_override(ManualClock(T0)):
        comment = comment_create(author_id="1", body="hello").comment_id
        like_add(comment_id=comment, user_id="2")  # folded in the request: raises the due flag
    assert aggregation.counters_due_backlog(now=T0).count == 0  # due one second later
    due = aggregation.counters_due_backlog(now=T0 + 30)
    assert (due.count, due.oldest_at) == (1, T0 + 1)
    aggregation.counters_aggregate_pending(due_only=False, sleep=lambda s: None)
    assert aggregation.counters_due_backlog(now=T0 + 30).count == 0


def test_feed_retries_due(make_user):
    ann = make_user("ann")
    with clock_override(ManualClock(T0)):
        event = feed_events.FeedEvent("stuck-1", "message", None, None, title="Hi")
        feed_services.feed_retry_item(user_id=str(ann.pk), event=event).save()
        feed_services.feed_retry_item(
            user_id=str(ann.pk), event=feed_events.FeedEvent("later", "message", None, None), delay_ms=60_000
        ).save()
    due = feed_selectors.feed_retries_backlog(now_ms=int((T0 + 10) * 1000))
    assert (due.count, due.oldest_at) == (1, T0)


def test_unfinished_delivery_chunks_and_the_oldest_delivery(make_user, settings):
    settings.DELIVERY_CHUNK_SIZE = 2
    staff = make_user("boss", is_staff=True)
    for n in range(5):
        make_user(f"reader{n}")
    assert delivery_selectors.deliveries_backlog().count == 0
    with clock_override(ManualClock(T0)):
        delivery = delivery_services.delivery_create(
            title="Hi", body="Hello", url="", audience=delivery_services.Audience(kind="all"), created_by=staff
        )
    preparation.delivery_prepare(delivery_id=delivery.delivery_id)
    backlog = delivery_selectors.deliveries_backlog()
    assert (backlog.count, backlog.oldest_at) == (3, T0)  # 6 active users in chunks of 2


@pytest.mark.django_db(transaction=True)
def test_days_not_rolled_up(settings):
    settings.TIME_ZONE = "UTC"
    settings.ACTIVITY_ROLLUP_GRACE_SECONDS = 900
    day = date(2030, 3, 1)
    now = day_bounds(day)[1] + 1000  # the 1st ended 1000 s ago: past the grace
    late = rollup.activity_days_backlog(now=now)
    assert (late.label, late.count, late.oldest_at) == (
        "days not rolled up",
        2,  # the 28th and the 1st; today (the 2nd) is not late
        rollup.day_final_at(day - timedelta(days=1)),
    )
    rollup.activity_rollup_day(day=day - timedelta(days=1), now=now)
    assert rollup.activity_days_backlog(now=now).count == 1


def test_the_aggregator_loop_reports_its_heartbeat_and_backlog_and_clears_it_on_stop(settings):
    from social.management.commands.aggregate_counters import Command

    settings.WORKER_HEARTBEAT_SECONDS = 0.1
    stop = threading.Event()
    worker = threading.Thread(target=Command().run_loop, kwargs={"stop": stop, "poll_seconds": 0.05})
    worker.start()
    try:
        [item] = wait_for(lambda: list(WorkerHeartbeat.query("aggregate_counters")), what="a heartbeat")
        assert item.backlog_label == "counters due" and item.backlog == 0
        assert [status.state for status in worker_statuses() if status.worker == "aggregate_counters"] == [OK]
    finally:
        stop.set()
        worker.join()
    assert list(WorkerHeartbeat.query("aggregate_counters")) == []


@pytest.mark.django_db(transaction=True)  # the dispatcher's thread reads the users
def test_a_looping_dispatcher_reports_its_heartbeat_while_it_works(make_user, settings):
    from delivery.management.commands.dispatch_deliveries import Command

    settings.WORKER_HEARTBEAT_SECONDS = 0.1
    staff = make_user("boss", is_staff=True)
    stop = threading.Event()
    options = {"delivery": None, "workers": 1, "batch_size": 10, "lease_seconds": 30, "no_progress": True}
    command = Command()
    worker = threading.Thread(target=command.run_loop, kwargs={**options, "stop": stop, "poll_seconds": 0.05})
    worker.start()
    try:
        [item] = wait_for(lambda: list(WorkerHeartbeat.query("dispatch_deliveries")), what="a heartbeat")
        assert item.backlog_label == "unfinished delivery chunks"
        delivery_services.delivery_create(
            title="Hi", body="Hello", url="", audience=delivery_services.Audience(kind="all"), created_by=staff
        )
        # The dispatcher prepares and sends it; its heartbeats go back to an empty backlog.
        wait_for(lambda: delivery_selectors.deliveries_active() == [], what="the delivery sent")
        wait_for(
            lambda: (
                [item.backlog for item in WorkerHeartbeat.query("dispatch_deliveries")] == [0]
                and WorkerHeartbeat.query("dispatch_deliveries").__next__().cycle_at is not None
            ),
            what="a heartbeat with an empty backlog",
        )
    finally:
        stop.set()
        worker.join()
    assert list(WorkerHeartbeat.query("dispatch_deliveries")) == []
