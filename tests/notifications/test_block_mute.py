"""Blocking and muting people, seen from the owner's inbox: likes retracted on the next fold
(counts unchanged), reply, mention and watched-thread entries retracted and never written again,
no e-mail, unblock restoring only what comes next, a block racing a fold and a reply, and a
crash between the block and its retraction."""

from __future__ import annotations

import pytest
from django.core import mail

import actions.relations
import notifications.feed.services as feed_services
import notifications.like_fold as like_fold
import notifications.silence as silence_module
from actions.comments import comment_create
from actions.relations import relation_change
from notifications.feed.selectors import feed_entries_list, feed_read
from notifications.feed.services import feed_mark_read, feed_retries_process
from notifications.like_fold import batches as fold_batches
from notifications.models import FeedRetry, LikeEvent
from notifications.preferences.services import thread_watch
from notifications.selectors import notification_inbox, unread_count
from notifications.silence import Silence, silence_apply
from project.clock import clock
from social.counters import LIKES, counter_key, counter_value
from tests.notifications.helpers import fold, like, post, uid, unread_item
from tests.notifications.mail_helpers import email_on, schedule, send_due, verified

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fold_by_the_worker")]


def block(owner, other, on=True):
    return relation_change(owner_id=uid(owner), username=other.username, kind="block", on=on).state


def mute(owner, other, on=True):
    return relation_change(owner_id=uid(owner), username=other.username, kind="mute", on=on).state


def reply(author, parent_id, body="A reply"):
    return comment_create(author_id=uid(author), body=body, parent_id=parent_id).comment_id


def like_texts(user) -> list[str]:
    return [n.text for n in notification_inbox(user_id=uid(user)).results if n.kind == "like"]


def feed_texts(user) -> list[str]:
    return [entry.text for entry in feed_entries_list(user_id=uid(user)).results]


def likes(comment_id) -> int:
    return counter_value(key=counter_key(kind=LIKES, object_id=comment_id))


def drain_later() -> None:
    """What `process_feed_retries` does once the request's items are due."""
    feed_retries_process(now_ms=clock.now_ms() + 120_000)


def test_a_block_retracts_the_liker_on_the_next_fold_and_the_counts_stay(people):
    author, alice, bob = people["author"], people["alice"], people["bob"]
    comment = post(author)
    like(alice, comment)
    like(bob, comment)
    assert like_texts(author) == ["Alice and Bob liked your comment"]

    assert block(author, bob).blocked
    # The block wrote a trigger for the comment and folded it at once: no new like needed.
    assert like_texts(author) == ["Alice liked your comment"]
    assert unread_count(user_id=uid(author)) == 1
    assert likes(comment) == 2  # the like still counts
    assert list(LikeEvent.query(comment, consistent_read=True)) == []

    like(people["carol"], comment)  # a later fold changes nothing for Bob
    assert like_texts(author) == ["Alice and Carol liked your comment"]
    assert likes(comment) == 3


def test_a_blocked_or_muted_persons_new_likes_never_notify_but_count(people):
    author, bob, carol = people["author"], people["bob"], people["carol"]
    block(author, bob)
    mute(author, carol)
    comment = post(author)
    like(bob, comment)
    like(carol, comment)
    assert like_texts(author) == [] and unread_count(user_id=uid(author)) == 0
    assert likes(comment) == 2


def test_reply_mention_and_thread_entries_are_retracted_and_never_written_again(people):
    author, bob, carol, dave = people["author"], people["bob"], people["carol"], people["dave"]
    mine = post(author, "My comment")
    reply(bob, mine)
    reply(carol, mine)
    post(bob, "Hello @author")
    theirs = post(dave, "Dave's thread")
    thread_watch(user_id=uid(author), thread_id=theirs)
    reply(bob, theirs)
    assert sorted(feed_texts(author)) == [
        "Bob mentioned you",
        "Bob replied in a thread you watch",
        "Carol and Bob replied to your comment",
    ]
    assert unread_count(user_id=uid(author)) == 3

    block(author, bob)
    assert feed_texts(author) == ["Carol replied to your comment"]
    assert unread_count(user_id=uid(author)) == 1
    assert uid(bob) in feed_read(user_id=uid(author)).silenced
    # Applied again (the drainer after a request that did it): nothing changes.
    version = feed_read(user_id=uid(author)).version
    silence_apply(Silence(owner_id=uid(author), other_id=uid(bob)))
    assert feed_read(user_id=uid(author)).version == version

    post(bob, "Still there, @author?")  # the mention does nothing
    reply(bob, theirs)  # nor the watched thread's reply
    assert feed_texts(author) == ["Carol replied to your comment"]
    assert feed_texts(dave) == ["Bob replied to your comment"]  # Dave hears of both, rolled up


