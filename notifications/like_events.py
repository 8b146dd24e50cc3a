"""Like events: the likes' outbox, folded into the authors' notifications many at a time (issue 9).

A like or unlike writes, in its own transaction, only items no other liker writes: its
like row, one counter shard, and a `like_events` item with its own key. Everything that
all likes of a comment share (the author's `like_unread` item, the `unread_counts` badge
item, the counter's due flag) is written here, by the fold: one TransactWriteItems per
up to FOLD_EVENTS_MAX events of one comment.

Why an outbox table and not DynamoDB Streams: the outbox is written in the like's own
transaction and deleted in the fold's, so "folded exactly once" is a condition DynamoDB
checks (the delete of every folded event is conditioned on the event still existing);
a stream gives at-least-once delivery in shards whose records expire after 24 h, and
the consumer would still need its own dedup item per event. The outbox runs the same
on DynamoDB Local, in tests and on AWS, with any number of folders on any machines.

The fold is *state-based*: for each liker with pending events it compares the liker's
current like row with the notification and the liker's `like_notified` marker, so the
order in which one person's like/unlike/like events are folded cannot matter:

- liked, not yet notified, not listed: listed if the list has room (at most
  LIKE_NOTIFICATION_LIKERS_MAX), else an overflow like; +1 `num_likes` and badge;
  the marker is written.
- not liked, listed in the unread notification: taken out, -1, marker deleted (the
  author never saw it, so a new like may notify again).
- anything else changes nothing: a liker notified before (read, or overflow) who
  unlikes and likes again does not notify the author a second time.

A like on a hidden or deleted comment is dropped here: never listed, never counted in
the badge. Self-likes notify nobody. Every fold raises the counter's due flag (ranking).
"""

from __future__ import annotations

import logging
import random
import threading
import uuid
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from django.conf import settings
from pynamodb.exceptions import DoesNotExist
from pynamodb.transactions import TransactWrite

from notifications.models import LikeEvent, LikeNotified, LikeUnread, UnreadCount
from notifications.services import like_source, likers_max
from project.clock import clock
from project.transactions import transact
from social.counters import LIKES, counter_compact, counter_due_flag_add, counter_key
from social.selectors import comment_find

logger = logging.getLogger(__name__)

LIKE = "like"
UNLIKE = "unlike"
# One fold transaction: a delete per event, a marker write per liker, and the notification,
# badge and due flag: 45 + 45 + 3 <= 100 actions (TransactWriteItems' limit).
FOLD_EVENTS_MAX = 45
FOLD_ATTEMPTS = 8
_readers = ThreadPoolExecutor(max_workers=8, thread_name_prefix="like-fold-read")
PENDING_QUERY_LIMIT = 200


def like_event_add(transaction: TransactWrite, *, author_id: str, comment_id: str, liker_id: str, kind: str) -> None:
    """Add the like's (or unlike's) event to its transaction: a put under a fresh key, no condition."""
    event_id = f"{int(clock.now() * 1e9):020d}#{uuid.uuid4().hex[:12]}"
    transaction.save(
        LikeEvent(
            comment_id,
            event_id,
            author_id=author_id,
            liker_id=liker_id,
            kind=kind,
            created_at=clock.now(),
            pending_part=str(random.randrange(settings.LIKE_EVENT_PARTS)),
        )
    )


@dataclass
class _Fold:
    """What one fold read and decided for one comment."""

    comment_id: str
    author_id: str
    events: list[LikeEvent]
    unread: LikeUnread | None
    new_list: list[str] = field(default_factory=list)
    new_count: int = 0
    notify: list[str] = field(default_factory=list)
    withdraw: list[str] = field(default_factory=list)

    @property
    def old_list(self) -> list[str]:
        return list(self.unread.liker_ids or []) if self.unread else []

    @property
    def old_count(self) -> int:
        return int(self.unread.num_likes or 0) if self.unread else 0


def _unread_get(author_id: str, comment_id: str) -> LikeUnread | None:
    try:
        return LikeUnread.get(author_id, comment_id, consistent_read=True)
    except DoesNotExist:
        return None


