"""The like fold follows the author's choices: likes off, a muted thread, likes by e-mail."""

import pytest

from actions.comments import comment_create
from notifications import selectors
from notifications.mail.queue import MAIL_QUEUE_SHARDS
from notifications.models import MailQueue
from notifications.preferences.services import preferences_update, thread_mute, thread_unmute
from notifications.services import like_notifications_mark_read
from project.testing.harness import dynamodb_calls
from social.selectors import like_state
from tests.notifications.helpers import fold, like, post, uid, unlike

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fold_by_the_worker", "aws_read_lag")]


def texts(user) -> list[str]:
    return [item.text for item in selectors.notification_inbox(user_id=uid(user)).results]


def badge(user) -> int:
    return selectors.unread_count(user_id=uid(user))


def mails() -> list[MailQueue]:
    return [item for shard in range(MAIL_QUEUE_SHARDS) for item in MailQueue.query(str(shard), consistent_read=True)]


def test_likes_off_notify_nothing_from_then_on_and_counts_still_count(people):
    author, alice, bob = people["author"], people["alice"], people["bob"]
    comment = post(author)
    like(alice, comment)
    assert texts(author) == ["Alice liked your comment"]
    preferences_update(user_id=uid(author), patch={"kinds": {"like": {"inbox": False}}})
    like(bob, comment)
    assert like_state(comment_id=comment, user_id=uid(bob)) == (2, True)
    assert texts(author) == ["Alice liked your comment"] and badge(author) == 1
    unlike(alice, comment)  # a withdrawal still leaves the unread notification
    assert texts(author) == [] and badge(author) == 0
    preferences_update(user_id=uid(author), patch={"kinds": {"like": {"inbox": True}}})
    like(people["carol"], comment)  # on again: the next like notifies, Bob's stays untold
    assert texts(author) == ["Carol liked your comment"]


def test_a_muted_thread_sends_no_like_notifications(people):
    author, alice = people["author"], people["alice"]
    comment = post(author)
    thread_mute(user_id=uid(author), thread_id=comment)
    like(alice, comment)
    assert like_state(comment_id=comment, user_id=uid(alice)) == (1, True)
    assert texts(author) == [] and badge(author) == 0


def test_likes_by_email_schedule_one_mail_each_time_the_notification_turns_unread(people):
    author, alice, bob, carol = people["author"], people["alice"], people["bob"], people["carol"]
    comment = post(author)
    like(alice, comment)
    assert mails() == []  # e-mail is off by default
    preferences_update(user_id=uid(author), patch={"kinds": {"like": {"email": True}}})
    like_notifications_mark_read(user_id=uid(author), comment_ids=[comment])
    like(bob, comment)
    like(carol, comment)  # already unread: no second mail
    [mail] = mails()
    assert (mail.user_id, mail.kind, mail.entry_id) == (uid(author), "like", comment)
    assert mail.source.startswith(f"like:{comment}:")
    like_notifications_mark_read(user_id=uid(author), comment_ids=[comment])
    like(people["dave"], comment)
    assert len({m.source for m in mails()}) == 2


@pytest.fixture
def thread_reads():
    """The GetItems of a thread state the fold makes on their own (not with its batch read)."""
    from notifications.models import ThreadSubscription

    with dynamodb_calls() as made:
        yield lambda: [
            params["Key"]
            for operation, params in made
            if operation == "GetItem" and params["TableName"] == ThreadSubscription.Meta.table_name
        ]


def test_a_mute_of_a_reply_s_thread_is_read_with_the_fold_s_other_reads(people, thread_reads):
    """The like's event names the comment's thread (its root, for a reply): the fold reads the
    author's state in it in its one batch read, as it is when the fold runs, not when the like was."""
    author, alice, bob = people["author"], people["alice"], people["bob"]
    root = post(alice)
    reply = comment_create(author_id=uid(author), body="A reply", parent_id=root).comment_id
    like(bob, reply, folded=False)
    thread_mute(user_id=uid(author), thread_id=root)  # after the like, before its fold
    fold()
    assert texts(author) == [] and badge(author) == 0
    thread_unmute(user_id=uid(author), thread_id=root)
    like(people["carol"], reply)
    assert texts(author) == ["Carol liked your comment"]
    assert thread_reads() == []


def test_events_that_do_not_name_their_thread_read_the_mute_on_their_own(people, thread_reads, monkeypatch):
    from notifications.like_fold import reads

    real = reads.fold_reads
    monkeypatch.setattr(reads, "fold_reads", lambda **kwargs: real(**{**kwargs, "thread_id": None}))
    author, alice = people["author"], people["alice"]
    comment = post(author)
    thread_mute(user_id=uid(author), thread_id=comment)
    like(alice, comment)
    assert texts(author) == [] and len(thread_reads()) == 1
