"""The like folder dies at any point (kill -9 between any two DynamoDB calls, or right after
a call reached DynamoDB but before its answer arrived), five times during a like storm; one
clean run afterwards leaves counts, notification and badge exact: nobody counted twice,
nobody lost."""

import random
import threading
from concurrent.futures import Future
from io import StringIO
from unittest import mock

import pytest
from django.core.management import call_command

from actions.likes import like_add, like_remove
from notifications import like_fold, selectors
from notifications.like_fold import batches as fold_batches
from notifications.models import LikeEvent, LikeNotified, LikeUnread
from project.dynamo import wire
from social.models import Like
from tests.notifications.helpers import post, table_badge, uid

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fold_by_the_worker", "aws_read_lag")]


class Killed(BaseException):
    """Not an Exception: nothing in the folder catches it, as nothing survives a kill -9."""


def _killed_after(calls: int, *, after_sending: bool):
    real = wire.make_api_call
    state = {"left": calls, "killed": False}

    def dying(self, operation_name, api_params):
        if state["left"] == 0:
            state["killed"] = True
            if after_sending:  # the write landed, its answer never did
                real(self, operation_name, api_params)
            raise Killed(operation_name)
        state["left"] -= 1
        return real(self, operation_name, api_params)

    return mock.patch.object(wire, "make_api_call", dying), state


def _storm(rng, likers, comment_id):
    for liker in rng.sample(likers, 8):
        if rng.random() < 0.6:
            like_add(comment_id=comment_id, user_id=liker)
        else:
            like_remove(comment_id=comment_id, user_id=liker)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_folder_killed_five_times_then_one_clean_run_leaves_everything_exact(people, seed):
    rng = random.Random(seed)
    author = people["author"]
    comment_id = post(author)
    likers = [str(1000 + n) for n in range(20)]
    kills = 0
    for round_number in range(5):
        _storm(rng, likers, comment_id)
        patcher, state = _killed_after(rng.randrange(0, 12), after_sending=round_number % 2 == 1)
        with patcher:
            try:
                like_fold.like_events_fold_until_idle()
            except Killed:
                pass
        kills += state["killed"]
    assert kills >= 3  # most rounds died before the folder finished

    like_fold.like_events_fold_until_idle()  # the clean run

    current = {row.user_id for row in Like.query(comment_id, consistent_read=True)}
    unread = LikeUnread.get(uid(author), comment_id, consistent_read=True)
    listed = list(unread.liker_ids)
    notified = {row.user_id for row in LikeNotified.query(comment_id, consistent_read=True)}
    # Everyone listed still likes it, once; every current liker was notified (listed now, or
    # listed and withdrawn before liking again within the window: then not a second time).
    assert len(set(listed)) == len(listed) and set(listed) <= current
    assert current <= notified and set(listed) <= notified
    assert int(unread.num_likes) == len(listed)
    assert sum(selectors.unread_count_sources(user_id=uid(author)).values()) == len(listed) == table_badge(uid(author))
    assert list(LikeEvent.query(comment_id, consistent_read=True)) == []
    assert like_add(comment_id=comment_id, user_id=likers[0]).like_count == len(current | {likers[0]})


def test_the_command_folds_what_is_pending_and_says_how_much(people):
    author = people["author"]
    comment_id = post(author)
    for liker in ("1001", "1002", "1003"):
        like_add(comment_id=comment_id, user_id=liker)
    out = StringIO()
    call_command("fold_like_events", stdout=out)
    assert out.getvalue().strip() == "Folded 3 like event(s)."
    assert int(LikeUnread.get(uid(author), comment_id, consistent_read=True).num_likes) == 3


