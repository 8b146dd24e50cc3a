"""What each route costs: units charged to routes and workers, written to the `usage` table,
summed on the admin System page for the last hour and day."""

from __future__ import annotations

import logging
import threading

import pytest
from botocore.exceptions import EndpointConnectionError

from actions.comments import comment_create
from project.clock import ManualClock, clock_override
from project.models import UsageTally
from project.operations import usage
from project.operations.usage import aws_units, usage_flush
from project.operations.usage_people import PEOPLE_EXACT_MAX, People, person_hash
from project.operations.usage_selectors import route_area, usage_summary
from project.operations.worker_loop import worker_loop
from project.serving.pools import READS, pool
from project.testing.harness import dynamodb_calls, dynamodb_wire
from social.models import Comment

pytestmark = pytest.mark.django_db
# 2030-03-17 17:46:40 UTC: the hour's slot 45, and a day whose first hours the day window reaches back to.
T0 = 1_900_000_000.0


@pytest.fixture(autouse=True)
def fresh_recorder():
    """Each test starts with a process that has counted nothing (the recorder is per process)."""
    usage.recorder._reset()
    yield
    usage.recorder._reset()


@pytest.fixture
def staff(make_user):
    return make_user("staff", is_staff=True)


def window(key: str, *, now: float):
    return next(found for found in usage_summary(now=now) if found.key == key)


def route_row(found, route: str):
    return next((row for row in found.routes if row.route == route), None)


def test_a_request_s_units_are_charged_to_its_route_and_written_for_the_page(client):
    with clock_override(ManualClock(T0)):
        comment = comment_create(author_id="1", body="counted")  # (background): no request
        for _ in range(3):
            assert client.get(f"/api/comments/{comment.comment_id}/").status_code == 200
        assert client.get("/api/comments/no-such-comment/").status_code == 404
        assert usage_flush() == 2  # this process's slot and hour
        hour, day = window("hour", now=T0), window("day", now=T0)
    # 17:46:40: the hour's slots (from 16:50) cover 56 min 40 s, the day's hours 23 h 46 min 40 s.
    assert hour.month_dollars == pytest.approx(hour.total.dollars * 30 * 86400 / (56 * 60 + 40))
    assert day.month_dollars == pytest.approx(day.total.dollars * 30 * 86400 / (23 * 3600 + 46 * 60 + 40))
    for found in (hour, day):
        row = route_row(found, "api-comment")
        assert row is not None and row.requests == 4
        # Each answer read the comment at least (a GetItem: 0.5 unit eventually consistent, at least).
        assert row.read_units >= 4 * 0.5 and row.write_units == 0
        assert row.dollars == pytest.approx(row.read_units * 0.125 / 1e6)
    items = list(UsageTally.query(f"slot#{usage.utc_stamp(T0)[:10]}"))
    assert [item.part.split("#")[0] for item in items] == ["45"]


def test_writes_and_prices_follow_the_settings(client, make_user, settings):
    settings.DYNAMODB_PRICE_PER_MILLION_WRITES = 1.0
    settings.DYNAMODB_PRICE_PER_MILLION_READS = 0.0
    client.force_login(make_user("poster"))
    with clock_override(ManualClock(T0)):
        answer = client.post("/api/comments/", {"body": "a post"}, content_type="application/json")
        assert answer.status_code == 201, answer.content
        usage_flush()
        row = route_row(window("hour", now=T0), "api-comments")
    assert row is not None and row.requests == 1 and row.write_units >= 1
    assert row.dollars == pytest.approx(row.write_units / 1e6)
    assert row.dollars_per_person == pytest.approx(row.dollars)  # one signed-in person


def test_signed_in_people_are_counted_once_across_requests_and_processes(client, make_user):
    alice, bob = make_user("alice"), make_user("bob")
    with clock_override(ManualClock(T0)):
        for person in (alice, bob, alice):
            client.force_login(person)
            assert client.get("/api/me/").status_code == 200
        usage_flush()
        usage.recorder._reset()  # another process: its own items; alice again
        client.force_login(alice)
        client.get("/api/me/")
        client.logout()
        client.get("/popular/")  # anonymous: not a person
        usage_flush()
        hour = window("hour", now=T0)
    assert hour.people == 2 and hour.items == 2
    assert route_row(hour, "api-me").requests == 4


