"""Helpers for the mail tests: people who opted in, a reply in their feed, its mail scheduled."""

from __future__ import annotations

from actions.comments import comment_create
from notifications.feed.selectors import feed_read
from notifications.mail.queue import mail_queue_put
from notifications.mail.selectors import mail_queue_due
from notifications.mail.services import MailStats, mail_process
from notifications.models import MailQueue
from notifications.preferences.services import preferences_update
from project.clock import clock
from project.dynamo.transactions import transact


def uid(user) -> str:
    return str(user.pk)


def verified(user, address: str | None = None):
    user.email = address or f"{user.username}@example.com"
    user.email_verified = True
    user.save(update_fields=["email", "email_verified"])
    return user


def email_on(user, *kinds: str) -> None:
    preferences_update(user_id=uid(user), patch={"kinds": {kind: {"email": True} for kind in kinds}})


def reply_to(author, replier, body: str = "A reply to you") -> tuple[str, str]:
    """A comment of `author` replied to by `replier`: (the parent's id, the reply's id)."""
    parent = comment_create(author_id=uid(author), body="A comment").comment_id
    reply = comment_create(author_id=uid(replier), body=body, parent_id=parent).comment_id
    return parent, reply


def newest_entry_id(user) -> str:
    return feed_read(user_id=uid(user)).entries[0].entry_id


def schedule(user, *, kind: str = "reply", source: str | None = None, entry_id: str | None = None, due_ms=None):
    """The mail about `user`'s newest feed entry, due now: the one the feed write scheduled when it
    did (the person had e-mail on), else one put here as the feed write puts it."""
    entry_id = entry_id or newest_entry_id(user)
    due = clock.now_ms() if due_ms is None else due_ms
    for item in MailQueue.scan(MailQueue.user_id == uid(user)):
        if item.entry_id == entry_id and source in (None, item.source):
            item.update(actions=[MailQueue.due_at.set(due)])
            return item.source
    source = source or f"test:{entry_id}"
    transact(
        lambda transaction: mail_queue_put(
            transaction,
            user_id=uid(user),
            kind=kind,
            source=source,
            entry_id=entry_id,
            due_ms=clock.now_ms() if due_ms is None else due_ms,
        ),
        what="test schedule",
    )
    return source


def send_due() -> MailStats:
    """One sender pass over what is due (what `mail_notifications` does)."""
    stats = MailStats()
    for item in mail_queue_due():
        stats.count(mail_process(item=item))
    return stats


def mailed() -> list:
    """What the mail worker has sent, after one more pass over what is due (mails leave through it)."""
    from django.core import mail

    send_due()
    return mail.outbox
