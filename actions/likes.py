"""Like and unlike: social's like row and counter, notifications' like event, one transaction."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.utils.translation import gettext
from pynamodb.transactions import TransactWrite

from notifications import like_fold
from notifications.models import LikeEvent
from project.errors import NotFound
from project.serving.after_response import after_response
from project.serving.pools import READS, pool
from social.account.limits import account_limit_prepare
from social.counter_writes import counter_transact
from social.counters import (
    LIKES,
    counter_add,
    counter_key,
    counter_value,
    like_counter_shard_count,
)
from social.models import Comment, Like
from social.selectors import comment_find, comment_thread_id
from social.services import comment_get_visible


@dataclass(frozen=True)
class LikeState:
    like_count: int
    liked: bool


def _like_transaction(
    transaction: TransactWrite, *, comment: Comment, user_id: str, key: str, kind: str, shard: int, request_folds: bool
) -> LikeEvent:
    """The one place the like (or unlike) transaction is built.

    Only items no other liker of the comment writes at the same moment: the person's
    like row, one counter shard (the counter grows its shards when they collide), and
    the event under its own key, which the fold turns into the author's notification,
    badge, the counter's due flag and the liker's activity-log line (notifications/like_fold/).
    No condition check on the comment item: every like of a comment would hold it (on AWS,
    a transaction conflict); the comment is read before, and the fold drops likes on a
    comment hidden meanwhile. Three actions under 1 KB each: 6 write capacity units.
    """
    if kind == like_fold.LIKE:
        transaction.save(Like(comment.comment_id, user_id), condition=Like.user_id.does_not_exist())
    else:
        transaction.delete(Like(comment.comment_id, user_id), condition=Like.user_id.exists())
    counter_add(transaction, key=key, delta=1 if kind == like_fold.LIKE else -1, shard=shard, flag=False)
    return like_fold.like_event_add(
        transaction,
        author_id=comment.author_id,
        comment_id=comment.comment_id,
        liker_id=user_id,
        kind=kind,
        request_folds=request_folds,
        thread_id=comment_thread_id(comment),
    )


def _like_write(*, comment_id: str, user_id: str, kind: str, erasing: bool = False) -> int:
    """Run the like/unlike transaction; returns the counter's exact value read right after it.

    Three round trips and no other read: the comment (consistently, which also carries its
    like counter's shard count), the transaction, the count. With write limits on, the
    person's like budget is counted (one conditional write) at the same time as the comment
    is read, not after it: a like over the budget, on any comment, is refused with nothing
    written, and a like within it waits for no extra round trip.
    """
    key = counter_key(kind=LIKES, object_id=comment_id)
    if erasing:  # a deleted account's likes: any comment, hidden or deleted too; no budget
        found = comment_find(comment_id=comment_id)
        if found is None:
            raise NotFound(gettext("No such comment."))
        comment = found
    else:
        count_against_budget = account_limit_prepare(name="like", user_id=user_id)  # likes and unlikes share one
        # Counted against the person's write limit while the like reads its comment.
        budget = pool(READS).submit(count_against_budget) if count_against_budget else None
        try:
            comment = comment_get_visible(comment_id=comment_id)
        finally:
            if budget is not None:
                budget.result()  # RateLimited over the budget, before the comment's own answer
    # Folded here once answered (outside a request, a command or a shell: right away), and
    # only where that is cheap: not on a hot comment, where concurrent folds would only
    # cancel each other, and not after contention (below). What is not folded here, the
    # folder folds; what is, its event says so, and the folder leaves it to this request.
    folds_here = erasing or (settings.LIKE_FOLD_AFTER_RESPONSE and like_fold.request_folds_claim(comment_id=comment_id))

    events: list[LikeEvent] = []  # each attempt's; the last one's was written if the transaction was
    written = counter_transact(
        key=key,
        shards=like_counter_shard_count(comment=comment),
        build=lambda transaction, shard, contended: events.append(
            _like_transaction(
                transaction,
                comment=comment,
                user_id=user_id,
                key=key,
                kind=kind,
                shard=shard,
                request_folds=folds_here and not contended,
            )
        ),
        what=f"like_{'add' if kind == like_fold.LIKE else 'remove'}",
    )
    # Not ok: the like row's condition failed (already liked / not liked): nothing written.
    count = counter_value(key=key)
    if erasing:
        # The eraser folds at once and in full, so the unlike's notification change (and its
        # activity line, which a later step removes) is written before it moves on.
        like_fold.like_events_fold(comment_id=comment_id)
    elif written.outcome.ok and folds_here and not written.contended:

        def fold() -> None:
            like_fold.like_events_fold_after_response(event=events[-1])

        if not after_response(fold):
            fold()
    return count


def like_add(*, comment_id: str, user_id: str) -> LikeState:
    """Like a comment: one 3-action TransactWriteItems, no read of the like first.

    The like row is put on condition it is absent, so a second like (or a concurrent
    twin) cancels the whole transaction and changes nothing; it still answers the
    current state. A crash cannot leave a like without its count or its event: all are
    in the same transaction; the event reaches the author's notification by the fold
    run once the answer is sent (best effort) or by `fold_like_events` within its poll.

    The answer is the state the like made: `liked` is True and `like_count` the exact
    count read right after, which includes this like; if the same person's unlike in
    another request lands between the two, the count read no longer does, and the
    answer still counts this like (at least 1): it describes the moment the like
    committed, and the unlike's own answer describes the later one.
    """
    count = _like_write(comment_id=comment_id, user_id=user_id, kind=like_fold.LIKE)
    return LikeState(like_count=max(1, count), liked=True)


def like_remove(*, comment_id: str, user_id: str) -> LikeState:
    """Undo a like: delete the like row on condition it exists and subtract 1, atomically.

    A second undo (or a concurrent twin) fails the condition and changes nothing, so
    the count can never be decremented twice for one like. The unlike's event takes
    the liker out of the author's unread notification when folded.
    """
    count = _like_write(comment_id=comment_id, user_id=user_id, kind=like_fold.UNLIKE)
    return LikeState(like_count=count, liked=False)


def like_erase(*, comment_id: str, user_id: str) -> None:
    """A deleted account's like undone: the same transaction as a person's unlike (the like row
    deleted on condition it exists, 1 subtracted, the unlike event), on any comment (hidden or
    deleted ones too), outside the like budget, folded at once: the author's unread notification
    loses the liker ("and N others" counts one fewer), as after an unlike.

    Twice, or after a crash between the unlike and the eraser's progress: the row is gone, the
    condition fails, nothing is written again, so the count drops exactly once. A comment with
    no item at all (never the case for a like made through the site): the like row is deleted.
    """
    try:
        _like_write(comment_id=comment_id, user_id=user_id, kind=like_fold.UNLIKE, erasing=True)
    except NotFound:
        Like(comment_id, user_id).delete()
