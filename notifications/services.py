"""Writes of the notifications room: like notifications and their unread counts.

Likes and unlikes reach the author's unread notification and badge through their
events, folded many at a time by notifications/like_fold/, so the like's own
transaction touches nothing another liker touches.

Invariants kept by every write below and by the fold, for each comment and its
author, since the author last read its notification, once the pending like events
are folded:

- `num_likes` counts the likes that arrived, minus the undone likes of *listed*
  likers; the `unread_counts` item `like#<comment_id>` always holds the same number.
- `liker_ids` lists, oldest first and each once, the likers whose like found room:
  the first to arrive, plus later ones that took a place a listed liker's unlike
  freed; at most `LIKE_NOTIFICATION_LIKERS_MAX` (N) of them (lowering N leaves longer
  lists as they are until read). A like arriving while the list is full only adds 1
  to `num_likes` (an *overflow* like), so a viral comment's item stays far below
  DynamoDB's 400 KB item limit. Everyone listed still likes the comment. A liker
  counted once (listed or overflow) is not counted again for this comment after the
  author read it (`like_notified`).
- `num_likes == len(liker_ids) + overflow likes` (undone or not): an overflow like
  that is undone stays counted until read (an undone like may stay in
  its notification). So `len(liker_ids) <= min(num_likes, N)`, with equality as long
  as no like was undone; with no overflow at all, `num_likes == len(liker_ids)`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, cast

from django.conf import settings
from django.utils.translation import gettext

from notifications.feed.services import feed_mark_read
from notifications.models import LikeRead, LikeUnread, UnreadCount, read_key, unread_count_set
from project.clock import clock, iso_format
from project.dynamo.transactions import LabelledTransactWrite, TransactOutcome, transact
from project.errors import Conflict
from social.account.limits import account_limit_enforce
from social.activity.services import activity_put
from social.live import live_signal, live_user

if TYPE_CHECKING:
    from pynamodb.attributes import NumberAttribute
    from pynamodb.expressions.condition import Condition

logger = logging.getLogger(__name__)

# Mark read takes 3 actions per comment; TransactWriteItems takes at most 100.
MARK_READ_ACTIONS_PER_COMMENT = 3
MARK_READ_COMMENTS_PER_TRANSACTION = 99 // MARK_READ_ACTIONS_PER_COMMENT  # + the activity log line
# A notification of a comment liked at that moment changes with every fold (one plain write
# each): a mark-read re-reads and tries again, a little longer than a transaction conflict.
MARK_READ_ATTEMPTS = 12
MARK_READ_IDS_MAX = 100

LIKE_SOURCE_PREFIX = "like#"


def like_source(comment_id: str) -> str:
    """The `unread_counts` source key of a comment's like notification (or reaction one: `comment_id`
    is then its subject, `reaction#<comment id>`)."""
    return f"{LIKE_SOURCE_PREFIX}{comment_id}"


# --- like / unlike ---------------------------------------------------------


def like_seq_condition(seq_attribute: NumberAttribute, old: int) -> Condition:
    """The notification still has sequence `old` (absent counts as 0)."""
    return (seq_attribute == old) if old else (seq_attribute.does_not_exist() | (seq_attribute == 0))


def likers_max() -> int:
    """How many liker ids an unread notification keeps (the text names two, so at least 2)."""
    return max(2, int(settings.LIKE_NOTIFICATION_LIKERS_MAX))


# --- mark read -------------------------------------------------------------


def _like_unread_get(*, user_id: str, comment_ids: list[str]) -> list[LikeUnread]:
    """The user's unread notifications of these comments (strongly consistent BatchGet)."""
    if not comment_ids:
        return []
    keys = [(user_id, comment_id) for comment_id in comment_ids]
    return list(LikeUnread.batch_get(keys, consistent_read=True))


def _like_unread_all(*, user_id: str) -> list[LikeUnread]:
    """Every unread like notification of the user: the LSI skips the comments at 0."""
    return list(LikeUnread.by_num_likes.query(user_id, LikeUnread.num_likes > 0, consistent_read=True))


def _unread(item: LikeUnread) -> bool:
    # Not `liker_ids`: overflow likes stay counted after every listed liker unliked.
    return int(item.num_likes or 0) > 0


def _mark_read_actions(
    transaction: LabelledTransactWrite, *, user_id: str, copy: LikeUnread, read_at: datetime, read_ns: int
) -> None:
    liker_ids = list(copy.liker_ids or [])
    old_seq = int(copy.seq or 0)
    transaction.update(
        LikeUnread(user_id, copy.comment_id),
        actions=[
            LikeUnread.liker_ids.set([]),
            LikeUnread.num_likes.set(0),
            LikeUnread.updated_at.set(iso_format(read_at)),
            LikeUnread.seq.set(old_seq + 1),
            LikeUnread.unliked_ids.remove(),
            LikeUnread.restored_ids.remove(),
        ],
        # Reset only the state that is copied into history: a like (or unlike) folded
        # after the read fails this, and the comment is re-read and retried.
        # An overflow like changes `num_likes` only, which is enough to fail it.
        condition=(LikeUnread.num_likes == int(copy.num_likes))
        & (LikeUnread.liker_ids == liker_ids)
        & like_seq_condition(LikeUnread.seq, old_seq),
        label=copy.comment_id,
    )
    # The badge item with the notification's new `seq`: a fold's late badge write (older) cannot undo it.
    transaction.update(
        UnreadCount(user_id, like_source(copy.comment_id)),
        actions=[unread_count_set(0), UnreadCount.seq.set(old_seq + 1)],
    )
    transaction.save(
        LikeRead(
            user_id,
            read_key(read_ns=read_ns, comment_id=copy.comment_id),
            comment_id=copy.comment_id,
            liker_ids=liker_ids,
            num_likes=int(copy.num_likes),
            updated_at=copy.updated_at,
            read_at=iso_format(read_at),
            expires_at=read_at + timedelta(days=settings.NOTIFICATION_READ_RETENTION_DAYS),
        ),
        condition=LikeRead.read_key.does_not_exist(),
    )


