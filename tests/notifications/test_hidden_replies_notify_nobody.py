"""A hidden comment's replies stop notifying: a reply (or mention) whose fan-out is still pending
when it, its parent or its thread's root is hidden tells nobody; a hide leaves nothing pending."""

from unittest import mock

import pytest

from actions import comments
from actions.comments import comment_create
from notifications.feed import services as feed_services
from notifications.feed.events import FEED_RETRY_SHARDS
from notifications.feed.selectors import feed_entries_list
from notifications.models import FeedRetry
from notifications.preferences.services import thread_watch
from social.services import comment_delete, comment_set_hidden

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]


def uid(user) -> str:
    return str(user.pk)


def retries() -> list[FeedRetry]:
    return [item for shard in range(FEED_RETRY_SHARDS) for item in FeedRetry.query(str(shard), consistent_read=True)]


def drain() -> None:
    for _ in range(10):
        pending = retries()
        if not pending:
            return
        feed_services.feed_retries_process(now_ms=max(int(item.due_at) for item in pending) + 1)
    raise AssertionError(f"retries left: {retries()}")


def texts(user) -> list[str]:
    return [entry.text for entry in feed_entries_list(user_id=uid(user)).results]


@pytest.fixture
def people(make_user):
    return {name: make_user(name, display_name=name.capitalize()) for name in ("ann", "bob", "cid", "dee")}


def replies_left_pending(author, body, parent):
    """A reply whose fan-out the request did not get to (it died after the commit)."""
    with mock.patch.object(comments, "outbox_send", lambda job: None):
        return comment_create(author_id=uid(author), body=body, parent_id=parent.comment_id)


@pytest.mark.parametrize("hidden", ["the reply", "its parent", "the thread"])
def test_a_pending_reply_under_a_hidden_comment_notifies_nobody(people, hidden):
    ann, bob, cid, dee = (people[n] for n in ("ann", "bob", "cid", "dee"))
    root = comment_create(author_id=uid(ann), body="A thread")
    middle = comment_create(author_id=uid(bob), body="a reply", parent_id=root.comment_id)
    thread_watch(user_id=uid(dee), thread_id=root.comment_id)
    drain()
    before = {person.username: texts(person) for person in (ann, bob, dee)}
    reply = replies_left_pending(cid, "@ann look at this", middle)
    assert retries()  # its fan-out is pending
    target = {"the reply": reply, "its parent": middle, "the thread": root}[hidden]
    comment_set_hidden(comment_id=target.comment_id, hidden=True)
    drain()
    assert retries() == []  # nothing left pending
    assert {person.username: texts(person) for person in (ann, bob, dee)} == before


def test_a_deleted_reply_notifies_nobody_and_a_visible_one_still_does(people):
    ann, bob = people["ann"], people["bob"]
    root = comment_create(author_id=uid(ann), body="A thread")
    gone = replies_left_pending(bob, "oops", root)
    comment_delete(comment_id=gone.comment_id, author_id=uid(bob))
    drain()
    assert texts(ann) == []
    replies_left_pending(bob, "hello", root)
    drain()
    assert texts(ann) == ["Bob replied to your comment"]
