"""React and take back: social's reaction row and counter, notifications' event, one transaction.

A reaction is folded as a like is (notifications/like_fold/), under the subject
`reaction#<comment id>` (notifications/subjects.py): the fold gives the author one notification
per comment while unread ("Alice and 3 others reacted to your comment"), takes a person out of
it when they withdraw their last reaction there, follows the author's `reaction` preferences,
blocks and mutes, and raises the reaction counter's due flag (the ranking). Since the event is
in the reaction's transaction, a process that dies after the answer leaves it to the folder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings

from notifications import like_fold
from notifications.models import LikeEvent, LikeNotified
from notifications.subjects import reaction_subject
from project.errors import NotFound
from project.serving.after_response import after_response
from social.models import Comment, Reaction
from social.reactions.names import reactor_key
from social.reactions.selectors import Reactions
from social.reactions.services import reaction_write, reactions_after_add, reactions_after_remove
from social.selectors import comment_thread_id

if TYPE_CHECKING:
    from project.dynamo.transactions import LabelledTransactWrite

# Event kinds: a person's reaction or undo (no activity-log line: notifications/like_fold/batches.py).
REACT = "react"
UNREACT = "unreact"


def _reaction(*, comment_id: str, user_id: str, name: str, adding: bool, erasing: bool = False) -> bool:
    """Write the reaction (or undo) with its event and have it folded; returns whether it wrote.

    Folded once answered by this request (one attempt, never on a hot comment, nor after the
    transaction met contention: the folder takes those many at a time), by the eraser at once,
    and otherwise by `fold_like_events` within its poll.
    """
    subject = reaction_subject(comment_id)
    folds_here = erasing or (settings.LIKE_FOLD_AFTER_RESPONSE and like_fold.request_folds_claim(comment_id=subject))
    events: list[LikeEvent] = []  # each attempt's; the last one's was written if the transaction was

    def event(transaction: LabelledTransactWrite, comment: Comment, contended: bool) -> None:
        events.append(
            like_fold.like_event_add(
                transaction,
                author_id=comment.author_id,
                comment_id=subject,
                liker_id=user_id,
                kind=REACT if adding else UNREACT,
                request_folds=folds_here and not contended,
                thread_id=comment_thread_id(comment),
            )
        )

    written = reaction_write(
        comment_id=comment_id, user_id=user_id, name=name, adding=adding, event=event, erasing=erasing
    )
    if erasing:
        like_fold.like_events_fold(comment_id=subject)
    elif written.ok and folds_here and not written.contended:

        def fold() -> None:
            like_fold.like_events_fold_after_response(event=events[-1])

        if not after_response(fold):
            fold()
    return written.ok


def reaction_add(*, comment_id: str, user_id: str, name: str) -> Reactions:
    """React to a comment with `name`: one 3-action TransactWriteItems (row, counter shard,
    event), no read of the row first.

    The row (`<user id>#<name>` under the comment) is put on condition it is absent, so a
    second reaction of the same name, or a concurrent twin, cancels the transaction and changes
    nothing: idempotent, one of each reaction per person. A crash cannot leave a row without its
    count or its event: all are in the transaction. Dies after the commit: the count is exact,
    and the event waits in `like_events` for the folder, which notifies the author and raises
    the ranking's due flag. Answers the comment's reactions read exactly right after
    (`reactions_after_add`).
    """
    _reaction(comment_id=comment_id, user_id=user_id, name=name, adding=True)
    return reactions_after_add(comment_id=comment_id, user_id=user_id, name=name)


def reaction_remove(*, comment_id: str, user_id: str, name: str) -> Reactions:
    """Take back one's reaction `name`: the row deleted on condition it exists, 1 subtracted and the
    undo's event, atomically. Twice (or concurrently) the condition fails the second and nothing
    changes, so a count never drops twice for one reaction. Folded, the event takes the person
    out of the author's unread notification once they have no reaction left on the comment
    (the last one withdrawn: the notification goes). Answers the reactions read exactly right after."""
    _reaction(comment_id=comment_id, user_id=user_id, name=name, adding=False)
    return reactions_after_remove(comment_id=comment_id, user_id=user_id, name=name)


def reaction_erase(*, comment_id: str, user_id: str, name: str) -> None:
    """A deleted account's reaction undone as its own undo would be, on any comment (hidden or
    deleted too), outside the budget, folded at once (the author's unread notification loses
    them), and its notified marker deleted. Twice: the row is gone and nothing changes again.
    A comment with no item at all: the row alone is deleted."""
    try:
        _reaction(comment_id=comment_id, user_id=user_id, name=name, adding=False, erasing=True)
    except NotFound:
        Reaction(comment_id, reactor_key(user_id=user_id, name=name)).delete()
    LikeNotified(reaction_subject(comment_id), user_id).delete()