def _mark_read_batch(*, user_id: str, batch: list[LikeUnread]) -> int:
    """Mark up to MARK_READ_COMMENTS_PER_TRANSACTION notifications read in one transaction.

    One retry loop (`transact`'s): a notification that changed since it was read fails
    its condition, is re-read, and the transaction is built again from the fresh copies.
    """
    copies = {item.comment_id: item for item in batch}

    def pending() -> list[LikeUnread]:
        return [item for item in copies.values() if _unread(item)]

    def build(transaction: LabelledTransactWrite) -> None:
        read_ns = clock.now_ns()
        read_at = datetime.fromtimestamp(read_ns / 1e9, tz=UTC)
        marked = pending()
        for copy in marked:
            _mark_read_actions(transaction, user_id=user_id, copy=copy, read_at=read_at, read_ns=read_ns)
        activity_put(transaction, user_id=user_id, action="read", object_id=",".join(c.comment_id for c in marked))

    def reread(outcome: TransactOutcome) -> bool:
        stale = [cast(str, label) for label in outcome.failed_labels if label is not None]  # comment ids
        logger.info("mark read for user %s: %d notifications changed meanwhile, re-read", user_id, len(stale))
        fresh = {item.comment_id: item for item in _like_unread_get(user_id=user_id, comment_ids=stale)}
        for comment_id in stale:
            if comment_id in fresh:
                copies[comment_id] = fresh[comment_id]
            else:
                copies.pop(comment_id, None)
        return bool(pending())

    if not pending():
        return 0
    if transact(build, what="notifications_mark_read", attempts=MARK_READ_ATTEMPTS, on_failed=reread).ok:
        return len(pending())
    if not pending():
        return 0
    raise Conflict(gettext("notifications_mark_read: notifications kept changing, retry shortly."))


def _mark_read(*, user_id: str, unread: list[LikeUnread]) -> int:
    pending = [item for item in unread if _unread(item)]
    marked = 0
    for start in range(0, len(pending), MARK_READ_COMMENTS_PER_TRANSACTION):
        marked += _mark_read_batch(user_id=user_id, batch=pending[start : start + MARK_READ_COMMENTS_PER_TRANSACTION])
    if marked:
        logger.info("user %s read %d like notifications", user_id, marked)
        live_signal([live_user(user_id)])  # the reader's other tabs follow (social/live.py), best effort
    return marked


def like_notifications_mark_read(*, user_id: str, comment_ids: Iterable[str]) -> int:
    """Mark the user's unread like notifications of these comments read; returns how many were.

    Per comment, one transaction resets `like_unread` (empty, 0, now), zeroes the
    `unread_counts` item and puts the copied content into `like_read` with its TTL,
    on condition that `like_unread` still holds what was copied: a like landing in
    between is never lost (it ends in the read copy after the retry, or stays
    unread). Up to 33 comments share one transaction (100-action limit). Ids of
    other users' comments find nothing under this user's key and change nothing.
    Twice: the second run finds nothing unread. Dies half way: whole batches are
    read, the rest stays unread.
    """
    ids = list(dict.fromkeys(comment_ids))
    return _mark_read(user_id=user_id, unread=_like_unread_get(user_id=user_id, comment_ids=ids))


def like_notifications_mark_all_read(*, user_id: str) -> int:
    """Mark every unread like notification of the user read (as `like_notifications_mark_read`)."""
    return _mark_read(user_id=user_id, unread=_like_unread_all(user_id=user_id))


def inbox_mark_read(*, user_id: str, comment_ids: Iterable[str] = (), entry_ids: Iterable[str] = ()) -> int:
    """Mark read what the inbox showed: like notifications by comment id, feed entries by entry id.

    Returns how many were marked. Not one transaction across the two (the feed is one
    version-locked item, each like notification its own): each part is atomic and
    idempotent, so a failure half way leaves the rest unread for the next call.
    Over the account's `mark_read` limit: RateLimited, nothing marked.
    """
    account_limit_enforce(name="mark_read", user_id=user_id)
    marked = like_notifications_mark_read(user_id=user_id, comment_ids=comment_ids)
    entry_ids = list(dict.fromkeys(entry_ids))
    if entry_ids:
        marked += feed_mark_read(user_id=user_id, entry_ids=entry_ids)
    return marked


def inbox_mark_all_read(*, user_id: str) -> int:
    """ "Mark all as read": every unread inbox item of the user (likes and feed entries).

    Counts against the account's `mark_read` limit, as `inbox_mark_read` does.
    """
    account_limit_enforce(name="mark_read", user_id=user_id)
    return like_notifications_mark_all_read(user_id=user_id) + feed_mark_read(user_id=user_id)
