"""Spam cannot empty an inbox: unread broadcasts keep their place, and one person's replies
across many comments roll up into one entry beyond FEED_REPLIES_PER_PERSON."""

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from actions.comments import comment_create
from notifications.feed import merge as feed_merge
from notifications.feed import selectors as feed_selectors
from notifications.feed import services as feed_services
from notifications.feed.events import FeedEvent
from tests.delivery.helpers import create, dispatch

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]


def reply(n, *, actor, parent=None):
    return FeedEvent(
        event_id=f"reply-{actor}-{n}",
        kind="reply",
        actor_id=actor,
        rollup_key=f"reply#{parent or f'p{n}'}",
        object_id=f"r-{actor}-{n}",
        created_at=f"2026-01-01T{n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000000Z",
    )


def message(n):
    return FeedEvent(
        event_id=f"message-{n}",
        kind="message",
        actor_id=None,
        rollup_key=None,
        title=f"Message {n}",
        created_at=f"2026-01-01T00:00:{n:02d}.500000Z",
    )


def apply(events, *, user_id="1", feed_item=None):
    """The feed after `events`, computed in memory (the write path's pure part)."""
    current = feed_item or feed_selectors.feed_empty(user_id)
    for event in events:
        write = feed_merge.feed_write_compute(feed=current, event=event)
        if not write.already_applied:
            current = write.feed
    return current


def test_a_broadcast_survives_one_person_replying_to_every_comment(make_user, api, client):
    staff = make_user("boss", is_staff=True)
    ann, bob = make_user("ann", display_name="Ann"), make_user("bob", display_name="Bob")
    delivery = create(staff, kind="usernames", users=[ann])
    dispatch(delivery.delivery_id)
    comments = [comment_create(author_id=str(ann.pk), body=f"Comment {n}") for n in range(101)]
    for comment in comments:
        comment_create(author_id=str(bob.pk), body="spam", parent_id=comment.comment_id)

    body = api.as_user(ann).get("/api/feed/").json()
    entries = body["results"]
    messages = [entry for entry in entries if entry["kind"] == "message"]
    assert [(m["delivery_id"], m["unread"]) for m in messages] == [(delivery.delivery_id, True)]
    replies = [entry for entry in entries if entry["kind"] == "reply"]
    by_comment = [entry for entry in replies if entry["grouped_by"] == "comment"]
    [rolled] = [entry for entry in replies if entry["grouped_by"] == "person"]
    assert len(by_comment) == 5  # FEED_REPLIES_PER_PERSON
    assert rolled["event_count"] == 96
    assert rolled["text"] == "Bob replied 96 more times to your comments"
    assert rolled["rollup_key"] == f"replies#{bob.pk}"
    assert rolled["url"].startswith(f"/c/{comments[-1].comment_id}/")  # the newest reply
    assert len(entries) == 7 and body["unread_count"] == 7
    inbox = api.as_user(ann).get("/api/notifications/").json()
    assert inbox["unread_count"] == 7
    assert "Bob replied 96 more times to your comments" in [item["text"] for item in inbox["results"]]
    client.force_login(ann)
    page = client.get("/notifications/").content.decode()
    assert "Bob replied 96 more times to your comments" in page and "Clinic closed Friday" in page


def test_many_people_replying_evict_replies_never_an_unread_broadcast(settings):
    settings.FEED_MAX_ENTRIES = 10
    events = [message(0)] + [reply(n, actor=str(100 + n)) for n in range(1, 40)]
    entries = apply(events).entries
    assert len(entries) == 10
    assert [entry.title for entry in entries if entry.kind == "message"] == ["Message 0"]
    # The other nine places hold the newest replies.
    assert [entry.actor_ids[0] for entry in entries if entry.kind == "reply"] == [
        str(100 + n) for n in range(39, 30, -1)
    ]


def test_a_read_broadcast_is_evicted_like_any_read_entry(settings):
    settings.FEED_MAX_ENTRIES = 3
    current = apply([message(0)])
    feed_merge.feed_entries_mark_read(current, entry_ids=None, now_ms=0)
    entries = apply([reply(n, actor=str(100 + n)) for n in range(1, 4)], feed_item=current).entries
    assert [entry.kind for entry in entries] == ["reply"] * 3


def test_unread_broadcasts_make_room_only_for_newer_broadcasts(settings):
    settings.FEED_MAX_ENTRIES = 3
    entries = apply([message(n) for n in range(4)]).entries
    assert [entry.title for entry in entries] == ["Message 3", "Message 2", "Message 1"]
    # A reply into a feed full of unread broadcasts is the one that does not fit.
    after = apply([reply(70, actor="9")], feed_item=apply([message(n) for n in range(3)])).entries
    assert [entry.kind for entry in after] == ["message"] * 3


def test_a_persons_reply_to_a_comment_with_an_unread_entry_still_merges_there(settings):
    settings.FEED_REPLIES_PER_PERSON = 2
    events = [reply(n, actor="7") for n in range(1, 4)]  # p1, p2, then p3 into the roll-up
    events.append(reply(4, actor="7", parent="p2"))  # another reply to p2: into p2's entry
    entries = apply(events).entries
    by_rollup = {entry.kind: entry for entry in entries}
    assert sorted((entry.kind, entry.event_count) for entry in entries) == [
        ("replies", 1),
        ("reply", 1),
        ("reply", 2),
    ]
    assert by_rollup["replies"].object_id == "r-7-3"


def test_a_reply_entry_shared_with_others_does_not_count_against_the_person(settings):
    settings.FEED_REPLIES_PER_PERSON = 1
    events = [reply(1, actor="7"), reply(2, actor="8", parent="p1"), reply(3, actor="7")]
    entries = apply(events).entries
    assert sorted(entry.kind for entry in entries) == ["reply", "reply"]


def test_once_read_the_persons_replies_get_their_own_entries_again(settings):
    settings.FEED_REPLIES_PER_PERSON = 2
    current = apply([reply(n, actor="7") for n in range(1, 5)])
    assert sorted(entry.kind for entry in current.entries) == ["replies", "reply", "reply"]
    feed_merge.feed_entries_mark_read(current, entry_ids=None, now_ms=0)
    after = apply([reply(n, actor="7") for n in range(5, 8)], feed_item=current)
    unread = [entry for entry in after.entries if not entry.read]
    assert sorted(entry.kind for entry in unread) == ["replies", "reply", "reply"]


def test_the_person_rollup_is_idempotent_and_stays_small_through_the_write_path(settings):
    settings.FEED_REPLIES_PER_PERSON = 1
    for n in range(1, 4):
        feed_services.feed_append(user_id="1", event=reply(n, actor="7"))
    again = feed_services.feed_append(user_id="1", event=reply(3, actor="7"))
    assert again.status == feed_services.ALREADY_APPLIED
    stored = feed_selectors.feed_read(user_id="1")
    assert sorted((entry.kind, entry.event_count) for entry in stored.entries) == [("replies", 2), ("reply", 1)]
    assert len(stored.serialize()["p"]["B"]) < 120


@pytest.mark.parametrize("value", [0, -1, "5"])
def test_a_bad_replies_per_person_is_reported_at_start_up(settings, value):
    settings.FEED_REPLIES_PER_PERSON = value
    with pytest.raises(SystemCheckError, match="FEED_REPLIES_PER_PERSON"):
        call_command("check")
