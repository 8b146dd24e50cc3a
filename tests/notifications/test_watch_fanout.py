"""A reply's fan-out to the thread's watchers: roll-up, mutes, preferences, crashes, e-mail scheduling."""

import threading
from unittest import mock

import pytest
from botocore.exceptions import ClientError

from actions import comments
from actions.comments import comment_create
from notifications import fanout as fanout_module
from notifications.fanout import FanOut
from notifications.feed import services as feed_services
from notifications.feed.events import FEED_RETRY_SHARDS, FeedEvent
from notifications.feed.selectors import feed_entries_list, feed_read
from notifications.mail.queue import MAIL_QUEUE_SHARDS
from notifications.models import FeedRetry, MailQueue
from notifications.preferences.selectors import thread_state
from notifications.preferences.services import preferences_update, thread_mute, thread_watch
from project.dynamo import wire
from social.selectors import comment_find

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]


def uid(user) -> str:
    return str(user.pk)


def post(user, body="Hello", parent=None):
    return comment_create(author_id=uid(user), body=body, parent_id=parent.comment_id if parent else None)


def texts(user) -> list[str]:
    return [entry.text for entry in feed_entries_list(user_id=uid(user)).results]


def retries() -> list[FeedRetry]:
    return [item for shard in range(FEED_RETRY_SHARDS) for item in FeedRetry.query(str(shard), consistent_read=True)]


def mails() -> list[MailQueue]:
    return [item for shard in range(MAIL_QUEUE_SHARDS) for item in MailQueue.query(str(shard), consistent_read=True)]


def drain() -> None:
    """What `process_feed_retries` does, for everything due by the end of the outbox delay."""
    for _ in range(10):
        if not retries():
            return
        feed_services.feed_retries_process(now_ms=max(int(item.due_at) for item in retries()) + 1)
    raise AssertionError(f"retries left: {retries()}")


@pytest.fixture
def people(make_user):
    names = ("ann", "bob", "cid", "dee", "eve", "fay", "gus", "hal")
    return {name: make_user(name, display_name=name.capitalize()) for name in names}


def test_watchers_hear_of_every_reply_rolled_up_per_thread(people):
    ann, bob, cid, dee, eve, fay, gus = (people[n] for n in ("ann", "bob", "cid", "dee", "eve", "fay", "gus"))
    root = post(ann, "A thread")
    first = post(bob, "first", parent=root)  # Bob now watches the thread
    assert thread_state(thread_id=root.comment_id, user_id=uid(bob)) == "watch"
    thread_watch(user_id=uid(dee), thread_id=root.comment_id)
    post(cid, "deeper", parent=first)  # a reply to Bob's reply: Bob as its parent's author
    post(eve, "second", parent=root)
    post(fay, "third", parent=root)
    post(gus, "fourth", parent=root)
    assert texts(bob) == ["Gus and 2 others replied in a thread you watch", "Cid replied to your comment"]
    assert texts(dee) == ["Gus and 3 others replied in a thread you watch"]
    assert texts(cid) == ["Gus and 2 others replied in a thread you watch"]  # Cid watches since his reply
    # Ann wrote the thread but did not reply: her direct replies only.
    assert texts(ann) == ["Gus and 3 others replied to your comment"]
    [entry] = feed_entries_list(user_id=uid(dee)).results
    assert (entry.kind, entry.grouped_by, entry.body) == ("reply", "thread", "fourth")
    assert entry.url.startswith(f"/c/{root.comment_id}/#c-")
    assert retries() == []


def test_a_muted_thread_and_replies_turned_off_notify_nobody_and_replying_keeps_the_mute(people):
    ann, bob, cid, dee = (people[n] for n in ("ann", "bob", "cid", "dee"))
    root = post(ann, "A thread")
    post(bob, "watching now", parent=root)
    preferences_update(user_id=uid(bob), patch={"kinds": {"reply": {"inbox": False}}})
    thread_mute(user_id=uid(cid), thread_id=root.comment_id)
    post(cid, "I muted it, then replied", parent=root)
    assert thread_state(thread_id=root.comment_id, user_id=uid(cid)) == "mute"
    post(dee, "anyone?", parent=root)
    assert texts(cid) == [] and texts(bob) == []
    thread_mute(user_id=uid(ann), thread_id=root.comment_id)
    post(dee, "again", parent=root)
    assert texts(ann) == ["Dee and 2 others replied to your comment"]  # nothing since her mute
    assert feed_entries_list(user_id=uid(ann)).results[0].event_count == 3


class Died(BaseException):
    """The process dies (not an error the request could catch)."""


