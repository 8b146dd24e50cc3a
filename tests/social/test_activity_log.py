"""The activity log: which table and day an action lands in, a missing month's table,
crashes between an action and its log line, and idempotent transactions."""

from datetime import datetime
from unittest import mock
from zoneinfo import ZoneInfo

import pytest

from actions.comments import comment_create
from actions.likes import like_add, like_remove
from project.clock import ManualClock, clock_override
from project.dynamo import wire
from project.models import LimitCounter
from social.activity import services as activity
from social.activity.models import activity_model
from social.activity.month_tables import (
    activity_table_drop,
    activity_table_exists,
    activity_table_months,
    activity_tables_forget,
)
from social.activity.periods import day_shard, month_of
from social.counters import VIEWS, counter_key, counter_value

pytestmark = pytest.mark.django_db(transaction=True)

TOKYO = ZoneInfo("Asia/Tokyo")
# A fixed instant in the middle of a November day in Tokyo: tests never depend on today.
NOON = datetime(2026, 11, 18, 12, 0, tzinfo=TOKYO).timestamp()


class Crash(BaseException):
    """The process dying at this point (not an Exception: nothing may catch it)."""


@pytest.fixture(autouse=True)
def activity_clean(settings):
    settings.TIME_ZONE = "Asia/Tokyo"
    for month in activity_table_months():
        activity_table_drop(month=month)
    activity_tables_forget()
    # Each action one millisecond after the last, from NOON on.
    with clock_override(ManualClock(NOON, step=0.001)):
        yield
    activity_tables_forget()


def log_of(user_id: str, month: str = "202611") -> list:
    if not activity_table_exists(month=month):
        return []
    return list(activity_model(month).query(user_id, consistent_read=True))


@pytest.fixture
def comment(make_user):
    author = make_user("author")
    return comment_create(author_id=str(author.pk), body="Hello")


def test_actions_in_transactions_are_logged_once(comment, fold_likes, settings):
    settings.LIKE_FOLD_AFTER_RESPONSE = False  # the folder writes the likes' lines, below
    like_add(comment_id=comment.comment_id, user_id="7")
    like_add(comment_id=comment.comment_id, user_id="7")  # a no-op: not logged again
    like_remove(comment_id=comment.comment_id, user_id="7")
    like_remove(comment_id=comment.comment_id, user_id="7")
    reply = comment_create(author_id="7", body="Hi", parent_id=comment.comment_id)
    assert [item.action for item in log_of("7")] == ["reply"]  # likes are logged by their fold
    fold_likes()
    fold_likes()  # folding again (a fold that died after writing the lines) writes no second line
    assert [(item.action, item.object_id) for item in log_of("7")] == [
        ("like", comment.comment_id),
        ("unlike", comment.comment_id),
        ("reply", reply.comment_id),
    ]
    assert [item.action for item in log_of(comment.author_id)] == ["signup", "comment"]
    assert all(item.day_key == f"20261118#{day_shard('7')}" for item in log_of("7"))


def test_last_millisecond_of_the_month_lands_in_that_month_and_day(settings):
    last = datetime(2026, 11, 30, 23, 59, 59, 999000, tzinfo=TOKYO).timestamp()
    assert activity.activity_record(user_id="5", action="login", at=last)
    assert activity.activity_record(user_id="5", action="login", at=last + 0.001)
    (november,) = log_of("5", "202611")
    assert november.day_key == f"20261130#{day_shard('5')}"
    assert november.at_key.startswith(f"{round(last * 1000):013d}#")
    (december,) = log_of("5", "202612")
    assert december.day_key == f"20261201#{day_shard('5')}"
    # In UTC both instants are on November 30th: the site's time zone decides.
    assert month_of(last) == "202611" and month_of(last + 0.001) == "202612"


def test_next_months_table_missing_at_write_time_is_created_and_nothing_lost(comment, fold_likes):
    first_of_december = datetime(2026, 12, 1, 0, 0, 0, 1000, tzinfo=TOKYO).timestamp()
    assert not activity_table_exists(month="202612")
    with clock_override(ManualClock(first_of_december)):
        assert like_add(comment_id=comment.comment_id, user_id="9").liked
    fold_likes()  # the line has the like's time, whenever it is folded
    assert [item.action for item in log_of("9", "202612")] == ["like"]


