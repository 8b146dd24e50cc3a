"""A popular comment: the unread like notification keeps at most LIKE_NOTIFICATION_LIKERS_MAX
liker ids while `num_likes` and the badge go on counting, so likes keep working however
many arrive before the author reads (the item never nears DynamoDB's 400 KB limit)."""

import threading
from concurrent.futures import ThreadPoolExecutor
from unittest import mock

import pytest

from actions.likes import like_add
from notifications import selectors
from notifications import services as notification_services
from notifications.models import LikeEvent, LikeUnread
from project.dynamo import wire
from social.models import CounterShard, Like
from tests.notifications.helpers import count_items, fold, like, post, read_items, table_badge, uid, unlike, unread_item

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fold_by_the_worker", "aws_read_lag")]


@pytest.fixture
def cap(settings):
    settings.LIKE_NOTIFICATION_LIKERS_MAX = 3
    return 3


@pytest.fixture
def crowd(people, make_user):
    """The author and, in liking order, alice, bob, carol, dave, erin (frank likes later)."""
    return {
        **people,
        "erin": make_user("erin", display_name="Erin"),
        "frank": make_user("frank", display_name="Frank"),
    }


FIVE = ("alice", "bob", "carol", "dave", "erin")


def inbox(user):
    return selectors.notification_inbox(user_id=uid(user)).results


def badge(user) -> int:
    """Unread likes, as `unread_counts` holds them (the badge itself counts notifications)."""
    return sum(selectors.unread_count_sources(user_id=uid(user)).values())


def ids(crowd, *names) -> list[str]:
    return [uid(crowd[name]) for name in names]


def liked_by_five(crowd) -> str:
    comment_id = post(crowd["author"])
    for name in FIVE:
        like(crowd[name], comment_id)
    return comment_id


def test_likes_past_the_cap_are_counted_but_not_listed(cap, crowd):
    author = crowd["author"]
    comment_id = liked_by_five(crowd)

    item = unread_item(author, comment_id)
    assert list(item.liker_ids) == ids(crowd, "alice", "bob", "carol")
    assert item.num_likes == 5
    assert count_items(author) == {f"like#{comment_id}": 5}
    assert badge(author) == 5 == table_badge(uid(author))
    [only] = inbox(author)
    assert (only.text, only.actor_count, only.unread) == ("Alice and 4 others liked your comment", 5, True)
    assert [actor.display_name for actor in only.actors] == ["Alice", "Bob"]


def test_liking_twice_past_the_cap_counts_once(cap, crowd):
    author = crowd["author"]
    comment_id = liked_by_five(crowd)
    assert like(crowd["erin"], comment_id).like_count == 5
    assert unread_item(author, comment_id).num_likes == 5
    assert badge(author) == 5


def test_an_overflow_likers_unlike_leaves_the_notification_as_it_is(cap, crowd):
    author = crowd["author"]
    comment_id = liked_by_five(crowd)

    assert unlike(crowd["dave"], comment_id).like_count == 4
    item = unread_item(author, comment_id)
    assert (list(item.liker_ids), item.num_likes) == (ids(crowd, "alice", "bob", "carol"), 5)
    assert badge(author) == 5 == table_badge(uid(author))  # the seed lets an undone like stay until read
    assert uid(crowd["dave"]) not in {row.user_id for row in Like.query(comment_id, consistent_read=True)}


def test_a_listed_likers_unlike_takes_them_out_and_the_list_fills_again(cap, crowd):
    author = crowd["author"]
    comment_id = liked_by_five(crowd)

    unlike(crowd["bob"], comment_id)
    item = unread_item(author, comment_id)
    assert (list(item.liker_ids), item.num_likes) == (ids(crowd, "alice", "carol"), 4)
    assert badge(author) == 4 == table_badge(uid(author))
    [only] = inbox(author)
    assert (only.text, only.actor_count) == ("Alice and 3 others liked your comment", 4)

    like(crowd["frank"], comment_id)  # the list has room again: frank is listed
    item = unread_item(author, comment_id)
    assert (list(item.liker_ids), item.num_likes) == (ids(crowd, "alice", "carol", "frank"), 5)
    assert badge(author) == 5


def test_mark_read_copies_the_count_and_a_like_after_it_starts_a_new_notification(cap, crowd):
    author = crowd["author"]
    comment_id = liked_by_five(crowd)

    assert notification_services.like_notifications_mark_read(user_id=uid(author), comment_ids=[comment_id]) == 1
    [history] = read_items(author)
    assert (list(history.liker_ids), history.num_likes) == (ids(crowd, "alice", "bob", "carol"), 5)
    item = unread_item(author, comment_id)
    assert (list(item.liker_ids), item.num_likes) == ([], 0)
    assert badge(author) == 0 == table_badge(uid(author))
    [read] = inbox(author)
    assert (read.unread, read.text, read.actor_count) == (False, "Alice and 4 others liked your comment", 5)

    like(crowd["frank"], comment_id)  # the sixth like
    unread, old = inbox(author)
    assert (unread.unread, unread.text, unread.actor_count) == (True, "Frank liked your comment", 1)
    assert (old.unread, old.actor_count) == (False, 5)
    item = unread_item(author, comment_id)
    assert (list(item.liker_ids), item.num_likes) == (ids(crowd, "frank"), 1)
    assert badge(author) == 1 == table_badge(uid(author))