def test_a_crash_after_the_reply_commits_loses_nobody_and_notifies_each_once(people):
    ann, bob, cid, dee, eve = (people[n] for n in ("ann", "bob", "cid", "dee", "eve"))
    root = post(ann, "A thread")
    for watcher in (bob, cid, dee):
        post(watcher, "me too", parent=root)

    def events(user) -> int:
        return sum(int(entry.event_count) for entry in feed_read(user_id=uid(user)).entries)

    before = {name: events(people[name]) for name in ("ann", "bob", "cid", "dee")}

    real_append = feed_services.feed_append
    calls = []
    taking = threading.Lock()  # the batch's feed writes run side by side (the writes pool)

    def dies_after_two(**kwargs):
        with taking:
            if len(calls) == 2:
                raise Died()
            calls.append(kwargs["user_id"])
        return real_append(**kwargs)

    with mock.patch.object(fanout_module, "feed_append", dies_after_two), pytest.raises(Died):
        post(eve, "late", parent=root)
    assert len(calls) == 2
    [outbox] = retries()
    reply_id = FanOut.from_json(outbox.event).comment_id
    assert outbox.retry_id == f"fanout#{reply_id}"
    assert comment_find(comment_id=reply_id).body == "late"  # the reply stands

    drain()
    drain()  # nothing left: nothing changes
    for name in ("ann", "bob", "cid", "dee"):
        assert events(people[name]) == before[name] + 1, name  # Eve's reply, applied once
        entries = feed_read(user_id=uid(people[name])).entries
        assert sum(1 for entry in entries if str(eve.pk) in entry.actor_ids) == 1, name
    assert texts(eve) == []


def test_a_request_that_dies_before_the_fan_out_leaves_it_to_the_drainer(people):
    ann, bob, cid = people["ann"], people["bob"], people["cid"]
    root = post(ann, "A thread")
    post(bob, "watching", parent=root)
    with mock.patch.object(comments, "outbox_send", lambda job: None):
        post(cid, "answer", parent=root)
    assert texts(bob) == [] and len(retries()) == 1
    drain()
    assert texts(bob) == ["Cid replied in a thread you watch"]
    assert texts(ann) == ["Cid and Bob replied to your comment"]
    assert thread_state(thread_id=root.comment_id, user_id=uid(cid)) == "watch"  # the drainer watched it


def test_many_watchers_the_request_does_some_and_the_drainer_the_rest(people, monkeypatch):
    ann, eve = people["ann"], people["eve"]
    root = post(ann, "A thread")
    watchers = [people[n] for n in ("bob", "cid", "dee", "fay", "gus", "hal")]
    for watcher in watchers:
        thread_watch(user_id=uid(watcher), thread_id=root.comment_id)
    monkeypatch.setattr(fanout_module, "FANOUT_INLINE_MAX", 2)
    monkeypatch.setattr(fanout_module, "FANOUT_DRAIN_MAX", 3)
    post(eve, "to all", parent=root)
    assert sum(1 for watcher in watchers if texts(watcher)) + bool(texts(ann)) == 2
    [left] = retries()
    assert FanOut.from_json(left.event).done_through  # progress kept
    drain()
    assert [texts(watcher) for watcher in watchers] == [["Eve replied in a thread you watch"]] * 6
    assert texts(ann) == ["Eve replied to your comment"]


def _feed_reads_throttled(user_id):
    real = wire.make_api_call

    def call(self, operation_name, api_params):
        key = api_params.get("Key", {}).get("user_id", {}).get("S")
        if operation_name == "GetItem" and api_params.get("TableName", "").endswith("_feed") and key == user_id:
            raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "injected"}}, operation_name)
        return real(self, operation_name, api_params)

    return call


def test_email_wanted_is_scheduled_with_the_entry_also_through_feed_retry(people):
    ann, bob, cid = people["ann"], people["bob"], people["cid"]
    preferences_update(user_id=uid(ann), patch={"kinds": {"reply": {"email": True}}})
    preferences_update(user_id=uid(bob), patch={"kinds": {"reply": {"email": True}}})
    root = post(ann, "A thread")
    post(bob, "watching", parent=root)
    [mail] = mails()
    [entry] = feed_read(user_id=uid(ann)).entries
    assert (mail.user_id, mail.kind, mail.entry_id) == (uid(ann), "reply", entry.entry_id)
    assert mail.source.startswith("reply:")

    # Bob's feed is throttled: his event waits in feed_retry, its e-mail flag with it.
    with mock.patch.object(wire, "make_api_call", _feed_reads_throttled(uid(bob))):
        reply = post(cid, "answer", parent=root)
    [queued] = retries()
    event = FeedEvent.from_json(queued.event)
    assert (queued.user_id, event.event_id, event.notify_email) == (uid(bob), f"thread:{reply.comment_id}", True)
    assert {m.user_id for m in mails()} == {uid(ann)}  # Ann's entry merged: its mail is scheduled again
    drain()
    [bob_entry] = feed_read(user_id=uid(bob)).entries
    bob_mail = next(m for m in mails() if m.user_id == uid(bob))
    assert (bob_mail.kind, bob_mail.source, bob_mail.entry_id) == ("reply", event.event_id, bob_entry.entry_id)
    assert [m for m in mails() if m.user_id == uid(cid)] == []  # e-mail is off by default
