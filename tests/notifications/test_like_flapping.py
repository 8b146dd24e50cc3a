"""Like flapping: the same person liking the same comment again within
LIKE_RENOTIFY_WINDOW_HOURS adds no new notification for its author once the author read it;
while it is unread, it counts that person once, however their likes and unlikes were folded.
After the window a like notifies again."""

import pytest
from rest_framework.test import APIClient

from notifications import selectors
from notifications import services as notification_services
from project.clock import ManualClock, clock_override
from tests.notifications.helpers import fold, like, post, uid, unlike, unread_item

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]


def badge(user) -> int:
    return selectors.unread_count(user_id=uid(user))


def unread_texts(user) -> list[str]:
    return [n.text for n in selectors.notification_inbox(user_id=uid(user)).results if n.unread]


def read_all(user) -> None:
    notification_services.inbox_mark_all_read(user_id=uid(user))


@pytest.mark.usefixtures("fold_by_the_worker")
def test_like_unlike_cycles_after_a_read_notify_the_author_once(people):
    author, alice = people["author"], people["alice"]
    comment_id = post(author)
    with clock_override(ManualClock(step=0.001)) as clock:
        like(alice, comment_id)
        assert (badge(author), unread_texts(author)) == (1, ["Alice liked your comment"])
        for _ in range(4):
            read_all(author)
            unlike(alice, comment_id)
            clock.advance(600)
            read_all(author)
            like(alice, comment_id)
            assert badge(author) == 0 and unread_texts(author) == []
        assert int(unread_item(author, comment_id).num_likes) == 0


@pytest.mark.usefixtures("fold_by_the_worker")
@pytest.mark.parametrize("folded_each_time", [True, False], ids=["fold after each", "one fold at the end"])
def test_unread_like_unlike_like_counts_the_person_once(people, folded_each_time):
    """Unread all along: the same outcome whether each event was folded on its own (the
    unlike withdraws the like, the like again puts it back) or all three in one fold."""
    author, alice = people["author"], people["alice"]
    comment_id = post(author)
    with clock_override(ManualClock(step=0.001)) as clock:
        like(alice, comment_id, folded=folded_each_time)
        unlike(alice, comment_id, folded=folded_each_time)
        if folded_each_time:
            assert badge(author) == 0
        clock.advance(600)
        like(alice, comment_id, folded=folded_each_time)
        fold()
        assert (badge(author), unread_texts(author)) == (1, ["Alice liked your comment"])
        assert (int(unread_item(author, comment_id).num_likes), unread_item(author, comment_id).liker_ids) == (
            1,
            [uid(alice)],
        )
        read_all(author)
        unlike(alice, comment_id)
        like(alice, comment_id)
        assert badge(author) == 0  # read: her like again raises nothing


@pytest.mark.usefixtures("fold_by_the_worker")
def test_flapping_while_unread_puts_a_like_back_once(people):
    author, alice, bob = people["author"], people["alice"], people["bob"]
    comment_id = post(author)
    like(bob, comment_id)
    like(alice, comment_id)
    unlike(alice, comment_id)
    like(alice, comment_id)  # put back
    assert unread_item(author, comment_id).liker_ids == [uid(bob), uid(alice)]
    unlike(alice, comment_id)
    like(alice, comment_id)  # not again before the author read it
    assert (badge(author), unread_texts(author)) == (1, ["Bob liked your comment"])


@pytest.mark.usefixtures("fold_by_the_worker")
def test_after_the_window_a_like_notifies_again(people, settings):
    settings.LIKE_RENOTIFY_WINDOW_HOURS = 2
    author, alice = people["author"], people["alice"]
    comment_id = post(author)
    with clock_override(ManualClock()) as clock:
        like(alice, comment_id)
        read_all(author)
        unlike(alice, comment_id)
        clock.advance(2 * 3600 - 1)
        like(alice, comment_id)
        assert badge(author) == 0  # still within the window
        unlike(alice, comment_id)
        clock.advance(2)
        like(alice, comment_id)
        assert (badge(author), unread_texts(author)) == (1, ["Alice liked your comment"])


@pytest.mark.usefixtures("fold_by_the_worker")
def test_flapping_takes_nothing_from_other_likers(people):
    author, alice, bob = people["author"], people["alice"], people["bob"]
    comment_id = post(author)
    like(alice, comment_id)
    for _ in range(3):
        unlike(alice, comment_id)
        like(alice, comment_id)
    like(bob, comment_id)
    assert (badge(author), unread_texts(author)) == (1, ["Bob liked your comment"])


def test_flapping_through_the_api_with_the_fold_after_each_answer(people):
    """The web path: each like is folded once its answer is sent (no worker here)."""
    author, alice = people["author"], people["alice"]
    comment_id = post(author)
    liker, reader = APIClient(), APIClient()
    liker.force_authenticate(alice)
    reader.force_authenticate(author)
    badges = []
    for _ in range(3):
        assert reader.post("/api/notifications/read-all/").status_code == 200
        assert liker.put(f"/api/comments/{comment_id}/like/").json()["liked"] is True
        badges.append(reader.get("/api/notifications/unread-count/").json()["unread_count"])
        assert liker.delete(f"/api/comments/{comment_id}/like/").json()["liked"] is False
        assert reader.post("/api/notifications/read-all/").status_code == 200
    # The second like puts back the one her unlike withdrew (the read found nothing unread to
    # mark); once put back, never again before the author reads it.
    assert badges == [1, 1, 0]