def _plan(*, comment_id: str, events: list[LikeEvent]) -> _Fold:
    """Read what the fold needs (comment, notification, like rows, markers) and decide.

    The four reads are independent and run concurrently: one round trip of latency.
    """
    author_id = events[0].author_id
    likers = list(dict.fromkeys(e.liker_id for e in events if e.liker_id != author_id))
    keys = [(comment_id, liker) for liker in likers]
    comment = _readers.submit(comment_find, comment_id=comment_id)
    unread = _readers.submit(_unread_get, author_id, comment_id)
    liked = _readers.submit(lambda: {row.user_id for row in _likes_batch_get(keys)} if keys else set())
    notified = _readers.submit(
        lambda: {row.user_id for row in LikeNotified.batch_get(keys, consistent_read=True)} if keys else set()
    )
    fold = _Fold(comment_id, author_id, events, unread.result())
    fold.new_list, fold.new_count = fold.old_list, fold.old_count
    found = comment.result()
    liked, notified = liked.result(), notified.result()
    if found is None or found.hidden or found.deleted_at:  # likes on a hidden or deleted comment notify nobody
        return fold
    listed = fold.old_list
    fold.withdraw = [liker for liker in likers if liker not in liked and liker in listed]
    for liker in fold.withdraw:
        fold.new_list.remove(liker)
        fold.new_count -= 1
    # Withdrawals first: a place they free goes to a later like of the same batch.
    fold.notify = [liker for liker in likers if liker in liked and liker not in notified and liker not in listed]
    for liker in fold.notify:
        fold.new_count += 1
        if len(fold.new_list) < likers_max():
            fold.new_list.append(liker)
    return fold


def _likes_batch_get(keys):
    from social.models import Like  # the like rows are the truth the fold follows

    return Like.batch_get(keys, consistent_read=True)


def _fold_actions(transaction: TransactWrite, fold: _Fold) -> None:
    author_id, comment_id = fold.author_id, fold.comment_id
    for event in fold.events:
        # Another folder that took these events first makes this fail: nothing is folded twice.
        transaction.delete(event, condition=LikeEvent.event_id.exists())
    if fold.notify or fold.withdraw:
        if fold.unread is None:  # a comment posted before notifications existed
            transaction.save(
                LikeUnread(
                    author_id, comment_id, liker_ids=fold.new_list, num_likes=fold.new_count, updated_at=clock.now_iso()
                ),
                condition=LikeUnread.comment_id.does_not_exist(),
            )
        else:
            actions = [LikeUnread.liker_ids.set(fold.new_list), LikeUnread.num_likes.set(fold.new_count)]
            if fold.notify:
                actions.append(LikeUnread.updated_at.set(clock.now_iso()))
            # A mark-read (or another fold) in between fails this: re-read and fold again.
            transaction.update(
                LikeUnread(author_id, comment_id),
                actions=actions,
                condition=(LikeUnread.num_likes == fold.old_count) & (LikeUnread.liker_ids == fold.old_list),
            )
        transaction.update(
            UnreadCount(author_id, like_source(comment_id)),
            actions=[UnreadCount.count.add(fold.new_count - fold.old_count)],
        )
        for liker in fold.notify:
            transaction.save(LikeNotified(comment_id, liker))
        for liker in fold.withdraw:
            transaction.delete(LikeNotified(comment_id, liker))
    counter_due_flag_add(transaction, key=counter_key(kind=LIKES, object_id=comment_id))


def _fold_read(comment_id: str) -> _Fold | None:
    """Read a batch of pending events of one comment and plan its fold (None: nothing pending)."""
    events = list(LikeEvent.query(comment_id, consistent_read=True, limit=FOLD_EVENTS_MAX))
    return _plan(comment_id=comment_id, events=events) if events else None


def _fold_batch(*, comment_id: str, attempts: int) -> int:
    """Fold up to FOLD_EVENTS_MAX pending events of one comment; returns how many (0: none pending).

    One retry loop (`transact`'s) for conflicts and for state that changed since it was
    read: a failed condition re-reads the events and plans again.
    """
    current = {"fold": _fold_read(comment_id)}
    if current["fold"] is None:
        return 0

    def replan(outcome) -> bool:
        logger.info("fold of %s: state changed meanwhile, re-read", comment_id)
        current["fold"] = _fold_read(comment_id)
        return current["fold"] is not None

    outcome = transact(
        lambda transaction: _fold_actions(transaction, current["fold"]),
        what="like_events_fold",
        attempts=attempts,
        on_failed=replan,
    )
    fold = current["fold"]
    if not outcome.ok or fold is None:
        return 0
    if fold.notify or fold.withdraw:
        logger.info(
            "folded %d like event(s) of %s: +%d notified, -%d withdrawn",
            len(fold.events),
            comment_id,
            len(fold.notify),
            len(fold.withdraw),
        )
    return len(fold.events)


