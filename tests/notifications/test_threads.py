"""Thread mute and watch: one state per person and thread, and what runs twice or races."""

from __future__ import annotations

from notifications.models import ThreadSubscription
from notifications.preferences.selectors import thread_state, thread_states, thread_subscriptions_of
from notifications.preferences.services import (
    thread_mute,
    thread_unmute,
    thread_unwatch,
    thread_watch,
    thread_watch_if_unset,
)


def test_mute_and_watch_are_one_state():
    assert thread_state(thread_id="t", user_id="1") is None
    assert thread_watch(user_id="1", thread_id="t") == "watch"
    assert thread_mute(user_id="1", thread_id="t") == "mute"  # muting replaces the watch
    assert thread_state(thread_id="t", user_id="1") == "mute"
    assert thread_watch(user_id="1", thread_id="t") == "watch"  # watching unmutes
    assert ThreadSubscription.count("t") == 1


def test_undo_only_undoes_its_own_state():
    thread_watch(user_id="1", thread_id="t")
    assert thread_unmute(user_id="1", thread_id="t") == "watch"  # an unmute does not remove a watch
    assert thread_unwatch(user_id="1", thread_id="t") is None
    assert thread_unwatch(user_id="1", thread_id="t") is None  # twice: nothing to undo, no error
    thread_mute(user_id="1", thread_id="t")
    assert thread_unwatch(user_id="1", thread_id="t") == "mute"
    assert thread_unmute(user_id="1", thread_id="t") is None
    assert thread_state(thread_id="t", user_id="1") is None


def test_a_reply_watches_unless_muted_or_set():
    thread_mute(user_id="1", thread_id="t")
    thread_watch_if_unset(user_id="1", thread_id="t")
    thread_watch_if_unset(user_id="2", thread_id="t")
    thread_watch_if_unset(user_id="2", thread_id="t")  # twice: one item

    assert thread_states(thread_id="t") == {"1": "mute", "2": "watch"}


def test_a_person_lists_their_threads_newest_change_first():
    thread_mute(user_id="1", thread_id="a")
    thread_watch(user_id="1", thread_id="b")
    thread_watch(user_id="2", thread_id="c")

    listed = [(view.thread_id, view.state) for view in thread_subscriptions_of(user_id="1")]
    assert sorted(listed) == [("a", "mute"), ("b", "watch")]
    thread_unmute(user_id="1", thread_id="a")
    assert [view.thread_id for view in thread_subscriptions_of(user_id="1")] == ["b"]
