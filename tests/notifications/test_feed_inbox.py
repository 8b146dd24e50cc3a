"""Feed entries in the inbox: merged with like notifications by time, unread first; read, read-all, badge."""

import pytest

from actions.comments import comment_create
from actions.likes import like_add
from notifications.feed import events as feed_events
from notifications.feed import services as feed_services
from project.clock import ManualClock, clock, clock_override

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]


def uid(user):
    return str(user.pk)


def post(user, body="Hello", parent=None):
    return comment_create(author_id=uid(user), body=body, parent_id=parent)


@pytest.fixture
def inbox(people):
    """The author's inbox: a like (oldest), a reply, a newer like, and a read reply (newest)."""
    author, alice, bob = people["author"], people["alice"], people["bob"]
    first, second, third = post(author, "one"), post(author, "two"), post(author, "three")
    like_add(comment_id=first.comment_id, user_id=uid(alice))
    post(bob, "a reply", parent=second.comment_id)
    like_add(comment_id=second.comment_id, user_id=uid(alice))
    read_reply = post(alice, "read already", parent=third.comment_id)
    entry_id = feed_events.feed_entry_id(f"reply:{read_reply.comment_id}")
    assert feed_services.feed_mark_read(user_id=uid(author), entry_ids=[entry_id]) == 1
    return {"first": first, "second": second, "third": third}


def test_list_merges_feed_entries_by_time_unread_first(api, people, inbox):
    body = api.as_user(people["author"]).get("/api/notifications/").json()
    assert body["unread_count"] == 3
    shown = [(item["kind"], item["unread"], item["text"]) for item in body["results"]]
    assert shown == [
        ("like", True, "Alice liked your comment"),  # newest unread first
        ("reply", True, "Bob replied to your comment"),
        ("like", True, "Alice liked your comment"),
        ("reply", False, "Alice replied to your comment"),
    ]
    reply = body["results"][1]
    assert reply["entry_id"] and reply["comment_id"] is None
    assert reply["url"].startswith(f"/c/{inbox['second'].comment_id}/")
    assert "entry_id" not in body["results"][0]  # likes keep their contract shape


def test_pages_walk_feed_and_likes_once(api, people, inbox):
    client = api.as_user(people["author"])
    seen, cursor = [], None
    while True:
        answer = client.get("/api/notifications/", {"limit": 1, **({"cursor": cursor} if cursor else {})}).json()
        seen += [item["id"] for item in answer["results"]]
        cursor = answer["next"]
        if not cursor:
            break
    assert len(seen) == len(set(seen)) == 4


def test_read_by_entry_ids_and_badge(api, people, inbox):
    client = api.as_user(people["author"])
    reply = next(item for item in client.get("/api/notifications/").json()["results"] if item["kind"] == "reply")
    assert client.get("/api/notifications/unread-count/").json() == {"unread_count": 3}
    answer = client.post("/api/notifications/read/", {"entry_ids": [reply["entry_id"]]}, format="json")
    assert answer.status_code == 200
    assert answer.json() == {"unread_count": 2}
    assert client.get("/api/feed/").json()["unread_count"] == 0
    # Marking again, or an id that is not (or no longer) in the feed, changes nothing.
    again = client.post("/api/notifications/read/", {"entry_ids": [reply["entry_id"], "nope"]}, format="json")
    assert again.json() == {"unread_count": 2}


def test_read_all_covers_feed_entries(api, people, inbox):
    client = api.as_user(people["author"])
    assert client.post("/api/notifications/read-all/").json() == {"unread_count": 0}
    results = client.get("/api/notifications/").json()["results"]
    assert [item["unread"] for item in results] == [False] * 4
    # A new reply afterwards is a new unread entry, and counts in the badge.
    post(people["bob"], "again", parent=inbox["second"].comment_id)
    assert client.get("/api/notifications/unread-count/").json() == {"unread_count": 1}


def test_inbox_page_shows_replies_and_marks_them_by_entry_id(client, people, inbox):
    client.force_login(people["author"])
    page = client.get("/notifications/").content.decode()
    assert "Bob replied to your comment" in page
    assert 'data-read-field="entry_ids"' in page
    assert "a reply" in page  # the reply's excerpt


def test_a_read_reply_keeps_its_read_time_and_sorts_among_read_likes_by_it(client, people):
    """After a reload a read reply says when it was read and sorts by it, newest read first,
    as likes do: read after an older like was read, it comes first."""
    from notifications import selectors
    from notifications.services import like_notifications_mark_read

    author, alice, bob = people["author"], people["alice"], people["bob"]
    liked, replied = post(author, "liked"), post(author, "replied")
    reply = post(bob, "a reply", parent=replied.comment_id)
    like_add(comment_id=liked.comment_id, user_id=uid(alice))  # updated after the reply
    like_notifications_mark_read(user_id=uid(author), comment_ids=[liked.comment_id])
    later = ManualClock(clock.now() + 5)  # the reply is read 5 s after the like
    with clock_override(later):
        feed_services.feed_mark_read(
            user_id=uid(author), entry_ids=[feed_events.feed_entry_id(f"reply:{reply.comment_id}")]
        )

    page = selectors.notification_inbox(user_id=uid(author))

    assert [(n.kind, n.unread) for n in page.results] == [("reply", False), ("like", False)]
    assert page.results[0].read_at is not None
    assert abs(page.results[0].read_at.timestamp() - later.now()) < 1  # kept to the second
    client.force_login(author)
    html = client.get("/notifications/").content.decode()
    assert html.count("· read ") == 2
