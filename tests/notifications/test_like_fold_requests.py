"""A like's own request folds its event once answered; the polling folder leaves such events to it
for REQUEST_FOLD_GRACE_SECONDS, so one like is not folded by two processes at once."""

from __future__ import annotations

import threading

import pytest

from actions.likes import like_add
from notifications import like_fold
from notifications.like_fold import batches as fold_batches
from notifications.like_fold import requests as fold_requests
from notifications.models import LikeEvent
from project.clock import ManualClock, clock_override
from project.testing.harness import in_threads

from .helpers import post, table_badge, uid, unread_item


@pytest.fixture
def folds_after_response(settings):
    settings.LIKE_FOLD_AFTER_RESPONSE = True


@pytest.fixture
def clock():
    with clock_override(ManualClock()) as manual:
        yield manual


def pending(comment_id: str) -> list[str]:
    return [event.event_id for event in LikeEvent.query(comment_id, consistent_read=True)]


def request_fold_fails(monkeypatch) -> None:
    """The request's own fold fails (its process is busy dying, DynamoDB answered an error): its event stays."""

    def failing(**kwargs) -> int:
        raise RuntimeError("the request's fold failed")

    monkeypatch.setattr(fold_batches, "fold_batch", failing)


def test_a_request_that_folds_its_like_marks_its_event_and_the_folder_leaves_it_for_a_while(
    people, folds_after_response, clock, monkeypatch
):
    comment_id = post(people["author"])
    real_fold_batch = fold_batches.fold_batch
    request_fold_fails(monkeypatch)
    like_add(comment_id=comment_id, user_id=uid(people["alice"]))
    [event] = LikeEvent.query(comment_id, consistent_read=True)
    assert event.request_folds is True

    assert like_fold.like_events_fold_pending(leave_to_requests=True) == 0  # its request's to fold
    assert pending(comment_id) == [event.event_id] and table_badge(uid(people["author"])) == 0

    monkeypatch.setattr(fold_batches, "fold_batch", real_fold_batch)
    clock.advance(like_fold.REQUEST_FOLD_GRACE_SECONDS + 0.1)  # the request never folded it
    assert like_fold.like_events_fold_pending(leave_to_requests=True) == 1
    assert pending(comment_id) == [] and table_badge(uid(people["author"])) == 1


def test_folding_until_idle_takes_a_request_s_fresh_event_at_once(people, folds_after_response, clock, monkeypatch):
    comment_id = post(people["author"])
    request_fold_fails(monkeypatch)
    like_add(comment_id=comment_id, user_id=uid(people["alice"]))
    monkeypatch.undo()
    assert like_fold.like_events_fold_until_idle() == 1  # the command without --loop, tests: everything
    assert table_badge(uid(people["author"])) == 1


def test_an_event_no_request_folds_is_folded_by_the_polling_folder_at_once(people, settings, clock):
    settings.LIKE_FOLD_AFTER_RESPONSE = False
    comment_id = post(people["author"])
    like_add(comment_id=comment_id, user_id=uid(people["alice"]))
    [event] = LikeEvent.query(comment_id, consistent_read=True)
    assert not event.request_folds
    assert like_fold.like_events_fold_pending(leave_to_requests=True) == 1
    assert table_badge(uid(people["author"])) == 1


def test_likes_of_a_hot_comment_are_left_to_the_folder_unmarked(people, make_user, folds_after_response, clock):
    comment_id = post(people["author"])
    likers = [make_user(f"fan{n}") for n in range(fold_requests.HOT_LIKES_PER_SECOND + 1)]
    for liker in likers:  # all within one second of the manual clock
        like_add(comment_id=comment_id, user_id=uid(liker))
    left = list(LikeEvent.query(comment_id, consistent_read=True))
    assert len(left) == 1 and not left[0].request_folds  # the one past the rate: not folded, not marked
    assert like_fold.like_events_fold_pending(leave_to_requests=True) == 1
    assert unread_item(people["author"], comment_id).num_likes == len(likers)


def test_a_like_while_its_process_folds_the_comment_is_taken_by_that_fold_going_round_again(
    people, folds_after_response, monkeypatch
):
    """Two requests of one process: the second finds the first folding its comment and starts no
    second fold; the first goes round once more when done and folds the second's event too."""
    comment_id = post(people["author"])
    real_fold_batch = fold_batches.fold_batch
    first_batch_done, go_on = threading.Event(), threading.Event()
    batches = []

    def fold_batch_then_hold(**kwargs) -> int:
        folded = real_fold_batch(**kwargs)
        batches.append(folded)
        if len(batches) == 1:
            first_batch_done.set()
            assert go_on.wait(60)
        return folded

    monkeypatch.setattr(fold_batches, "fold_batch", fold_batch_then_hold)

    def first_request() -> None:
        like_add(comment_id=comment_id, user_id=uid(people["alice"]))  # folds inline (no request here)

    def second_request() -> None:
        assert first_batch_done.wait(60)
        like_add(comment_id=comment_id, user_id=uid(people["bob"]))  # the comment is being folded: returns
        assert len(pending(comment_id)) == 1 and len(batches) == 1
        go_on.set()

    in_threads(lambda n: [first_request, second_request][n](), 2)
    assert batches == [1, 1]
    assert pending(comment_id) == []
    assert unread_item(people["author"], comment_id).num_likes == 2