def test_the_blocked_person_cannot_reply_and_sees_nothing_else(people):
    author, bob = people["author"], people["bob"]
    mine = post(author)
    block(author, bob)
    with pytest.raises(Exception) as refused:
        reply(bob, mine)
    assert getattr(refused.value, "status_code", None) == 403
    # Their own comments, and the author's replies to them, go on as before.
    theirs = post(bob, "Bob's comment")
    reply(author, theirs)
    assert feed_texts(bob) == ["Author replied to your comment"]


def test_mute_hides_without_refusing_and_read_history_leaves_the_inbox(people):
    author, bob = people["author"], people["bob"]
    mine = post(author)
    reply(bob, mine)
    feed_mark_read(user_id=uid(author))  # read: history
    assert [n.text for n in notification_inbox(user_id=uid(author)).results] == ["Bob replied to your comment"]

    mute(author, bob)
    reply(bob, mine)  # no 403: Bob is not told
    assert notification_inbox(user_id=uid(author)).results == []
    assert feed_entries_list(user_id=uid(author)).results == []
    assert unread_count(user_id=uid(author)) == 0


def test_no_mail_goes_about_a_blocked_person(people, settings):
    settings.SITE_URL = "https://social.example"
    author, bob = verified(people["author"]), people["bob"]
    email_on(author, "reply")
    mine = post(author)
    reply(bob, mine)
    schedule(author)
    block(author, bob)
    stats = send_due()
    assert stats.get("skipped") == 1 and mail.outbox == []


def test_unblock_restores_what_comes_next_not_what_was_retracted(people):
    author, alice, bob = people["author"], people["alice"], people["bob"]
    mine = post(author)
    like(bob, mine)
    reply(bob, mine)
    block(author, bob)
    assert like_texts(author) == [] and feed_texts(author) == []

    state = block(author, bob, on=False)
    assert not state.blocked and not state.muted
    assert uid(bob) not in (feed_read(user_id=uid(author)).silenced or set())
    assert like_texts(author) == [] and feed_texts(author) == []  # nothing retracted comes back
    reply(bob, mine, "Sorry")
    other = post(author, "Another")
    like(bob, other)
    like(alice, mine)
    assert feed_texts(author) == ["Bob replied to your comment"]
    assert sorted(like_texts(author)) == ["Alice liked your comment", "Bob liked your comment"]


def test_unblock_keeps_a_mute_and_unmute_keeps_a_block(people):
    author, bob = people["author"], people["bob"]
    mute(author, bob)
    block(author, bob)
    state = block(author, bob, on=False)
    assert (state.blocked, state.muted) == (False, True)
    block(author, bob)
    state = mute(author, bob, on=False)
    assert (state.blocked, state.muted) == (True, False)
    assert uid(bob) in feed_read(user_id=uid(author)).silenced


def test_a_block_racing_a_fold_that_read_before_it_still_retracts(people, monkeypatch):
    """The fold read the (empty) block list, the block and its retraction ran (finding no unread
    notification listing Bob yet), then the fold committed Bob: its after-commit read sees the block."""
    author, bob = people["author"], people["bob"]
    comment = post(author)
    like(bob, comment, folded=False)
    real_write = fold_batches.notification_write
    blocked: list[bool] = []

    def block_then_write(fold_state, now):
        if not blocked:
            blocked.append(block(author, bob).blocked)
        return real_write(fold_state, now)

    monkeypatch.setattr(fold_batches, "notification_write", block_then_write)
    fold()
    assert blocked == [True]
    assert like_texts(author) == [] and unread_count(user_id=uid(author)) == 0
    assert not unread_item(author, comment).liker_ids
    assert likes(comment) == 1