def test_every_listed_liker_gone_leaves_a_nameless_notification_that_can_be_read(settings, crowd):
    settings.LIKE_NOTIFICATION_LIKERS_MAX = 2
    author = crowd["author"]
    comment_id = post(author)
    for name in ("alice", "bob", "carol"):
        like(crowd[name], comment_id)
    unlike(crowd["alice"], comment_id)
    [only] = inbox(author)
    assert (only.text, only.actor_count) == ("Bob and 1 other liked your comment", 2)
    unlike(crowd["bob"], comment_id)

    item = unread_item(author, comment_id)
    assert (list(item.liker_ids), item.num_likes) == ([], 1)  # carol's overflow like
    [only] = inbox(author)
    assert (only.text, only.actor_count, only.actors) == ("Someone liked your comment", 1, ())
    assert badge(author) == 1

    assert notification_services.like_notifications_mark_all_read(user_id=uid(author)) == 1
    [history] = read_items(author)
    assert (list(history.liker_ids), history.num_likes) == ([], 1)
    assert badge(author) == 0 == table_badge(uid(author))
    assert unread_item(author, comment_id).num_likes == 0


def test_the_setting_keeps_two_names_at_least(settings, crowd):
    settings.LIKE_NOTIFICATION_LIKERS_MAX = 0
    author = crowd["author"]
    comment_id = post(author)
    for name in ("alice", "bob", "carol"):
        like(crowd[name], comment_id)
    assert list(unread_item(author, comment_id).liker_ids) == ids(crowd, "alice", "bob")
    assert inbox(author)[0].text == "Alice and 2 others liked your comment"


# --- round trips ------------------------------------------------------------


def _spy_transactions():
    real = wire.make_api_call
    sent = []

    def spy(self, operation_name, api_params):
        if operation_name == "TransactWriteItems":
            sent.append([next(iter(action.values()))["TableName"] for action in api_params["TransactItems"]])
        return real(self, operation_name, api_params)

    return mock.patch.object(wire, "make_api_call", spy), sent


def _spy_writes():
    """(operation, table) of every single-item write (UpdateItem, PutItem, DeleteItem)."""
    real = wire.make_api_call
    sent = []

    def spy(self, operation_name, api_params):
        if operation_name in ("UpdateItem", "PutItem", "DeleteItem"):
            sent.append((operation_name, api_params["TableName"]))
        return real(self, operation_name, api_params)

    return mock.patch.object(wire, "make_api_call", spy), sent


def test_a_like_is_one_transaction_of_items_no_other_liker_touches(cap, crowd):
    comment_id = liked_by_five(crowd)  # the list is full: no longer changes what a like writes
    patcher, sent = _spy_transactions()
    with patcher:
        like(crowd["frank"], comment_id, folded=False)
    [tables] = sent
    # The activity log's line is written by the fold, from the event (exactly once, by its key).
    expected = [Like.Meta.table_name, CounterShard.Meta.table_name, LikeEvent.Meta.table_name]
    assert sorted(tables) == sorted(expected)


def test_many_likes_fold_in_one_write_of_the_notification_and_the_overflow_is_counted(cap, crowd):
    author = crowd["author"]
    comment_id = post(author)
    for name in FIVE:
        like(crowd[name], comment_id, folded=False)
    patcher, sent = _spy_writes()
    with patcher:
        assert fold() == 5
    assert [write for write in sent if write[1] == LikeUnread.Meta.table_name] == [
        ("PutItem", LikeUnread.Meta.table_name)
    ]
    item = unread_item(author, comment_id)
    assert (list(item.liker_ids), item.num_likes) == (ids(crowd, "alice", "bob", "carol"), 5)
    assert badge(author) == 5 == table_badge(uid(author))


# --- races (injected: DynamoDB Local serialises transactions) --------------


def test_an_overflow_like_landing_between_the_read_and_the_mark_read_is_not_lost(cap, crowd):
    author = crowd["author"]
    comment_id = post(author)
    for name in ("alice", "bob", "carol", "dave"):
        like(crowd[name], comment_id)

    real_get = notification_services._like_unread_get
    reads = []

    def read_then_like(**kwargs):
        found = real_get(**kwargs)
        reads.append([(list(item.liker_ids), int(item.num_likes)) for item in found])
        if len(reads) == 1:
            like(crowd["erin"], comment_id)  # an overflow like: only num_likes changes
        return found

    with mock.patch.object(notification_services, "_like_unread_get", read_then_like):
        notification_services.like_notifications_mark_read(user_id=uid(author), comment_ids=[comment_id])

    assert len(reads) == 2
    [history] = read_items(author)
    assert (list(history.liker_ids), history.num_likes) == (ids(crowd, "alice", "bob", "carol"), 5)
    assert unread_item(author, comment_id).num_likes == 0
    assert badge(author) == 0 == table_badge(uid(author))


