"""The like fold's reads and plain writes (notifications/like_fold.py orders them).

Each write is idempotent (a put of the same item, a conditional update, a delete), so a
fold that dies between any two of them is completed by the next one; BatchWriteItem's
25 items a request go out at once, on the `writes` tier of the process's pools
(project/serving/pools.py: their tasks hand nothing on; the finishers that wait on them are
a tier above). `Fold` is what one fold read and decided.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from django.conf import settings
from pynamodb.exceptions import DoesNotExist, PynamoDBException
from pynamodb.models import Model

from notifications.feed.services import notify_email_delay_ms
from notifications.mail.queue import EMAIL, mail_queue_item
from notifications.models import (
    LikeEvent,
    LikeNotified,
    LikeUnread,
    Preferences,
    ThreadSubscription,
    UnreadCount,
    unread_count_set,
)
from notifications.preferences.selectors import NotifyPreferences, preferences_from_item
from notifications.services import like_seq_condition, like_source
from notifications.subjects import REACTION, subject_comment, subject_kind
from project.clock import clock
from project.dynamo.batch_get import batch_get_many
from project.dynamo.batch_write import batch_write_many
from project.dynamo.transactions import write_retrying
from project.errors import condition_failed
from project.serving.pools import WRITES, pool
from social.activity.services import ActivityLine, activity_record_keyed
from social.models import Comment, Like, LiveChange, Reaction
from social.reactions.names import NAMES, reactor_key

logger = logging.getLogger("notifications.like_fold")
T = TypeVar("T")

BATCH_WRITE_MAX = 25
PERSON_ACTIONS = ("like", "unlike")  # event kinds that are a person's action (and an activity line)


@dataclass
class Fold:
    """What one fold read and decided for one comment."""

    comment_id: str
    author_id: str
    events: list[LikeEvent]
    unread: LikeUnread | None
    badge: UnreadCount | None = None
    new_list: list[str] = field(default_factory=list)
    new_count: int = 0
    notify: list[str] = field(default_factory=list)
    withdraw: list[str] = field(default_factory=list)
    # Likers the last fold notified whose marker is not written yet (it died before): written first.
    unmarked: list[str] = field(default_factory=list)
    # The writes of `unmarked`'s markers, when the previous batch of this very folder is making them.
    markers_in_flight: list[Future[None]] | None = None
    new_unliked: list[str] = field(default_factory=list)
    new_restored: list[str] = field(default_factory=list)
    mail: bool = False  # the author wants likes by e-mail, and this fold makes the notification unread
    push: bool = False  # the author wants likes by push, and this fold notifies of someone

    @property
    def changes(self) -> bool:
        """Whether the notification changes (else the fold completes the last one and deletes its events)."""
        return bool(self.notify or self.withdraw)

    @property
    def old_list(self) -> list[str]:
        return list(self.unread.liker_ids or []) if self.unread else []

    @property
    def old_count(self) -> int:
        return int(self.unread.num_likes or 0) if self.unread else 0

    @property
    def old_seq(self) -> int:
        return int(self.unread.seq or 0) if self.unread else 0

    @property
    def old_unliked(self) -> list[str]:
        return list(self.unread.unliked_ids or []) if self.unread else []

    @property
    def old_restored(self) -> list[str]:
        return list(self.unread.restored_ids or []) if self.unread else []

    @property
    def journal(self) -> list[str]:
        return list(self.unread.fold_notified or []) if self.unread else []


def unread_get(author_id: str, comment_id: str) -> LikeUnread | None:
    try:
        return LikeUnread.get(author_id, comment_id, consistent_read=True)
    except DoesNotExist:
        return None


def badge_get(author_id: str, comment_id: str) -> UnreadCount | None:
    try:
        return UnreadCount.get(author_id, like_source(comment_id), consistent_read=True)
    except DoesNotExist:
        return None


def renotify_window() -> float:
    """Seconds during which a person's new like of a comment does not notify its author again."""
    return float(settings.LIKE_RENOTIFY_WINDOW_HOURS) * 3600


def notified_at(marker: LikeNotified) -> float:
    # A marker written before markers had a time counts as long ago.
    return float(marker.notified_at or 0)


def markers_get(comment_id: str, likers: list[str]) -> dict[str, LikeNotified]:
    if not likers:
        return {}
    keys = [(comment_id, liker) for liker in dict.fromkeys(likers)]
    return {row.user_id: row for row in LikeNotified.batch_get(keys, consistent_read=True)}


@dataclass(frozen=True)
class FoldReads:
    """What a fold reads of one comment before it decides, all strongly consistent."""

    comment: Comment | None  # None: gone
    unread: LikeUnread | None
    badge: UnreadCount | None
    liked: set[str]  # the likers whose like row exists (still liking)
    markers: dict[str, LikeNotified]  # the likers' markers (notified lately)
    preferences: NotifyPreferences  # the author's
    thread: tuple[str, str | None] | None = None  # (thread id, the author's state in it), when asked


def fold_reads(*, comment_id: str, author_id: str, likers: list[str], thread_id: str | None = None) -> FoldReads:
    """One strongly consistent BatchGetItem across six tables (project/dynamo/batch_get.py): the
    comment, the notification, its badge item, the likers' rows and markers, the author's
    preferences, and with `thread_id` the author's state in that thread (seven). Each key is
    billed as its own GetItem would be; one call instead of six or seven.

    A reaction subject (`reaction#<comment id>`) reads the reactors' reaction rows instead of
    like rows: the six names of each (six keys), a reactor who still has any of them reacts."""
    target = subject_comment(comment_id)
    pairs = [(comment_id, liker) for liker in likers]
    wanted: dict[type[Model], list[Any]] = {
        Comment: [target],
        LikeUnread: [(author_id, comment_id)],
        UnreadCount: [(author_id, like_source(comment_id))],
        LikeNotified: pairs,
        Preferences: [author_id],
    }
    reacting = subject_kind(comment_id) == REACTION
    if reacting:
        wanted[Reaction] = [(target, reactor_key(user_id=liker, name=name)) for liker in likers for name in NAMES]
    else:
        wanted[Like] = [(target, liker) for liker in likers]
    if thread_id is not None:
        wanted[ThreadSubscription] = [(thread_id, author_id)]
    found = batch_get_many(wanted, consistent=True)

    def one(model: type) -> Any:
        return found[model][0] if found[model] else None

    return FoldReads(
        comment=one(Comment),
        unread=one(LikeUnread),
        badge=one(UnreadCount),
        liked={row.user_id for row in found[Reaction if reacting else Like]},
        markers={row.user_id: row for row in found[LikeNotified]},
        preferences=preferences_from_item(one(Preferences)),
        thread=(thread_id, one(ThreadSubscription).state if found[ThreadSubscription] else None)
        if thread_id is not None
        else None,
    )


def likes_batch_get(keys: list[tuple[str, str]]) -> Iterator[Like]:
    """The like rows of these (comment, person) keys that exist, strongly consistent: the truth the fold follows."""
    return Like.batch_get(keys, consistent_read=True)


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


def activity_lines(events: list[LikeEvent]) -> None:
    """The likers' activity-log lines, under keys derived from the event ids: written again
    by a fold that repeats an event, they land on the same items (exactly one line per like)."""
    activity_record_keyed(
        lines=[
            ActivityLine(
                user_id=event.liker_id,
                action=event.kind,
                object_id=event.comment_id,
                millis=int(event.event_id.split("#")[0]) // 1_000_000,
                suffix=event.event_id.split("#")[-1],
            )
            for event in events
            if event.kind in PERSON_ACTIONS  # not a block's trigger (notifications/silence.py)
        ]
    )