def test_a_worker_s_calls_are_charged_to_the_worker():
    comment = comment_create(author_id="1", body="read by a worker")
    stop = threading.Event()

    def run_pass() -> bool:
        Comment.get(comment.comment_id)
        stop.set()
        return False

    with clock_override(ManualClock(T0)):
        worker_loop(run_pass, stop=stop, interval=0, logger=logging.getLogger(__name__), name="fold_like_events")
        usage_flush()
        row = route_row(window("hour", now=T0), "worker:fold_like_events")
    assert row is not None and row.read_units >= 0.5 and row.requests == 0
    assert route_area("worker:fold_like_events") == "Workers"


def test_a_thread_pool_s_calls_are_charged_to_the_route_that_handed_them_over():
    comment = comment_create(author_id="1", body="read in a pool")
    stop = threading.Event()

    def run_pass() -> bool:
        list(pool(READS).map(lambda _: Comment.get(comment.comment_id), range(4)))
        stop.set()
        return False

    with clock_override(ManualClock(T0)):
        worker_loop(run_pass, stop=stop, interval=0, logger=logging.getLogger(__name__), name="aggregate_counters")
        usage_flush()
        hour = window("hour", now=T0)
    assert route_row(hour, "worker:aggregate_counters").read_units >= 4 * 0.5
    assert route_row(hour, usage.BACKGROUND) is None


def test_a_flush_that_fails_fails_no_request_and_the_next_one_writes_the_lot(client):
    def refused(operation, body):
        if operation == "PutItem" and UsageTally.Meta.table_name.encode() in body:
            raise EndpointConnectionError(endpoint_url="dynamodb")

    with clock_override(ManualClock(T0)):
        comment = comment_create(author_id="1", body="kept")
        with dynamodb_wire(refused):
            assert client.get(f"/api/comments/{comment.comment_id}/").status_code == 200
            assert usage_flush() == 0
        assert client.get(f"/api/comments/{comment.comment_id}/").status_code == 200
        assert usage_flush() == 2
        assert usage_flush() == 0  # nothing changed since: nothing written (its own put does not count)
        assert route_row(window("hour", now=T0), "api-comment").requests == 2


