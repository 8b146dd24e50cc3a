"""The like fold's plain writes (notifications/like_fold/batches.py orders them), and its events.

Each write is idempotent (a put of the same item, a conditional update, a delete), so a
fold that dies between any two of them is completed by the next one; BatchWriteItem's
25 items a request go out at once, on the `writes` tier of the process's pools
(project/serving/pools.py: their tasks hand nothing on; the finishers that wait on them are
a tier above).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from concurrent.futures import Future
from datetime import UTC, datetime
from typing import Any, TypeVar

from pynamodb.exceptions import PynamoDBException

from notifications.feed.services import notify_email_delay_ms
from notifications.like_fold.decide import Fold
from notifications.like_fold.reads import renotify_window
from notifications.mail.queue import EMAIL, mail_queue_item
from notifications.models import LikeEvent, LikeNotified, LikeUnread, UnreadCount, unread_count_set
from notifications.services import like_seq_condition, like_source
from notifications.subjects import subject_comment, subject_kind
from project.clock import clock
from project.dynamo.batch_write import batch_write_many
from project.dynamo.transactions import write_retrying
from project.errors import condition_failed
from project.serving.pools import WRITES, pool
from social.models import LiveChange

logger = logging.getLogger("notifications.like_fold")
T = TypeVar("T")

BATCH_WRITE_MAX = 25

# Event kinds: a person's like or unlike (each an activity-log line), and a block's or mute's
# trigger (notifications/silence.py): no action of the liker's, only a reason to fold their
# state again, which the block changed.
LIKE = "like"
UNLIKE = "unlike"
SILENCE = "silence"
PERSON_ACTIONS = (LIKE, UNLIKE)


def like_event(*, author_id: str, comment_id: str, liker_id: str, kind: str) -> LikeEvent:
    """A new event under a fresh key (the time in nanoseconds, then a random suffix): no two
    writers of one comment's events ever write the same item."""
    event_id = f"{clock.now_ns():020d}#{uuid.uuid4().hex[:12]}"
    return LikeEvent(comment_id, event_id, author_id=author_id, liker_id=liker_id, kind=kind, created_at=clock.now())


def like_event_put(*, author_id: str, comment_id: str, liker_id: str, kind: str = SILENCE) -> None:
    """A plain put of an event outside any like (a block's trigger): the comment's next fold
    takes the liker's state again. Twice: two events, folded as one (the fold is state-based)."""
    like_event(author_id=author_id, comment_id=comment_id, liker_id=liker_id, kind=kind).save()


def markers_put(comment_id: str, likers: list[str], at: float) -> None:
    """Put the likers' markers (BatchWriteItem, plain puts): idempotent, kept for the window."""
    for future in markers_put_async(comment_id, likers, at):
        future.result()


def markers_put_async(comment_id: str, likers: list[str], at: float) -> list[Future[None]]:
    expires = datetime.fromtimestamp(at + renotify_window(), tz=UTC)
    return [
        pool(WRITES).submit(
            _batch_save, [LikeNotified(comment_id, x, notified_at=at, expires_at=expires) for x in chunk]
        )
        for chunk in chunks(likers)
    ]


def chunks(items: list[T]) -> list[list[T]]:
    return [items[start : start + BATCH_WRITE_MAX] for start in range(0, len(items), BATCH_WRITE_MAX)]


def _batch_save(items: list[Any]) -> None:
    with type(items[0]).batch_write() as batch:
        for item in items:
            batch.save(item)


def markers_written(writes: list[Future[None]]) -> bool:
    """Whether every one of these marker writes succeeded (a failed one: the caller writes them)."""
    try:
        for write in writes:
            write.result()
    except Exception as error:
        logger.info("markers of the previous fold not written (%s): writing them again", type(error).__name__)
        return False
    return True


def _list_set(attribute: Any, values: list[str]) -> Any:
    # DynamoDB keeps no empty list here: an empty one is removed.
    return attribute.set(values) if values else attribute.remove()


