"""Replies notify the parent's author through the feed; GET /api/feed/; process_feed_retries."""

import time
from unittest import mock

import pytest
from botocore.exceptions import ClientError
from django.core.management import call_command

from actions import comments
from actions.comments import comment_create
from notifications.fanout import FanOut
from notifications.feed import events as feed_events
from notifications.feed import services as feed_services
from notifications.models import Feed, FeedRetry, UnreadCount
from notifications.outbox import outbox_send
from project.clock import ManualClock, clock_override
from project.dynamo import wire

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]


def retries():
    return [
        item
        for shard in range(feed_events.FEED_RETRY_SHARDS)
        for item in FeedRetry.query(str(shard), consistent_read=True)
    ]


def feed_of(user):
    try:
        return Feed.get(str(user.pk), consistent_read=True)
    except Feed.DoesNotExist:
        return None


@pytest.fixture
def people(make_user):
    return (
        make_user("ann", display_name="Ann"),
        make_user("bob", display_name="Bob"),
        make_user("cid", display_name="Cid"),
    )


def post(user, body="Hello", parent=None):
    return comment_create(author_id=str(user.pk), body=body, parent_id=parent.comment_id if parent else None)


def test_replies_roll_up_and_own_replies_notify_nobody(people, api):
    ann, bob, cid = people
    comment = post(ann)
    post(ann, "my own reply", parent=comment)
    assert feed_of(ann) is None
    post(bob, "first", parent=comment)
    post(cid, "second", parent=comment)
    post(bob, "third", parent=comment)
    assert retries() == []  # every outbox item was applied and deleted
    answer = api.as_user(ann).get("/api/feed/")
    assert answer.status_code == 200
    body = answer.json()
    assert body["unread_count"] == 1
    [entry] = body["results"]
    assert entry["kind"] == "reply"
    assert entry["text"] == "Bob and Cid replied to your comment"
    assert entry["actor_count"] == 2
    assert [actor["display_name"] for actor in entry["actors"]] == ["Bob", "Cid"]
    assert entry["body"] == "third"
    assert entry["url"].startswith(f"/c/{comment.comment_id}/")
    assert entry["unread"] is True
    assert UnreadCount.get(str(ann.pk), "feed", consistent_read=True).count == 1
    # Bob's reply made him watch the thread: Cid's reply reached him as a watcher (his own did not).
    [watched] = api.as_user(bob).get("/api/feed/").json()["results"]
    assert (watched["text"], watched["grouped_by"]) == ("Cid replied in a thread you watch", "thread")


def test_three_people_read_as_first_and_others(people, make_user, api):
    ann, bob, cid = people
    dee = make_user("dee", display_name="Dee")
    comment = post(ann)
    for replier in (bob, cid, dee):
        post(replier, "hi", parent=comment)
    [entry] = api.as_user(ann).get("/api/feed/").json()["results"]
    assert entry["text"] == "Dee and 2 others replied to your comment"


def test_reply_after_read_is_a_new_entry(people):
    ann, bob, cid = people
    comment = post(ann)
    post(bob, "one", parent=comment)
    assert feed_services.feed_mark_read(user_id=str(ann.pk)) == 1
    post(cid, "two", parent=comment)
    entries = feed_of(ann).entries
    assert [(entry.read, entry.actor_ids) for entry in entries] == [(False, [str(cid.pk)]), (True, [str(bob.pk)])]


def _throttled(self, operation_name, api_params, real=wire.make_api_call):
    """Reads of the feed table are throttled; everything else goes through."""
    if operation_name == "GetItem" and api_params.get("TableName", "").endswith("_feed"):
        raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "injected"}}, operation_name)
    return real(self, operation_name, api_params)


def test_feed_failure_does_not_fail_the_reply_and_the_command_applies_it_later(people):
    ann, bob, _ = people
    comment = post(ann)
    with mock.patch.object(wire, "make_api_call", _throttled):
        reply = post(bob, "answer", parent=comment)
    assert reply.parent_id == comment.comment_id
    assert feed_of(ann) is None
    [queued] = retries()
    assert queued.user_id == str(ann.pk)
    assert "Throttling" in queued.last_error
    # Due a second later; the command leaves what is not due yet.
    call_command("process_feed_retries")
    assert len(retries()) == 1
    with clock_override(ManualClock(time.time() + 2)):  # two seconds later: it is due
        call_command("process_feed_retries")
    assert retries() == []
    [entry] = feed_of(ann).entries
    assert entry.actor_ids == [str(bob.pk)]
    call_command("process_feed_retries")  # nothing left: nothing changes
    assert feed_of(ann).version == 1


def test_outbox_applies_a_reply_whose_request_died_before_sending(people):
    ann, bob, _ = people
    comment = post(ann)
    with mock.patch.object(comments, "outbox_send", lambda job: None):
        post(bob, "answer", parent=comment)
    [outbox] = retries()
    assert feed_of(ann) is None
    stats = feed_services.feed_retries_process(now_ms=int(outbox.due_at) + 1)
    assert stats.applied == 1
    assert retries() == []
    assert len(feed_of(ann).entries) == 1


def test_a_retry_applied_twice_is_applied_once(people):
    """The drainer and the original request both apply the same event: one entry, one write."""
    ann, bob, _ = people
    comment = post(ann)
    with mock.patch.object(comments, "outbox_send", lambda job: None):
        post(bob, "answer", parent=comment)
    [outbox] = retries()
    fanout = FanOut.from_json(outbox.event)
    outbox_send(fanout)  # the request, late
    stale = outbox  # the drainer read it before the request applied it
    assert feed_services.feed_retry_process(retry=stale) == "skipped"  # gone: its claim fails
    event = fanout.event("reply")
    assert feed_services.feed_append(user_id=str(ann.pk), event=event).status == feed_services.ALREADY_APPLIED
    assert feed_of(ann).version == 1


def test_feed_api_needs_a_user_and_rejects_bad_input(people, api):
    assert api.get("/api/feed/").status_code in (401, 403)
    client = api.as_user(people[0])
    assert client.get("/api/feed/").json() == {"unread_count": 0, "results": []}
    answer = client.get("/api/feed/?unread=maybe")
    assert answer.status_code == 400
    assert "unread" in answer.json()
    assert client.get("/api/feed/?bogus=1").status_code == 400


def test_feed_api_unread_filter(people, api):
    ann, bob, _ = people
    first = post(ann, "one")
    second = post(ann, "two")
    post(bob, "a", parent=first)
    post(bob, "b", parent=second)
    newest = feed_of(ann).entries[0].entry_id
    feed_services.feed_mark_read(user_id=str(ann.pk), entry_ids=[newest])
    body = api.as_user(ann).get("/api/feed/?unread=true").json()
    assert body["unread_count"] == 1
    assert [entry["id"] for entry in body["results"]] != [newest]
    assert len(body["results"]) == 1


def test_process_feed_retries_exits_1_when_an_event_fails_again(make_user):
    from django.core.management.base import CommandError

    from project.errors import Throttled

    ann = make_user("ann")
    event = feed_events.FeedEvent("stuck-1", "message", None, None, title="Hi")
    feed_services.feed_retry_item(user_id=str(ann.pk), event=event).save()
    with (
        mock.patch.object(feed_services, "feed_append", side_effect=Throttled("busy")),
        pytest.raises(CommandError, match="failed again") as failure,
    ):
        call_command("process_feed_retries")
    assert failure.value.returncode == 1
    [left] = retries()  # still queued, due later
    assert left.user_id == str(ann.pk)
