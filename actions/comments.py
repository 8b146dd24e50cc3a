"""Posting and editing a comment: social's comment and who hears of it (notifications.fanout).

A reply tells its parent's author ("Bob replied to your comment"), the people it @mentions
("Bob mentioned you") and the thread's watchers ("Bob replied in a thread you watch"), one
entry per person; a top-level comment or an edit tells the people it newly mentions. The
promise to tell them is one `feed_retry` item in the comment's own transaction, however many
people it reaches, expanded right after the commit and, whatever the request did not finish,
by `process_feed_retries`: the comment never fails for its notifications, and none is lost
if the process dies once the comment committed.
"""

from __future__ import annotations

import logging

from django.utils.translation import gettext, gettext_lazy

from notifications.fanout import FanOut
from notifications.outbox import outbox_add, outbox_send
from project.clock import clock
from project.dynamo.transactions import LabelledTransactWrite, transact
from project.errors import ApplicationError, PermissionDenied
from project.serving.after_response import after_response
from social import services as social_services
from social.account.limits import account_limit_enforce
from social.edit_history import EditExtras
from social.mentions import mention_names, mentions_to_notify
from social.models import Comment
from social.moderation.services import comment_flag
from social.relations.selectors import blocked_by
from social.selectors import comment_thread_id
from social.services import comment_new, comment_put, comment_replied_mark
from social.spam.held import comment_hold_prepare, screen_audit
from social.spam.screen import BLOCK, HOLD, author_record, comment_screen

logger = logging.getLogger(__name__)

REPLY_BLOCKED = gettext_lazy("You can't reply to this comment: its author has blocked you.")


def comment_fanout(*, comment: Comment, parent: Comment | None, mention_ids: list[str]) -> FanOut | None:
    """What posting `comment` promises to notify; None for a top-level comment mentioning nobody."""
    if parent is None and not mention_ids:
        return None
    return FanOut(
        comment_id=comment.comment_id,
        actor_id=comment.author_id,
        thread_id=comment_thread_id(comment),
        created_at=comment.created_at,
        parent_id=parent.comment_id if parent else None,
        parent_author_id=parent.author_id if parent else None,
        mention_ids=mention_ids,
        watchers=parent is not None,
    )


def comment_create(*, author_id: str, body: str, parent_id: str | None = None) -> Comment:
    """Post a comment (or a reply to `parent_id`).

    Twice: two comments (each call mints its own id). Dies half way: at worst a day marker
    without comments, which the timeline skips; once the comment committed, its fan-out item
    makes `process_feed_retries` notify whoever the request did not (notifications.fanout).
    Over the author's `comment` (or `reply`) limit: RateLimited, nothing written. A reply to a
    comment whose author blocked the replier: PermissionDenied (403), nothing written.

    Before it is stored the comment passes the spam screen (social.spam.screen): blocked, a 400
    on `body` naming why and nothing stored but the audit line; held, it is stored for its author
    and staff only (its queue row first), with no mention, fan-out, reply mark or feed entry,
    until staff approve it (actions.held, which then does all of that); flagged, it is published
    and then reported by the system (a report that never counts toward a hide). Dies between the
    held comment's row and its item: a row the staff queue drops.
    """
    comment, parent = comment_new(author_id=author_id, body=body, parent_id=parent_id)
    if (
        parent is not None
        and parent.author_id != author_id
        and blocked_by(owner_id=parent.author_id, other_id=author_id)
    ):
        raise PermissionDenied(REPLY_BLOCKED)  # one GetItem, before anything is written or counted
    account_limit_enforce(name="reply" if parent is not None else "comment", user_id=author_id)
    if parent is not None:
        comment.thread_id = comment_thread_id(parent)
    verdict = comment_screen(comment=comment, author=author_record(author_id))
    screen_audit(comment_id=comment.comment_id, author_id=author_id, verdict=verdict)
    if verdict.decision == BLOCK:
        raise ApplicationError(
            gettext("This comment can't be posted: it %(reason)s.") % {"reason": verdict.reason}, field="body"
        )
    comment.body = verdict.body
    fanout = None
    if verdict.decision == HOLD:
        # Seen by its author and staff only; it notifies nobody until staff approve it (actions.held).
        comment_hold_prepare(comment=comment, verdict=verdict)
    else:
        mention_ids = mentions_to_notify(author_id=author_id, body=comment.body)
        if mention_ids:
            comment.mentioned_ids = set(mention_ids)
        fanout = comment_fanout(comment=comment, parent=parent, mention_ids=mention_ids)

    def build(transaction: LabelledTransactWrite) -> None:
        comment_put(transaction, comment=comment)
        if fanout is not None:
            outbox_add(transaction, job=fanout)

    transact(build, what="comment_create")
    logger.info("comment %s %s by user %s", comment.comment_id, verdict.decision, author_id)
    if verdict.decision == HOLD:
        return comment
    if parent is not None:
        comment_replied_mark(parent=parent)  # never raises: a delete then asks the replies index
    if fanout is not None:
        fanout_after_response(fanout)
    for word in verdict.flagged[:1]:  # one system report per comment, naming the first word
        comment_flag(comment_id=comment.comment_id, note=f"watched word “{word}”")
    return comment


def fanout_after_response(fanout: FanOut) -> None:
    """Tell the people a comment concerns once its answer is sent (outside a request, at
    once): the person who posted is not kept waiting for other people's feed writes.
    `outbox_send` never raises; what it does not do (a process that dies first, people past
    its budget) `process_feed_retries` does from the fan-out item the comment committed."""

    def send() -> None:
        outbox_send(fanout)

    if not after_response(send):
        send()


def comment_edit(*, comment_id: str, author_id: str, body: str) -> Comment:
    """Edit the author's own comment (social.services.comment_edit); people its new body
    @mentions who were not mentioned before are notified, as a new comment's are.

    The mentioned ids join the comment's `mentioned_ids` and the fan-out item joins the feed
    retry table in the edit's own transaction, which is conditioned on the comment's version
    the mentions were counted against: of two edits at once, the second re-reads what the
    first notified and counts the budget left after it, so a comment's @mentions never notify
    more than its budget, however many edits race; each person at most once and, once
    committed, surely (the drainer finishes what the request does not). A body without "@"
    reads nothing more.
    """
    names = bool(mention_names(body))
    planned: list[FanOut] = []

    def extras(current: Comment) -> EditExtras:
        planned.clear()
        if not names:
            return (), None
        already = set(current.mentioned_ids or ())
        mention_ids = mentions_to_notify(author_id=author_id, body=body, already=already)
        if not mention_ids:
            return (), None
        fanout = FanOut(
            comment_id=comment_id,
            actor_id=author_id,
            thread_id=comment_thread_id(current),
            created_at=clock.now_iso(),
            mention_ids=mention_ids,
            key=f"edit{clock.now_ns()}",
        )
        planned.append(fanout)
        return mention_ids, lambda transaction: outbox_add(transaction, job=fanout)

    edited = social_services.comment_edit(comment_id=comment_id, author_id=author_id, body=body, extras=extras)
    for fanout in planned:  # the one the committed attempt carried
        fanout_after_response(fanout)
    return edited