def test_a_flush_that_runs_twice_writes_the_same_totals(client):
    comment = comment_create(author_id="1", body="twice")
    with clock_override(ManualClock(T0)):
        client.get(f"/api/comments/{comment.comment_id}/")
        usage_flush()
        usage.recorder._buckets[("slot", int(T0 // 300) * 300)].dirty = True  # as if the put was retried
        usage_flush()
        assert route_row(window("hour", now=T0), "api-comment").requests == 1


def test_the_hour_and_the_day_windows_reach_back_across_partitions(client):
    comment = comment_create(author_id="1", body="old")
    clock = ManualClock(T0)
    with clock_override(clock):
        client.get(f"/api/comments/{comment.comment_id}/")  # 17:46
        usage_flush()
        clock._now = T0 + 50 * 60  # 18:36: the 17:45 slot is in the last hour, in the previous hour's partition
        client.get(f"/api/comments/{comment.comment_id}/")
        usage_flush()
        assert route_row(window("hour", now=clock.now()), "api-comment").requests == 2
        clock._now = T0 + 60 * 60  # 18:46: 17:45's slot is out
        assert route_row(window("hour", now=clock.now()), "api-comment").requests == 1
        clock._now = T0 + 20 * 3600  # the next day, 13:46: yesterday's 17:00 and 18:00 are in the day
        assert route_row(window("day", now=clock.now()), "api-comment").requests == 2
        clock._now = T0 + 24 * 3600
        assert route_row(window("day", now=clock.now()), "api-comment").requests == 1


def test_staff_see_the_costs_on_the_system_page_and_others_do_not(client, staff, make_user):
    comment = comment_create(author_id="1", body="priced")
    with clock_override(ManualClock(T0)):
        client.get(f"/api/comments/{comment.comment_id}/")
        usage_flush()
        client.force_login(staff)
        text = client.get("/admin/dynamo/system/").content.decode()
        assert "What each route costs" in text and "Last hour" in text and "Last day" in text
        assert "<code>api-comment</code>" in text and "a month at this rate" in text
        client.force_login(make_user("plain"))
        answer = client.get("/admin/dynamo/system/")
    assert answer.status_code == 302 and "/admin/login/" in answer["Location"]


def test_the_page_still_shows_the_workers_when_the_tallies_cannot_be_read(client, staff):
    def refused(operation, body):
        if operation == "Query" and UsageTally.Meta.table_name.encode() in body:
            raise EndpointConnectionError(endpoint_url="dynamodb")

    client.force_login(staff)
    with dynamodb_wire(refused):
        answer = client.get("/admin/dynamo/system/")
    text = answer.content.decode()
    assert answer.status_code == 200 and "could not be read" in text and "Polling workers" in text


def test_off_records_nothing(client, settings):
    settings.USAGE_ENABLED = False
    comment = comment_create(author_id="1", body="unseen")
    with clock_override(ManualClock(T0)):
        client.get(f"/api/comments/{comment.comment_id}/")
        usage_flush()
        assert route_row(window("hour", now=T0), "api-comment") is None


def test_aws_units_bill_what_dynamodb_local_reports_as_free():
    assert aws_units("Query", {}, {}, table="t", reported=0.0) == 0.5
    assert aws_units("Query", {"ConsistentRead": True}, {}, table="t", reported=0.0) == 1.0
    assert aws_units("Query", {}, {}, table="t", reported=3.5) == 3.5
    params = {"RequestItems": {"t": {"Keys": [{}, {}, {}]}}}
    assert aws_units("BatchGetItem", params, {"Responses": {"t": [{}]}}, table="t", reported=0.5) == 1.5
    assert aws_units("PutItem", {}, {}, table="t", reported=2.0) == 2.0
    refused = {"Error": {"Code": "ConditionalCheckFailedException"}}
    assert usage._call_units("UpdateItem", {}, refused) == 1.0


def test_people_are_exact_while_few_and_estimated_closely_past_that():
    few, many = People(), People()
    for number in range(PEOPLE_EXACT_MAX):
        few.add(person_hash(number))
    assert few.count() == PEOPLE_EXACT_MAX and few.registers is None
    for number in range(5000):
        many.add(person_hash(number))
    assert abs(many.count() - 5000) < 5000 * 0.15
    merged = People.decode(few.encode())
    merged.merge(People.decode(many.encode()))
    assert abs(merged.count() - 5000) < 5000 * 0.15  # the few are among the many
    half = People()
    for number in range(100, 200):
        half.add(person_hash(number))
    exact = People.decode(few.encode())
    exact.merge(half)
    assert exact.registers is not None and abs(exact.count() - 200) <= 200 * 0.15  # past the exact range
    assert People.decode(exact.encode()).count() == exact.count()


def test_the_page_reads_a_day_of_many_processes_tallies_with_four_queries():
    """Each window is two Queries (the hour or day it starts in, and the current one), however
    many processes wrote: the page's read stays bounded by the items, never by the requests."""
    clock = ManualClock(T0)
    with clock_override(clock):
        for process in range(3):
            usage.recorder._reset()
            for hours_ago in (0, 5, 23):
                clock._now = T0 - hours_ago * 3600
                usage.recorder.add("api-live", requests=10, read=5.0)
            usage_flush()
        clock._now = T0
        with dynamodb_calls() as made:
            hour, day = usage_summary(now=T0)
    assert [operation for operation, params in made] == ["Query"] * 4
    assert route_row(hour, "api-live").requests == 30 and hour.items == 3
    assert route_row(day, "api-live").requests == 90 and day.items == 9


def test_metrics_count_the_units_by_route_too(client):
    from tests.project.test_metrics import sample

    with clock_override(ManualClock(T0)):
        comment = comment_create(author_id="1", body="scraped")
        before = sample("dynamodb_consumed_capacity_by_route_total", route="api-comment", kind="read")
        client.get(f"/api/comments/{comment.comment_id}/")
        after = sample("dynamodb_consumed_capacity_by_route_total", route="api-comment", kind="read")
        usage_flush()
        row = route_row(window("hour", now=T0), "api-comment")
    assert after - before == pytest.approx(row.read_units) and row.read_units >= 0.5
