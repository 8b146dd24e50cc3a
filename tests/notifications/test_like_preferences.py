"""The like fold follows the author's choices: likes off, a muted thread, likes by e-mail."""

import pytest

from notifications import selectors
from notifications.mail.queue import MAIL_QUEUE_SHARDS
from notifications.models import MailQueue
from notifications.preferences.services import preferences_update, thread_mute
from notifications.services import like_notifications_mark_read
from social.selectors import like_state
from tests.notifications.helpers import like, post, uid, unlike

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
