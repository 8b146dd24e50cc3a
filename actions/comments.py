"""Posting a comment: social's comment and, for a reply, the parent author's feed entry."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from notifications.feed.events import FeedEvent
from notifications.feed.services import FeedAppendResult, feed_append, feed_outbox_add
from project.limits import account_limit_enforce
from project.transactions import LabelledTransactWrite, transact
from social.models import Comment
from social.selectors import comment_thread_id
from social.services import comment_new, comment_put, comment_replied_mark

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReplyNotification:
    """The feed event telling a comment's author about a reply, written through an outbox.

    `add_outbox_to(transaction)` joins the reply's own transaction, so the reply and the
    promise to notify commit together; `send()` then applies the event and deletes the
    outbox item. If `send()` fails or the process dies before
    it, `process_feed_retries` applies the event later: the reply never fails for it.
    """

    user_id: str  # the parent comment's author
    event: FeedEvent

    def add_outbox_to(self, transaction: LabelledTransactWrite) -> None:
        feed_outbox_add(transaction, user_id=self.user_id, event=self.event)

    def send(self) -> FeedAppendResult | None:
        try:
            return feed_append(user_id=self.user_id, event=self.event, outbox=True)
        except Exception:  # the reply is already posted; the outbox item keeps the event
            logger.exception("reply notification %s left to process_feed_retries", self.event.event_id)
            return None


def feed_reply_notification(
    *, reply_id: str, replier_id: str, parent_id: str, parent_author_id: str, created_at: str
) -> ReplyNotification | None:
    """The notification for a reply to `parent_id`, or None for a reply to one's own comment."""
    if replier_id == parent_author_id:
        return None
    event = FeedEvent(
        event_id=f"reply:{reply_id}",
        kind="reply",
        actor_id=replier_id,
        rollup_key=f"reply#{parent_id}",
        object_id=reply_id,  # the entry shows the reply's text, read when the feed is shown
        created_at=created_at,
    )
    return ReplyNotification(user_id=parent_author_id, event=event)


def comment_create(*, author_id: str, body: str, parent_id: str | None = None) -> Comment:
    """Post a comment (or a reply to `parent_id`).

    Twice: two comments (each call mints its own id). Dies half way: at worst a
    day marker without comments, which the timeline skips. A reply and the feed
    notification of the parent's author commit together through the feed's outbox.
    Over the author's `comment` (or `reply`) limit: RateLimited, nothing written.
    """
    comment, parent = comment_new(author_id=author_id, body=body, parent_id=parent_id)
    if parent is not None:
        comment.thread_id = comment_thread_id(parent)
    account_limit_enforce(name="reply" if parent is not None else "comment", user_id=author_id)

    # A reply tells the parent's author through their feed (never the replier themself).
    notification = None
    if parent is not None:
        notification = feed_reply_notification(
            reply_id=comment.comment_id,
            replier_id=author_id,
            parent_id=parent.comment_id,
            parent_author_id=parent.author_id,
            created_at=comment.created_at,
        )

    def build(transaction: LabelledTransactWrite) -> None:
        comment_put(transaction, comment=comment)
        if notification:
            notification.add_outbox_to(transaction)

    transact(build, what="comment_create")
    logger.info("comment %s posted by user %s", comment.comment_id, author_id)
    if parent is not None:
        comment_replied_mark(parent=parent)  # never raises: a delete then asks the replies index
    if notification:
        notification.send()  # never raises: what it cannot do, process_feed_retries does
    return comment