@pytest.mark.parametrize("like_first", [False, True])
def test_an_unlike_and_a_like_folded_together_give_the_freed_place_to_the_like(cap, crowd, like_first):
    author = crowd["author"]
    comment_id = post(author)
    for name in ("alice", "bob", "carol"):
        like(crowd[name], comment_id)
    if like_first:
        like(crowd["dave"], comment_id, folded=False)
    unlike(crowd["bob"], comment_id, folded=False)
    if not like_first:
        like(crowd["dave"], comment_id, folded=False)
    assert fold() == 2
    item = unread_item(author, comment_id)
    assert (list(item.liker_ids), item.num_likes) == (ids(crowd, "alice", "carol", "dave"), 3)
    assert badge(author) == 3 == table_badge(uid(author))


# --- concurrency and size -------------------------------------------------


@pytest.mark.slow
def test_concurrent_likes_past_the_cap_keep_badge_count_and_list_in_step(cap, make_user):
    author = make_user("popular")
    comment_id = post(author)
    likers = [make_user(f"fan{n}") for n in range(40)]
    author_id = uid(author)
    errors = []

    def like_all(users):
        for user in users:
            try:
                like(user, comment_id)
            except Exception as error:  # collected and asserted below
                errors.append(error)

    # Phase 1: 24 likes from 8 threads, nobody reads.
    first = likers[:24]
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(like_all, [first[n::8] for n in range(8)]))
    assert errors == []
    fold()
    item = unread_item(author, comment_id)
    assert item.num_likes == 24 == badge(author) == table_badge(author_id)
    assert len(item.liker_ids) == min(cap, 24) and len(set(item.liker_ids)) == cap
    assert set(item.liker_ids) <= {uid(user) for user in first}

    # Phase 2: 16 more likes from 8 threads while the author reads now and then.
    second = likers[24:]
    stop = threading.Event()

    def read_loop():
        while not stop.is_set():
            notification_services.like_notifications_mark_all_read(user_id=author_id)

    reader = threading.Thread(target=read_loop)
    reader.start()
    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(like_all, [second[n::8] for n in range(8)]))
    finally:
        stop.set()
        reader.join()
    assert errors == []
    fold()

    item = unread_item(author, comment_id)
    copies = read_items(author)
    # every like arrived exactly once: in one read copy or in the unread notification
    assert sum(int(copy.num_likes) for copy in copies) + int(item.num_likes) == 40
    assert int(item.num_likes) == badge(author) == table_badge(author_id)
    for notification in [item, *copies]:
        assert len(notification.liker_ids) == min(cap, int(notification.num_likes))
        assert len(set(notification.liker_ids)) == len(notification.liker_ids)
    listed = [liker for notification in [item, *copies] for liker in notification.liker_ids]
    assert len(set(listed)) == len(listed) and set(listed) <= {uid(user) for user in likers}
    assert len(list(Like.query(comment_id, consistent_read=True))) == 40


@pytest.mark.slow
def test_a_viral_comment_keeps_a_small_notification_item(settings, make_user):
    settings.LIKE_NOTIFICATION_LIKERS_MAX = 50
    author = make_user("viral")
    comment_id = post(author)
    liker_ids = [str(100_000 + n) for n in range(500)]  # likes only need ids

    def like_all(chunk):
        for liker_id in chunk:
            like_add(comment_id=comment_id, user_id=liker_id)

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(like_all, [liker_ids[n::4] for n in range(4)]))
    fold()

    item = unread_item(author, comment_id)
    assert len(item.liker_ids) == 50 and set(item.liker_ids) <= set(liker_ids)
    assert item.num_likes == 500 == badge(author)
    [only] = selectors.notification_inbox(user_id=uid(author)).results
    assert only.actor_count == 500 and only.text.endswith("and 499 others liked your comment")


def test_staff_page_shows_the_count_and_how_many_likers_are_listed(cap, crowd, client, make_user):
    author = crowd["author"]
    comment_id = liked_by_five(crowd)
    notification_services.like_notifications_mark_all_read(user_id=uid(author))
    like(crowd["frank"], comment_id)
    client.force_login(make_user("staffer", is_staff=True))
    html = client.get("/admin/dynamo/notifications/", {"username": "author"}).content.decode()
    assert "Frank liked your comment" in html
    assert "Alice and 4 others liked your comment" in html
    assert "5 (3 listed)" in html