def notification_write(fold: Fold, now: float) -> bool:
    """The fold's commit point: one conditional write of the notification; False if it changed meanwhile.

    The notification records which likers this fold notified (`fold_notified`, `fold_at`),
    so a fold that dies before their markers are written is completed by the next one.
    """
    author_id, comment_id = fold.author_id, fold.comment_id
    seq = fold.old_seq + 1
    try:
        if fold.unread is None:  # the comment's first like (posting writes no notification item)
            item = LikeUnread(
                author_id,
                comment_id,
                liker_ids=fold.new_list,
                num_likes=fold.new_count,
                updated_at=clock.now_iso(),
                seq=seq,
                fold_notified=fold.notify,
                fold_at=now,
                unliked_ids=fold.new_unliked or None,
                restored_ids=fold.new_restored or None,
            )
            write_retrying(lambda: item.save(condition=LikeUnread.comment_id.does_not_exist()), what="like_fold")
        else:
            actions = [
                LikeUnread.liker_ids.set(fold.new_list),
                LikeUnread.num_likes.set(fold.new_count),
                LikeUnread.seq.set(seq),
                LikeUnread.fold_notified.set(fold.notify),
                LikeUnread.fold_at.set(now),
                _list_set(LikeUnread.unliked_ids, fold.new_unliked),
                _list_set(LikeUnread.restored_ids, fold.new_restored),
            ]
            if fold.notify:
                actions.append(LikeUnread.updated_at.set(clock.now_iso()))
            # A mark-read (or another fold) in between fails this: re-read and fold again.
            condition = (
                (LikeUnread.num_likes == fold.old_count)
                & (LikeUnread.liker_ids == fold.old_list)
                & like_seq_condition(LikeUnread.seq, fold.old_seq)
            )
            write_retrying(
                lambda: LikeUnread(author_id, comment_id).update(actions=actions, condition=condition),
                what="like_fold",
            )
    except PynamoDBException as error:
        if condition_failed(error):
            return False
        raise
    return True


def like_mail_schedule(fold: Fold, *, channel: str = EMAIL) -> None:
    """Put the mail about the notification this fold makes unread into the mail queue (one plain put).

    Keyed by the notification's next `seq` (`like:<comment>:<seq>`, `reaction:<comment>:<seq>`):
    a fold repeated after a crash, or retried after losing its commit, puts the same item again
    (or one whose notification the sender finds read or changed, and skips); the sender checks
    at send time whether it is still unread and whether likes (reactions) by e-mail are still on.
    The push (`channel=PUSH`) is the same item in the push shards, due at once.
    """
    kind, target = subject_kind(fold.comment_id), subject_comment(fold.comment_id)
    mail_queue_item(
        user_id=fold.author_id,
        kind=kind,
        source=f"{kind}:{target}:{fold.old_seq + 1}",
        entry_id=target,
        due_ms=clock.now_ms() + (notify_email_delay_ms() if channel == EMAIL else 0),
        channel=channel,
    ).save()


def badge_sync(fold: Fold, *, count: int, seq: int) -> None:
    """Bring the comment's badge item to the notification's count, unless a newer state is there.

    `count` and `seq` are the notification's; the condition (the item's own `seq` is older)
    keeps a late fold from overwriting what a mark-read or a later fold wrote. Idempotent.
    """
    badge = fold.badge
    if badge is not None and int(badge.seq or 0) >= seq and (int(badge.seq or 0) > seq or int(badge.count) == count):
        return
    source = like_source(fold.comment_id)
    try:
        write_retrying(
            lambda: UnreadCount(fold.author_id, source).update(
                actions=[unread_count_set(count), UnreadCount.seq.set(seq)],
                condition=UnreadCount.seq.does_not_exist() | (UnreadCount.seq < seq),
            ),
            what="like_badge",
        )
    except PynamoDBException as error:
        if not condition_failed(error):
            raise


def events_delete(events: list[LikeEvent], *, signals: Sequence[LiveChange] = ()) -> None:
    """Delete folded events (BatchWriteItem, plain deletes, 25 a request, at once), the first
    request also putting `signals` (the fold's live signal, social/live.py `live_signal_items`):
    the fold's last step, so a crash before it leaves events whose next fold only completes
    what this one began, and signals again. The signal and the deletes may land one without
    the other: a signal lost while its events are deleted is a failed `live_signal` (pages
    catch up at their next full answer), a signal put twice costs a poll one more read."""
    first = BATCH_WRITE_MAX - len(signals)
    requests = [(list(signals), events[:first]), *[([], chunk) for chunk in chunks(events[first:])]]
    for future in [
        pool(WRITES).submit(batch_write_many, puts=puts, deletes=deletes)
        for puts, deletes in requests
        if puts or deletes
    ]:
        future.result()
