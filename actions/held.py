"""Staff's decisions on comments held for review (social.spam): approve publishes a comment as if
posted at that moment, with everything a comment causes; reject deletes it.

Approval is the post's own path, only later: one transaction shows the comment (its timeline,
replies and profile keys set, `created_at` the approval's moment, `mentioned_ids` the people its
mentions notify) and adds its fan-out promise to the outbox (notifications.outbox), so once it
commits its reply, mention and watcher notifications are surely delivered, by the request or by
`process_feed_retries`, exactly as for a comment published at once. The write is conditioned on
the comment still being held: twice, or racing another moderator's approval or rejection,
exactly one decision takes effect; the other finds it decided and changes nothing. Each call is
a line of the moderation audit log (written `pending` first: a process dying in between leaves
it so). Dies after the commit and before the queue row is deleted: the queue drops the row.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from django.utils.translation import gettext

from actions.comments import comment_fanout, fanout_after_response
from notifications.outbox import outbox_add
from project.clock import clock
from project.dynamo.transactions import LabelledTransactWrite, transact
from project.errors import NotFound
from social.mentions import mentions_to_notify
from social.models import Comment
from social.moderation.staff_services import staff_audited
from social.selectors import comment_find
from social.services import comment_replied_mark, comment_visibility_actions
from social.spam.held import held_comment_delete, held_rows_drop
from social.spam.held_selectors import HELD, comment_is_held

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
    from pynamodb.expressions.update import Action

logger = logging.getLogger(__name__)


@contextmanager
def _decision(
    *, action: str, comment_id: str, staff: AbstractBaseUser | AnonymousUser, source: str
) -> Iterator[Comment]:
    """One staff decision on a held comment, a line of the audit log around it: the comment as
    read now; NotFound (its queue row dropped) when there is no such comment."""
    with staff_audited(
        staff=staff, action=action, target_type="comment", target_id=comment_id, detail="", source=source
    ):
        comment = comment_find(comment_id=comment_id)
        if comment is None:
            held_rows_drop([comment_id])
            raise NotFound(gettext("No such comment."))
        yield comment


def held_approve(*, comment_id: str, staff: AbstractBaseUser | AnonymousUser, source: str = "admin") -> bool:
    """Publish a held comment (see the module's docstring). True when this call published it;
    False when it was no longer held (decided already). NotFound for an unknown comment."""
    with _decision(action="approve", comment_id=comment_id, staff=staff, source=source) as comment:
        if not comment_is_held(comment):
            held_rows_drop([comment_id])
            return False
        parent = comment_find(comment_id=comment.parent_id) if comment.parent_id else None
        now = clock.now_iso()
        comment.created_at = now
        comment.sort_key = f"{now}#{comment_id}"
        mention_ids = mentions_to_notify(author_id=comment.author_id, body=comment.body)
        fanout = comment_fanout(comment=comment, parent=parent, mention_ids=mention_ids)
        actions: list[Action] = [
            Comment.created_at.set(now),
            Comment.sort_key.set(comment.sort_key),
            *comment_visibility_actions(comment=comment, hidden=False),
        ]
        if mention_ids:
            actions.append(Comment.mentioned_ids.set(set(mention_ids)))
        still_held = (Comment.hidden == True) & (Comment.hidden_by == HELD) & Comment.deleted_at.does_not_exist()  # noqa: E712

        def build(transaction: LabelledTransactWrite) -> None:
            transaction.update(Comment(comment_id), actions=actions, condition=still_held, label="comment")
            if fanout is not None:
                outbox_add(transaction, job=fanout)

        outcome = transact(build, what="held_approve")
        held_rows_drop([comment_id])
        if not outcome.ok:
            return False  # decided by someone else meanwhile
    logger.info("held comment %s approved by %s", comment_id, getattr(staff, "username", ""))
    if parent is not None:
        comment_replied_mark(parent=parent)
    if fanout is not None:
        fanout_after_response(fanout)
    return True


def held_reject(*, comment_id: str, staff: AbstractBaseUser | AnonymousUser, source: str = "admin") -> bool:
    """Delete a held comment: nobody but its author and staff ever saw it, and it caused nothing
    to retract. True when this call deleted it; False when it was not held (an approved one is
    left as it is: Conflict when the approval landed during this call). NotFound when unknown."""
    with _decision(action="reject", comment_id=comment_id, staff=staff, source=source) as comment:
        return held_comment_delete(comment=comment)
