"""Posting a comment: social's comment and, for a reply, the parent author's feed entry."""

from __future__ import annotations

import logging

from pynamodb.transactions import TransactWrite

from notifications.feed import feed_reply_notification
from project.transactions import transact
from social.models import Comment
from social.services import comment_new, comment_put

logger = logging.getLogger(__name__)


def comment_create(*, author_id: str, body: str, parent_id: str | None = None) -> Comment:
    """Post a comment (or a reply to `parent_id`).

    Twice: two comments (each call mints its own id). Dies half way: at worst a
    day marker without comments, which the timeline skips. A reply and the feed
    notification of the parent's author commit together through the feed's outbox.
    """
    comment, parent = comment_new(author_id=author_id, body=body, parent_id=parent_id)

    # A reply tells the parent's author through their feed (never the replier themself).
    notification = None
    if parent is not None:
        notification = feed_reply_notification(
            reply_id=comment.comment_id,
            replier_id=author_id,
            parent_id=parent.comment_id,
            parent_author_id=parent.author_id,
            body=comment.body,
            created_at=comment.created_at,
        )

    def build(transaction: TransactWrite) -> None:
        comment_put(transaction, comment=comment)
        if notification:
            notification.add_outbox_to(transaction)

    transact(build, what="comment_create")
    logger.info("comment %s posted by user %s", comment.comment_id, author_id)
    if notification:
        notification.send()  # never raises: what it cannot do, process_feed_retries does
    return comment