def test_logging_never_fails_the_action(comment, caplog, fold_likes, settings):
    settings.LIKE_FOLD_AFTER_RESPONSE = False  # the folder meets the failing log, below
    with mock.patch.object(activity, "activity_model_ready", side_effect=RuntimeError("DynamoDB says no")):
        assert like_add(comment_id=comment.comment_id, user_id="7").like_count == 1
        assert fold_likes() == 1  # the like still reaches its author
        assert not activity.activity_record(user_id="7", action="view", object_id=comment.comment_id)
    assert log_of("7") == []
    assert "activity like of user 7 not logged" in caplog.text


def test_crash_inside_a_transaction_loses_both_the_action_and_its_line(comment, fold_likes):
    real = wire.make_api_call

    def dying(self, operation, params):
        if operation == "TransactWriteItems":
            raise Crash
        return real(self, operation, params)

    with mock.patch.object(wire, "make_api_call", dying), pytest.raises(Crash):
        like_add(comment_id=comment.comment_id, user_id="7")
    assert like_add(comment_id=comment.comment_id, user_id="7").like_count == 1  # not liked before
    fold_likes()
    assert [item.action for item in log_of("7")] == ["like"]


def test_crash_between_a_non_transactional_action_and_its_line_loses_the_line(client, make_user, comment):
    """At most once: a view counted, then the process dies before its log line."""
    viewer = make_user("viewer")
    client.force_login(viewer)
    real = wire.make_api_call

    def dying(self, operation, params):
        if operation == "PutItem" and params["TableName"].endswith("activity_202611"):
            raise Crash
        return real(self, operation, params)

    with mock.patch.object(wire, "make_api_call", dying), pytest.raises(Crash):
        client.get(f"/c/{comment.comment_id}/")
    assert counter_value(key=counter_key(kind=VIEWS, object_id=comment.comment_id)) == 1
    assert [item.action for item in log_of(str(viewer.pk))] == ["signup", "login"]  # the view's line is lost
    client.get(f"/c/{comment.comment_id}/")  # the same hour: neither counted nor logged again
    assert [item.action for item in log_of(str(viewer.pk))] == ["signup", "login"]
    for mark in LimitCounter.scan():  # the next hour: the view marks are gone
        mark.delete()
    client.get(f"/c/{comment.comment_id}/")
    assert [item.action for item in log_of(str(viewer.pk))] == ["signup", "login", "view"]


def test_login_and_read_are_logged(client, make_user, comment, fold_likes):
    liker = make_user("liker")
    like_add(comment_id=comment.comment_id, user_id=str(liker.pk))
    fold_likes()
    from notifications import services as notification_services

    notification_services.like_notifications_mark_read(user_id=comment.author_id, comment_ids=[comment.comment_id])
    assert [(item.action, item.object_id) for item in log_of(comment.author_id)] == [
        ("signup", None),
        ("comment", comment.comment_id),
        ("read", comment.comment_id),
    ]
    assert client.login(username="liker", password="pw-Secret-123")
    # The like's line is written by its fold, under the like event's time: its place among
    # lines of the same milliseconds is not what this test is about, its presence is.
    assert sorted(item.action for item in log_of(str(liker.pk))) == ["like", "login", "signup"]


def test_two_actions_in_one_millisecond_are_two_lines():
    for _ in range(2):
        activity.activity_record(user_id="3", action="view", object_id="x", at=NOON)
    lines = log_of("3")
    assert len(lines) == 2 and lines[0].at_key != lines[1].at_key