def like_events_fold(*, comment_id: str, attempts: int = FOLD_ATTEMPTS) -> int:
    """Fold every pending like event of one comment into its author's notification; returns how many.

    Exactly once: each batch's transaction deletes its events on condition they still
    exist and updates the notification on condition it still holds what was read, so a
    second folder (or a rerun after a crash) folds nothing twice and loses nothing: a
    crash before the transaction leaves the events pending, after it leaves nothing to do.
    Concurrent folders of one comment: one wins each batch, the others re-read.
    """
    folded = 0
    while True:
        done = _fold_batch(comment_id=comment_id, attempts=attempts)
        folded += done
        if done < FOLD_EVENTS_MAX:
            break
    if folded:
        try:  # keep the comment's count one small read (social/counters.py)
            counter_compact(key=counter_key(kind=LIKES, object_id=comment_id))
        except Exception as error:  # a like on a shard meanwhile: the next fold compacts
            logger.info("like counter of %s not compacted (%s)", comment_id, type(error).__name__)
    return folded


_folding_here: set[str] = set()
_folding_lock = threading.Lock()
# A comment liked this often per second in this process is hot: its requests leave the
# fold to the folder, which takes up to FOLD_EVENTS_MAX of its events per write.
HOT_LIKES_PER_SECOND = 8
_recent_likes: dict[str, deque] = {}


def _hot(comment_id: str, now: float) -> bool:
    recent = _recent_likes.setdefault(comment_id, deque())
    recent.append(now)
    while recent and recent[0] < now - 1.0:
        recent.popleft()
    if len(_recent_likes) > 10_000:  # forget quiet comments
        for quiet in [key for key, times in _recent_likes.items() if not times or times[-1] < now - 1.0]:
            _recent_likes.pop(quiet, None)
    return len(recent) > HOT_LIKES_PER_SECOND


def like_events_fold_after_request(*, comment_id: str) -> None:
    """Best effort, right after a like: one attempt, never raises (the folder does the rest).

    Only where cheap: skipped for a hot comment (more than HOT_LIKES_PER_SECOND likes a
    second in this process) and while another request of this process folds the same
    comment, where folds would cancel each other; the folder takes those events.
    """
    if not settings.LIKE_FOLD_IN_REQUEST:
        return
    with _folding_lock:
        if _hot(comment_id, clock.monotonic()) or comment_id in _folding_here:
            return
        _folding_here.add(comment_id)
    try:
        _fold_batch(comment_id=comment_id, attempts=1)
    except Exception as error:  # the like is committed; its event waits for fold_like_events
        logger.info("like events of %s left to fold_like_events (%s)", comment_id, type(error).__name__)
    finally:
        with _folding_lock:
            _folding_here.discard(comment_id)


def like_events_pending_comments(*, limit_per_part: int = PENDING_QUERY_LIMIT) -> list[str]:
    """Comments with pending like events: one Query per partition of the sparse `pending` index."""
    found: dict[str, None] = {}
    for part in range(settings.LIKE_EVENT_PARTS):
        for event in LikeEvent.pending.query(str(part), limit=limit_per_part):
            found.setdefault(event.comment_id)
    return list(found)


def like_events_fold_pending(*, stop: Callable[[], bool] = lambda: False) -> int:
    """Fold the pending events of every comment the `pending` index lists; returns how many events.

    Several folders may run at once, on several machines: they may pick the same
    comment, and the fold's conditions let one of them fold each batch. A comment whose
    fold fails is logged and left for the next pass.
    """
    folded = 0
    for comment_id in like_events_pending_comments():
        if stop():
            break
        try:
            folded += like_events_fold(comment_id=comment_id)
        except Exception:
            logger.exception("fold of the like events of %s failed; left for the next pass", comment_id)
    return folded


def like_events_fold_until_idle(*, stop: Callable[[], bool] = lambda: False, idle_passes: int = 50) -> int:
    """Fold until the `pending` index lists nothing (the command without --loop, tests, benchmarks).

    Gives up after `idle_passes` passes in a row that folded nothing while the index
    still listed events (a comment whose fold keeps failing; on AWS, index entries of
    events just folded, which the index drops within a moment).
    """
    folded, idle = 0, 0
    while not stop() and idle < idle_passes:
        done = like_events_fold_pending(stop=stop)
        folded += done
        if done:
            idle = 0
            continue
        if not like_events_pending_comments(limit_per_part=1):
            break
        idle += 1
        clock.sleep(0.1)
    return folded
