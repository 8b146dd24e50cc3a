"""Like notifications as a user meets them: aggregation, reading, new likes after reading,
unlikes, self-likes, expiry, and the races the conditions close (injected, since
DynamoDB Local serialises transactions)."""

from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest

from notifications import like_fold, selectors
from notifications import services as notification_services
from notifications.like_fold import batches as fold_batches
from notifications.models import LikeEvent, LikeRead, LikeUnread
from project.dynamo import wire
from social.models import Like
from tests.notifications.helpers import (
    count_items,
    fold,
    like,
    post,
    read_items,
    table_badge,
    uid,
    unlike,
    unread_item,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fold_by_the_worker", "aws_read_lag")]


def inbox(user, **kwargs):
    return selectors.notification_inbox(user_id=uid(user), **kwargs)


def badge(user) -> int:
    return selectors.unread_count(user_id=uid(user))


def test_posting_a_comment_writes_no_notification_item_until_someone_likes_it(people):
    """Likes are folded: the fold creates the notification at the first like;
    a post does not pay for two empty items (8 write units) that most comments never use."""
    comment_id = post(people["author"])
    with pytest.raises(LikeUnread.DoesNotExist):
        unread_item(people["author"], comment_id)
    assert count_items(people["author"]) == {}
    assert inbox(people["author"]).results == []
    assert badge(people["author"]) == 0
    like(people["alice"], comment_id)
    item = unread_item(people["author"], comment_id)
    assert (list(item.liker_ids), item.num_likes) == ([str(people["alice"].pk)], 1)
    assert count_items(people["author"]) == {f"like#{comment_id}": 1}


def test_likes_gather_into_one_unread_notification_with_the_right_text(people):
    author = people["author"]
    comment_id = post(author)

    like(people["alice"], comment_id)
    [only] = inbox(author).results
    assert (only.text, only.actor_count, only.unread) == ("Alice liked your comment", 1, True)

    like(people["bob"], comment_id)
    [only] = inbox(author).results
    assert only.text == "Alice and Bob liked your comment"
    assert [actor.display_name for actor in only.actors] == ["Alice", "Bob"]

    like(people["carol"], comment_id)
    page = inbox(author)
    [only] = page.results
    assert (only.text, only.actor_count, only.comment_id) == ("Alice and 2 others liked your comment", 3, comment_id)
    assert page.unread_count == 1 == badge(author)  # one notification, of 3 likes
    assert list(unread_item(author, comment_id).liker_ids) == [uid(people[n]) for n in ("alice", "bob", "carol")]


def test_reading_then_a_new_like_starts_a_new_unread_notification(people):
    author = people["author"]
    comment_id = post(author)
    for name in ("alice", "bob", "carol"):
        like(people[name], comment_id)

    assert notification_services.like_notifications_mark_read(user_id=uid(author), comment_ids=[comment_id]) == 1
    assert badge(author) == 0
    [history] = inbox(author).results
    assert (history.unread, history.actor_count, history.text) == (False, 3, "Alice and 2 others liked your comment")

    like(people["dave"], comment_id)
    unread, old = inbox(author).results
    assert (unread.unread, unread.text, unread.actor_count) == (True, "Dave liked your comment", 1)
    assert (old.unread, old.actor_count) == (False, 3)
    assert badge(author) == 1


def test_likes_of_several_comments_are_separate_unread_notifications_newest_first(people):
    author = people["author"]
    first, second = post(author, "first"), post(author, "second")
    like(people["alice"], first)
    like(people["bob"], second)
    like(people["carol"], first)  # `first` was updated last
    results = inbox(author).results
    assert [n.comment_id for n in results] == [first, second]
    assert badge(author) == 2  # two notifications, of 3 likes


def test_self_like_counts_but_notifies_nobody(people):
    author = people["author"]
    comment_id = post(author)
    assert like(author, comment_id).like_count == 1
    assert badge(author) == 0
    assert inbox(author).results == []
    assert unlike(author, comment_id).like_count == 0
    assert count_items(author) == {}  # a self-like never creates the author's notification items


def test_liking_twice_notifies_once(people):
    author = people["author"]
    comment_id = post(author)
    like(people["alice"], comment_id)
    like(people["alice"], comment_id)
    assert list(unread_item(author, comment_id).liker_ids) == [uid(people["alice"])]
    assert badge(author) == 1


def test_unlike_before_read_leaves_the_notification_and_the_badge(people):
    author = people["author"]
    comment_id = post(author)
    like(people["alice"], comment_id)
    like(people["bob"], comment_id)
    unlike(people["alice"], comment_id)
    [only] = inbox(author).results
    assert (only.text, only.actor_count) == ("Bob liked your comment", 1)
    assert badge(author) == 1
    unlike(people["bob"], comment_id)
    assert inbox(author).results == []
    assert badge(author) == 0
    assert unread_item(author, comment_id).num_likes == 0


def test_unlike_after_read_keeps_the_history(people):
    author = people["author"]
    comment_id = post(author)
    like(people["alice"], comment_id)
    notification_services.like_notifications_mark_all_read(user_id=uid(author))
    unlike(people["alice"], comment_id)
    [history] = inbox(author).results
    assert (history.unread, history.text) == (False, "Alice liked your comment")
    assert badge(author) == 0
    # liking again does not notify the author a second time for this comment ...
    like(people["alice"], comment_id)
    assert [n.unread for n in inbox(author).results] == [False]
    assert badge(author) == 0
    # ... while someone new still starts a new unread notification
    like(people["bob"], comment_id)
    assert [(n.unread, n.text) for n in inbox(author).results] == [
        (True, "Bob liked your comment"),
        (False, "Alice liked your comment"),
    ]
    assert badge(author) == 1


def test_a_comment_without_notification_items_is_notified_at_its_first_like(people):
    """Posting writes no notification item (and comments posted before notifications existed
    have none): the fold creates them, conditionally, at the first like."""
    author = people["author"]
    comment_id = post(author)
    assert like(people["alice"], comment_id).like_count == 1
    assert list(unread_item(author, comment_id).liker_ids) == [uid(people["alice"])]
    assert badge(author) == 1


def test_read_marks_only_the_callers_own_notifications(people):
    author, alice = people["author"], people["alice"]
    theirs = post(author)
    like(people["bob"], theirs)
    assert notification_services.like_notifications_mark_read(user_id=uid(alice), comment_ids=[theirs]) == 0
    assert badge(author) == 1
    assert read_items(alice) == []
    assert unread_item(author, theirs).num_likes == 1


def test_expired_read_notifications_are_not_shown_while_their_items_still_exist(people):
    author = people["author"]
    old, recent = post(author, "old"), post(author, "recent")
    like(people["alice"], old)
    notification_services.like_notifications_mark_all_read(user_id=uid(author))
    like(people["bob"], recent)
    notification_services.like_notifications_mark_all_read(user_id=uid(author))
    [expired] = [item for item in read_items(author) if item.comment_id == old]
    expired.update(actions=[LikeRead.expires_at.set(datetime.now(UTC) - timedelta(seconds=1))])

    assert [n.comment_id for n in inbox(author).results] == [recent]
    assert len(read_items(author)) == 2  # TTL has not deleted it: the read filters it
    staff = selectors.notifications_for_staff(user_id=uid(author))
    assert {(n.comment_id, n.expired) for n in staff.read} == {(old, True), (recent, False)}


def test_read_notifications_outside_the_retention_window_are_not_shown(people, settings):
    author = people["author"]
    comment_id = post(author)
    like(people["alice"], comment_id)
    notification_services.like_notifications_mark_all_read(user_id=uid(author))
    assert len(inbox(author).results) == 1
    settings.NOTIFICATION_READ_RETENTION_DAYS = 0
    assert inbox(author).results == []


def test_read_item_keeps_expiry_after_the_retention_period(people, settings):
    settings.NOTIFICATION_READ_RETENTION_DAYS = 7
    author = people["author"]
    comment_id = post(author)
    like(people["alice"], comment_id)
    notification_services.like_notifications_mark_all_read(user_id=uid(author))
    [item] = read_items(author)
    read_at = datetime.fromisoformat(item.read_at.replace("Z", "+00:00"))
    assert abs((item.expires_at - read_at) - timedelta(days=7)) < timedelta(seconds=2)
    assert item.read_key.endswith(f"#{comment_id}")


def _count_transactions():
    real = wire.make_api_call
    calls = []

    def counting(self, operation_name, api_params):
        if operation_name == "TransactWriteItems":
            calls.append(len(api_params["TransactItems"]))
        return real(self, operation_name, api_params)

    return mock.patch.object(wire, "make_api_call", counting), calls


def test_many_comments_are_marked_in_as_few_transactions_as_the_action_limit_allows(people):
    author = people["author"]
    comment_ids = [post(author, f"comment {n}") for n in range(40)]
    for comment_id in comment_ids:
        like(people["alice"], comment_id)
    assert badge(author) == 40

    patcher, calls = _count_transactions()
    with patcher:
        assert notification_services.like_notifications_mark_all_read(user_id=uid(author)) == 40
    assert calls == [100, 22]  # 33 comments x 3 actions + the activity log line, then the other 7
    assert badge(author) == 0
    assert len(read_items(author)) == 40
    assert len({item.read_key for item in read_items(author)}) == 40  # read in the same instant, no collision


# --- races (injected: DynamoDB Local serialises transactions) --------------


def test_a_like_landing_between_the_read_and_the_mark_read_transaction_is_not_lost(people):
    author = people["author"]
    comment_id = post(author)
    like(people["alice"], comment_id)
    like(people["bob"], comment_id)

    real_get = notification_services._like_unread_get
    reads = []

    def read_then_like(**kwargs):
        found = real_get(**kwargs)
        reads.append([list(item.liker_ids) for item in found])
        if len(reads) == 1:
            like(people["carol"], comment_id)  # lands after the copy was read
        return found

    with mock.patch.object(notification_services, "_like_unread_get", read_then_like):
        notification_services.like_notifications_mark_read(user_id=uid(author), comment_ids=[comment_id])

    assert len(reads) == 2  # the stale copy failed its condition and was read again
    everyone = [uid(people[n]) for n in ("alice", "bob", "carol")]
    [history] = read_items(author)
    still_unread = list(unread_item(author, comment_id).liker_ids)
    assert sorted(list(history.liker_ids) + still_unread) == sorted(everyone)
    assert list(history.liker_ids) == everyone and still_unread == []
    assert badge(author) == len(still_unread) == table_badge(uid(author))


def test_a_like_landing_during_mark_all_read_is_not_lost(people):
    author = people["author"]
    first, second = post(author, "first"), post(author, "second")
    like(people["alice"], first)
    like(people["alice"], second)

    real_all = notification_services._like_unread_all

    def read_then_like(**kwargs):
        found = real_all(**kwargs)
        like(people["bob"], second)
        return found

    with mock.patch.object(notification_services, "_like_unread_all", read_then_like):
        assert notification_services.like_notifications_mark_all_read(user_id=uid(author)) == 2

    copies = {item.comment_id: list(item.liker_ids) for item in read_items(author)}
    assert copies == {first: [uid(people["alice"])], second: [uid(people["alice"]), uid(people["bob"])]}
    assert badge(author) == 0 == table_badge(uid(author))


def _plan_then(action):
    """Patch the fold's read-and-decide step: run `action` once right after the first plan."""
    real_plan = fold_batches._plan
    plans = []

    def plan_then(**kwargs):
        fold = real_plan(**kwargs)
        plans.append(fold)
        if len(plans) == 1:
            action()
        return fold

    return mock.patch.object(fold_batches, "_plan", plan_then), plans


def test_two_folders_on_the_same_events_fold_each_once(people):
    author = people["author"]
    comment_id = post(author)
    for name in ("alice", "bob", "carol"):
        like(people[name], comment_id)
    unlike(people["alice"], comment_id, folded=False)
    unlike(people["carol"], comment_id, folded=False)

    # A second folder takes the same events between this folder's read and its transaction.
    patcher, plans = _plan_then(lambda: like_fold.fold_batch(comment_id=comment_id, attempts=8))
    with patcher:
        assert like_fold.like_events_fold(comment_id=comment_id) == 0  # the other one folded them

    # this folder's plan and the other folder's; this folder's transaction was then cancelled
    # (its events were gone) and its re-read found nothing pending
    assert len(plans) == 2
    assert list(unread_item(author, comment_id).liker_ids) == [uid(people["bob"])]
    assert unread_item(author, comment_id).num_likes == 1
    assert badge(author) == 1 == table_badge(uid(author))
    assert [like.user_id for like in Like.query(comment_id, consistent_read=True)] == [uid(people["bob"])]


def test_unlike_folded_while_the_notification_is_read_keeps_the_history(people):
    author = people["author"]
    comment_id = post(author)
    like(people["alice"], comment_id)
    like(people["bob"], comment_id)
    unlike(people["bob"], comment_id, folded=False)

    patcher, plans = _plan_then(lambda: notification_services.like_notifications_mark_all_read(user_id=uid(author)))
    with patcher:
        fold()

    assert [fold.withdraw for fold in plans[:2]] == [[uid(people["bob"])], []]  # re-read: bob is history now
    assert unread_item(author, comment_id).num_likes == 0
    [history] = read_items(author)
    assert list(history.liker_ids) == [uid(people["alice"]), uid(people["bob"])]
    assert badge(author) == 0 == table_badge(uid(author))


def test_a_like_landing_during_a_fold_is_folded_by_the_next_one(people):
    """The fold follows the like row it read; a change after that read has its own event."""
    author = people["author"]
    comment_id = post(author)
    like(people["alice"], comment_id, folded=False)

    patcher, plans = _plan_then(lambda: unlike(people["alice"], comment_id, folded=False))
    with patcher:
        fold()

    assert plans[0].notify == [uid(people["alice"])] and plans[-1].withdraw == [uid(people["alice"])]
    assert list(Like.query(comment_id, consistent_read=True)) == []
    assert list(unread_item(author, comment_id).liker_ids) == []
    assert badge(author) == 0 == table_badge(uid(author))


def test_one_persons_events_folded_together_end_in_their_like_row_state(people):
    author = people["author"]
    comment_id = post(author)
    for _ in range(3):
        like(people["alice"], comment_id, folded=False)
        unlike(people["alice"], comment_id, folded=False)
    like(people["bob"], comment_id, folded=False)
    unlike(people["bob"], comment_id, folded=False)
    like(people["bob"], comment_id, folded=False)
    assert fold() == 9
    item = unread_item(author, comment_id)
    assert (list(item.liker_ids), item.num_likes) == ([uid(people["bob"])], 1)
    assert badge(author) == 1 == table_badge(uid(author))
    assert list(LikeEvent.query(comment_id, consistent_read=True)) == []


def test_unread_like_items_and_counts_stay_in_step(people):
    """The LSI only ever sees comments with unread likes."""
    author = people["author"]
    quiet = [post(author, f"quiet {n}") for n in range(5)]
    liked = post(author, "liked")
    like(people["alice"], liked)
    unread = list(LikeUnread.by_num_likes.query(uid(author), LikeUnread.num_likes > 0, consistent_read=True))
    assert [item.comment_id for item in unread] == [liked]
    assert selectors.unread_count_sources(user_id=uid(author)) == {f"like#{liked}": 1}
    assert len(count_items(author)) == 1  # the quiet comments have no items at all
    assert all(comment_id not in str(count_items(author)) for comment_id in quiet)


def test_a_stopping_folder_stops_after_the_batch_in_hand_and_the_next_fold_takes_the_rest(people, make_user):
    author = people["author"]
    comment_id = post(author)
    likers = [make_user() for _ in range(like_fold.FOLD_EVENTS_MAX + 5)]
    for liker in likers:
        like(liker, comment_id, folded=False)

    assert like_fold.like_events_fold(comment_id=comment_id, stop=lambda: True) == like_fold.FOLD_EVENTS_MAX
    assert len(list(LikeEvent.query(comment_id, consistent_read=True))) == 5
    assert like_fold.like_events_fold(comment_id=comment_id) == 5
    assert int(unread_item(author, comment_id).num_likes) == len(likers)


def test_the_badge_counts_notifications_not_likes(people):
    """3 likes on one comment are one notification: the badge says 1, beside one item."""
    author = people["author"]
    comment_id = post(author)
    for name in ("alice", "bob", "carol"):
        like(people[name], comment_id)
    page = inbox(author)
    assert len(page.results) == 1
    assert page.unread_count == badge(author) == 1