def test_rollup_equals_the_actions_made_through_the_product(client, make_user, fold_likes):
    """Real actions (services, pages, a delivery), counted here independently, then rolled up."""
    import random
    from collections import Counter

    from notifications import services as notification_services
    from social.activity.models import ActivityDaily
    from social.activity.rollup import activity_rollup_day
    from tests.delivery import helpers as delivery_helpers

    made: Counter = Counter()
    by: dict[str, set] = {}

    def did(action, user):
        made[action] += 1
        by.setdefault(action, set()).add(str(user.pk))

    people = [make_user(f"p{n}") for n in range(6)]
    for person in people:
        did("signup", person)
    posts = []
    for person in people[:3]:
        posts.append(comment_create(author_id=str(person.pk), body="post"))
        did("comment", person)
    liked: set[tuple[str, int]] = set()  # what the test itself knows is liked
    generator = random.Random(5)
    for _ in range(40):
        person, post = generator.choice(people), generator.choice(posts)
        choice = generator.choice(["like", "like", "unlike", "reply", "view"])
        pair = (post.comment_id, person.pk)
        if choice == "like":
            like_add(comment_id=post.comment_id, user_id=str(person.pk))
            if pair not in liked:  # liking again changes nothing and is not an action
                liked.add(pair)
                did("like", person)
        elif choice == "unlike":
            like_remove(comment_id=post.comment_id, user_id=str(person.pk))
            if pair in liked:
                liked.discard(pair)
                did("unlike", person)
        elif choice == "reply":
            comment_create(author_id=str(person.pk), body="re", parent_id=post.comment_id)
            did("reply", person)
        else:
            client.force_login(person)
            did("login", person)
            client.get(f"/c/{post.comment_id}/")
            did("view", person)
    fold_likes()
    for author in people[:3]:
        if notification_services.like_notifications_mark_all_read(user_id=str(author.pk)):
            did("read", author)
    staff = make_user("staff", is_staff=True)
    did("signup", staff)
    delivery = delivery_helpers.create(staff, kind="usernames", users=people[:4])
    delivery_helpers.dispatch(delivery.delivery_id)
    for person in people[:4]:
        did("delivery_received", person)

    activity_rollup_day(day=datetime.fromtimestamp(NOON, TOKYO).date(), now=NOON + 3 * 86400)
    rolled = {row.action: (row.count, row.users) for row in ActivityDaily.objects.all()}
    assert rolled == {action: (made[action], len(by[action])) for action in made}
    assert made["like"] and made["view"] and made["read"] and made["reply"]


def test_retried_transactions_log_once(comment, fold_likes):
    """A conflict retried by `transact`, and a committed request sent again (as botocore does
    when a response is lost), each leave exactly one line."""
    from botocore.exceptions import ClientError

    real = wire.make_api_call
    state = {"conflicts": 1, "resent": 0}

    def flaky(self, operation, params):
        if operation != "TransactWriteItems":
            return real(self, operation, params)
        if state["conflicts"]:
            state["conflicts"] -= 1
            reasons = [{"Code": "TransactionConflict"}] + [{"Code": "None"}] * (len(params["TransactItems"]) - 1)
            error = {"Code": "TransactionCanceledException", "Message": "cancelled"}
            raise ClientError({"Error": error, "CancellationReasons": reasons}, operation)
        answer = real(self, operation, params)
        # The same request again after it committed. botocore gave it a ClientRequestToken
        # (an idempotency token, as on every TransactWriteItems), so DynamoDB answers
        # success and applies nothing; without one, the like row's condition would cancel it.
        assert "ClientRequestToken" in params
        real(self, operation, params)
        state["resent"] += 1
        return answer

    with mock.patch.object(wire, "make_api_call", flaky):
        assert like_add(comment_id=comment.comment_id, user_id="7").like_count == 1
    assert state == {"conflicts": 0, "resent": 1}
    fold_likes()
    assert [item.action for item in log_of("7")] == ["like"]


def test_a_line_takes_the_millisecond_it_falls_in_as_the_like_events_keys_do():
    at = datetime(2026, 11, 20, 10, 0, 0, 999600, tzinfo=TOKYO).timestamp()
    assert activity.activity_record(user_id="6", action="login", at=at)
    (line,) = log_of("6", "202611")
    assert line.at_key.startswith(f"{int(at * 1_000_000_000) // 1_000_000:013d}#")  # not rounded up
