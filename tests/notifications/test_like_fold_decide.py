"""The like fold's decision without DynamoDB (notifications/like_fold/decide.py): whom a batch
of like events notifies, withdraws and puts back, from what the fold read."""

from dataclasses import replace

from notifications.like_fold.decide import Fold, FoldFacts, fold_decide
from notifications.models import LikeEvent, LikeUnread

NOW = 1_000_000.0
WINDOW = 3600.0


def fold(likers=(), *, listed=(), count=None, unliked=(), restored=(), journal=()) -> Fold:
    events = [LikeEvent("c1", f"{n:04d}", author_id="alice", liker_id=x, kind="like") for n, x in enumerate(likers)]
    unread = None
    if listed or count or unliked or restored or journal:
        unread = LikeUnread(
            "alice",
            "c1",
            liker_ids=list(listed),
            num_likes=len(listed) if count is None else count,
            unliked_ids=list(unliked) or None,
            restored_ids=list(restored) or None,
            fold_notified=list(journal) or None,
            seq=3,
        )
    return Fold("c1", "alice", events, unread)


def facts(likers, *, liking=None, notified_at=None, **changes) -> FoldFacts:
    base = FoldFacts(
        likers=list(likers),
        liking=set(likers if liking is None else liking),
        notified_at=notified_at or {},
        visible=True,
        hears=True,
        mail_wanted=False,
        now=NOW,
        window=WINDOW,
        most=3,
    )
    return replace(base, **changes)


def test_a_new_liker_is_notified_listed_and_counted():
    decided = fold_decide(fold(["bob"]), facts(["bob"]))
    assert (decided.notify, decided.withdraw) == (["bob"], [])
    assert (decided.new_list, decided.new_count) == (["bob"], 1)


def test_the_same_person_within_the_window_is_counted_once_and_not_notified_again():
    recent = fold_decide(fold(["bob"]), facts(["bob"], notified_at={"bob": NOW - WINDOW + 1}))
    assert recent.notify == [] and recent.new_count == 0
    long_ago = fold_decide(fold(["bob"]), facts(["bob"], notified_at={"bob": NOW - WINDOW - 1}))
    assert long_ago.notify == ["bob"] and long_ago.new_count == 1


def test_an_unlike_withdraws_the_liker_and_a_like_again_puts_them_back():
    unliked = fold_decide(fold(["bob"], listed=["bob", "carol"]), facts(["bob"], liking=[]))
    assert unliked.withdraw == ["bob"]
    assert (unliked.new_list, unliked.new_count, unliked.new_unliked) == (["carol"], 1, ["bob"])
    # Bob likes again while the notification is still unread: put back although his marker is recent.
    again = fold_decide(fold(["bob"], listed=["carol"], unliked=["bob"]), facts(["bob"], notified_at={"bob": NOW - 5}))
    assert again.notify == ["bob"]
    assert (again.new_list, again.new_count, again.new_unliked, again.new_restored) == (
        ["carol", "bob"],
        2,
        [],
        ["bob"],
    )


def test_likes_off_or_a_muted_thread_notify_nobody_but_withdrawals_still_apply():
    decided = fold_decide(fold(["bob", "dave"], listed=["bob"]), facts(["bob", "dave"], liking=["dave"], hears=False))
    assert decided.notify == []
    assert decided.withdraw == ["bob"]
    assert (decided.new_list, decided.new_count) == ([], 0)


def test_a_hidden_or_deleted_comment_changes_nothing():
    before = fold(["bob"], listed=["carol"])
    decided = fold_decide(before, facts(["bob"], visible=False))
    assert (decided.notify, decided.withdraw, decided.changes) == ([], [], False)
    assert (decided.new_list, decided.new_count) == (["carol"], 1)


def test_a_blocked_liker_is_treated_as_not_liking():
    # The fold takes the people the author blocked or muted out of `liking`.
    decided = fold_decide(fold(["mallory"], listed=["mallory"]), facts(["mallory"], liking=[]))
    assert decided.withdraw == ["mallory"] and decided.notify == []


def test_the_list_keeps_the_first_likers_and_the_count_counts_them_all():
    decided = fold_decide(fold(["b", "c", "d", "e"]), facts(["b", "c", "d", "e"]))
    assert decided.notify == ["b", "c", "d", "e"]
    assert (decided.new_list, decided.new_count) == (["b", "c", "d"], 4)


def test_the_last_folds_likers_without_a_marker_are_marked_first_and_not_notified_twice():
    decided = fold_decide(fold(["bob"], listed=["bob"], journal=["bob"]), facts(["bob"]))
    assert decided.unmarked == ["bob"]
    assert decided.notify == [] and decided.new_count == 1


def test_a_mail_only_when_the_notification_becomes_unread():
    first = fold_decide(fold(["bob"]), facts(["bob"], mail_wanted=True))
    assert first.mail
    more = fold_decide(fold(["dave"], listed=["bob"]), facts(["dave"], mail_wanted=True))
    assert more.notify == ["dave"] and not more.mail


def test_the_fold_it_was_given_is_left_as_it_was():
    before = fold(["bob"], listed=["carol"])
    fold_decide(before, facts(["bob"]))
    assert (before.notify, before.new_list, before.new_count) == ([], [], 0)