def _killed_once_after(calls: int):
    """Like `_killed_after`, counted under a lock: the fold's batches make calls from several threads."""
    real = wire.make_api_call
    lock = threading.Lock()
    state = {"left": calls, "killed": False}

    def dying(self, operation_name, api_params):
        with lock:
            state["left"] -= 1
            dead = state["left"] < 0
            state["killed"] |= dead
        if dead:
            raise Killed(operation_name)
        return real(self, operation_name, api_params)

    return mock.patch.object(wire, "make_api_call", dying), state


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_overlapping_batches_killed_anywhere_count_every_overflow_like_once(people, settings, monkeypatch, seed):
    """A folder reads and commits a batch while the one before it finishes (its markers, badge,
    lines, delete). Overflow likes (the list is full) are kept from counting twice only by
    their markers: killed between any two calls, from any thread, nobody is counted twice."""
    settings.LIKE_NOTIFICATION_LIKERS_MAX = 2
    monkeypatch.setattr(fold_batches, "FOLD_EVENTS_MAX", 4)
    rng = random.Random(seed)
    author = people["author"]
    comment_id = post(author)
    likers = [str(2000 + n) for n in range(24)]
    kills = 0
    for _ in range(4):
        for liker in rng.sample(likers, 10):  # some like again: their second event changes nothing
            like_add(comment_id=comment_id, user_id=liker)
        patcher, state = _killed_once_after(rng.randrange(2, 20))
        with patcher:
            try:
                like_fold.like_events_fold(comment_id=comment_id)
            except Killed:
                pass
        kills += state["killed"]
    assert kills >= 3  # most rounds died before their batches were done

    like_fold.like_events_fold_until_idle()  # the clean run

    current = {row.user_id for row in Like.query(comment_id, consistent_read=True)}
    unread = LikeUnread.get(uid(author), comment_id, consistent_read=True)
    assert int(unread.num_likes) == len(current)  # each liker counted once, overflow likes included
    assert len(unread.liker_ids) == 2 and set(unread.liker_ids) <= current
    assert {row.user_id for row in LikeNotified.query(comment_id, consistent_read=True)} == current
    assert sum(selectors.unread_count_sources(user_id=uid(author)).values()) == len(current) == table_badge(uid(author))
    assert list(LikeEvent.query(comment_id, consistent_read=True)) == []


def test_a_batch_whose_markers_failed_is_completed_by_the_next_before_it_commits(people, settings, monkeypatch):
    """The batch before failed to write its markers (throttled, say) while the next one was read;
    the next one writes them before its own commit, so a folder that dies right after that
    commit leaves overflow likes that the clean run does not count again."""
    settings.LIKE_NOTIFICATION_LIKERS_MAX = 1
    monkeypatch.setattr(fold_batches, "FOLD_EVENTS_MAX", 4)
    author = people["author"]
    comment_id = post(author)
    likers = [str(3000 + n) for n in range(8)]
    for liker in likers:
        like_add(comment_id=comment_id, user_id=liker)

    real_markers, real_write = fold_batches.markers_put_async, fold_batches.notification_write
    calls = {"markers": 0, "commits": 0}

    def markers_failing_once(*args):
        calls["markers"] += 1
        if calls["markers"] > 1:
            return real_markers(*args)
        failed = Future()
        failed.set_exception(RuntimeError("throttled"))
        return [failed]

    def commit_then_die(fold, now):
        committed = real_write(fold, now)
        calls["commits"] += committed
        if calls["commits"] == 2:
            raise Killed("after the second batch's commit")
        return committed

    monkeypatch.setattr(fold_batches, "markers_put_async", markers_failing_once)
    monkeypatch.setattr(fold_batches, "notification_write", commit_then_die)
    with pytest.raises(Killed):
        like_fold.like_events_fold(comment_id=comment_id)
    monkeypatch.undo()

    like_fold.like_events_fold_until_idle()  # the clean run

    unread = LikeUnread.get(uid(author), comment_id, consistent_read=True)
    assert int(unread.num_likes) == len(likers)  # 7 overflow likes among them, each counted once
    assert sum(selectors.unread_count_sources(user_id=uid(author)).values()) == len(likers) == table_badge(uid(author))