def test_without_the_after_commit_read_that_race_would_keep_the_blocked_liker(people, monkeypatch):
    author, bob = people["author"], people["bob"]
    comment = post(author)
    like(bob, comment, folded=False)
    real_write = fold_batches.notification_write
    monkeypatch.setattr(fold_batches, "_silenced_since_read", lambda fold_state: None)

    def block_then_write(fold_state, now):
        monkeypatch.setattr(fold_batches, "notification_write", real_write)
        block(author, bob)
        return real_write(fold_state, now)

    monkeypatch.setattr(fold_batches, "notification_write", block_then_write)
    fold()
    # What the after-commit read prevents (the inbox's display filter would still hide it).
    assert unread_item(author, comment).liker_ids == [uid(bob)]
    assert unread_count(user_id=uid(author)) == 1


def test_a_reply_racing_a_block_is_refused_by_the_feed_merge(people, monkeypatch):
    """The reply's feed write read the feed before the block's feed write: its version condition
    fails, it reads again and the merge refuses Bob's event."""
    author, bob = people["author"], people["bob"]
    mine = post(author)
    real_prepare = feed_services.feed_write_prepare

    def prepare_then_block(*, user_id, event):
        write = real_prepare(user_id=user_id, event=event)
        if user_id == uid(author) and event.actor_id == uid(bob) and not getattr(prepare_then_block, "done", False):
            prepare_then_block.done = True
            block(author, bob)
        return write

    monkeypatch.setattr(feed_services, "feed_write_prepare", prepare_then_block)
    # Bob's reply commits before the block (the reply path's check passed), its fan-out races it.
    reply(bob, mine)
    assert prepare_then_block.done
    assert feed_texts(author) == [] and unread_count(user_id=uid(author)) == 0


def test_a_crash_between_the_block_and_its_retraction_is_finished_by_the_drainer(people, monkeypatch):
    """The block and its retraction item commit in one transaction; the request dies before
    applying it: `process_feed_retries` applies it once due, and the folder folds the trigger."""
    author, alice, bob = people["author"], people["alice"], people["bob"]
    comment = post(author)
    like(alice, comment)
    like(bob, comment)
    reply(bob, comment)

    def die(silence):
        raise SystemExit("killed after the commit")

    monkeypatch.setattr(actions.relations, "outbox_send", die)
    with pytest.raises(SystemExit):
        block(author, bob)
    assert like_texts(author) == ["Alice and Bob liked your comment"]
    assert feed_texts(author) == ["Bob replied to your comment"]
    assert [item.retry_id for item in FeedRetry.scan()] == [f"silence#{uid(author)}#{uid(bob)}"]

    drain_later()
    fold()
    assert like_texts(author) == ["Alice liked your comment"]
    assert feed_texts(author) == []
    assert list(FeedRetry.scan()) == []
    assert likes(comment) == 2


def test_a_retraction_failing_half_way_stays_queued_and_completes(people, monkeypatch):
    author, bob = people["author"], people["bob"]
    comment = post(author)
    like(bob, comment)
    real_put = like_fold.like_event_put

    def fails(**kwargs):
        raise RuntimeError("DynamoDB unreachable")

    monkeypatch.setattr(silence_module, "like_event_put", fails)
    block(author, bob)  # the feed step done, the like trigger failed: the item stays
    assert unread_item(author, comment).liker_ids == [uid(bob)]
    assert like_texts(author) == []  # the inbox already leaves it out (it names only Bob)
    assert len(list(FeedRetry.scan())) == 1

    monkeypatch.setattr(silence_module, "like_event_put", real_put)
    drain_later()
    fold()
    assert not unread_item(author, comment).liker_ids and list(FeedRetry.scan()) == []
    assert unread_count(user_id=uid(author)) == 0
