"""Like events: the likes' outbox, folded into the authors' notifications many at a time.

A like or unlike writes, in its own transaction, only items no other liker writes: its
like row, one counter shard, and a `like_events` item with its own key. Everything that
all likes of a comment share (the author's `like_unread` item, the `unread_counts` badge
item, the counter's due flag) is written here, by the fold, for up to FOLD_EVENTS_MAX
events of one comment at a time.

Who folds: the web process right after the like's answer was sent (project/after_response.py,
one attempt, never on a hot comment), and `fold_like_events --loop`, which polls the
table (a Scan: it holds only events not folded yet) for whatever is left: events of hot
comments, of a process that died, of a fold that lost a race.

Why an outbox table and not DynamoDB Streams: docs/architecture.md "Like events and the fold (an outbox)".

The fold is *state-based*: for each liker with pending events it compares the liker's
current like row with the notification and the liker's `like_notified` marker, so the
order in which one person's like/unlike/like events are folded cannot matter, and
folding an event a second time changes nothing (which is why the events can be deleted
after the fold's transaction instead of inside it):

- liked, not listed, and not notified within LIKE_RENOTIFY_WINDOW_HOURS (or withdrawn from
  this unread notification, below): listed if the list has room (at most
  LIKE_NOTIFICATION_LIKERS_MAX), else an overflow like; +1 `num_likes` and badge; the
  marker is written with the time.
- not liked, listed in the unread notification: taken out, -1, and remembered as
  withdrawn (`unliked_ids`, cleared by the read) unless already put back once since the
  read (`restored_ids`); the marker stays. A withdrawn liker who likes again is put back.
- anything else changes nothing. So a person who likes, unlikes and likes again counts
  once in the unread notification however their events were split between folds; once
  it is read, their like again within the window does not raise it again, and flapping
  before a read raises it at most once more (a read while the notification shows nothing
  does not reach its item).

Exactly once: the notification, its badge item and the markers change in one transaction
conditioned on the notification still holding what was read, so two folders (or a fold
and a mark-read) cannot both apply the same likes, and a crash before the commit leaves
the events pending. A like on a hidden or deleted comment is dropped here: never listed,
never counted in the badge. Self-likes notify nobody. Every fold raises the counter's due
flag (ranking).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.conf import settings
from pynamodb.exceptions import DoesNotExist, PynamoDBException
from pynamodb.transactions import TransactWrite

from notifications.models import LikeEvent, LikeNotified, LikeUnread, UnreadCount
from notifications.services import like_seq_condition, like_source, likers_max
from project.clock import clock
from project.errors import error_code
from project.transactions import write_retrying
from social.activity.services import ActivityLine, activity_record_keyed
from social.counters import LIKES, counter_compact, counter_due_flag_raise, counter_key
from social.selectors import comment_find

logger = logging.getLogger(__name__)

LIKE = "like"
UNLIKE = "unlike"
# Events one fold takes (one Query page). The notification lists the likers a fold notified
# (`fold_notified`): a few short ids for a quiet comment, at most 45 when a storm's folds
# amortise a bigger item over as many likes.
FOLD_EVENTS_MAX = 45
FOLD_ATTEMPTS = 8
_readers = ThreadPoolExecutor(max_workers=8, thread_name_prefix="like-fold-read")
_writers = ThreadPoolExecutor(max_workers=8, thread_name_prefix="like-fold-write")
PENDING_SCAN_LIMIT = 200


def like_event_add(transaction: TransactWrite, *, author_id: str, comment_id: str, liker_id: str, kind: str) -> None:
    """Add the like's (or unlike's) event to its transaction: a put under a fresh key, no condition.

    No index: an event item under 1 KB in a table of its own costs 2 write units in the
    like's transaction, the least an outbox entry can cost. The fold writes the person's
    activity-log line from it (`_activity_lines`), under a key derived from the event id.
    """
    event_id = f"{clock.now_ns():020d}#{uuid.uuid4().hex[:12]}"
    transaction.save(
        LikeEvent(comment_id, event_id, author_id=author_id, liker_id=liker_id, kind=kind, created_at=clock.now())
    )


@dataclass
class _Fold:
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
    new_unliked: list[str] = field(default_factory=list)
    new_restored: list[str] = field(default_factory=list)

    @property
    def changes(self) -> bool:  # else the fold completes the last one and deletes its events
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


def _unread_get(author_id: str, comment_id: str) -> LikeUnread | None:
    try:
        return LikeUnread.get(author_id, comment_id, consistent_read=True)
    except DoesNotExist:
        return None


def _badge_get(author_id: str, comment_id: str) -> UnreadCount | None:
    try:
        return UnreadCount.get(author_id, like_source(comment_id), consistent_read=True)
    except DoesNotExist:
        return None


def renotify_window() -> float:
    """Seconds during which a person's new like of a comment does not notify its author again."""
    return float(settings.LIKE_RENOTIFY_WINDOW_HOURS) * 3600


def _notified_at(marker: LikeNotified) -> float:
    # A marker written before markers had a time counts as long ago.
    return float(marker.notified_at or 0)


def _plan(*, comment_id: str, events: list[LikeEvent]) -> _Fold:
    """Read what the fold needs (comment, notification, badge item, like rows, markers), all
    at once (one round trip of latency), and decide."""
    author_id = events[0].author_id
    likers = list(dict.fromkeys(e.liker_id for e in events if e.liker_id != author_id))
    comment = _readers.submit(comment_find, comment_id=comment_id)
    unread = _readers.submit(_unread_get, author_id, comment_id)
    badge = _readers.submit(_badge_get, author_id, comment_id)
    liked = _readers.submit(
        lambda: {row.user_id for row in _likes_batch_get([(comment_id, x) for x in likers])} if likers else set()
    )
    likers_markers = _readers.submit(_markers_get, comment_id, likers)
    fold = _Fold(comment_id, author_id, events, unread.result(), badge.result())
    # The last fold's likers have markers unless it died before writing them (rare: read apart).
    markers = {**_markers_get(comment_id, [x for x in fold.journal if x not in likers]), **likers_markers.result()}
    fold.new_list, fold.new_count = fold.old_list, fold.old_count
    fold.new_unliked, fold.new_restored = fold.old_unliked, fold.old_restored
    fold.unmarked = [liker for liker in fold.journal if liker not in markers]
    found = comment.result()
    liked = liked.result()
    if found is None or found.hidden or found.deleted_at:  # likes on a hidden or deleted comment notify nobody
        return fold
    listed = fold.old_list
    fold.withdraw = [liker for liker in likers if liker not in liked and liker in listed]
    for liker in fold.withdraw:
        fold.new_list.remove(liker)
        fold.new_count -= 1
    # Within the window a marker stays, whatever happened since (an unlike, a read): the
    # same person liking the same comment again does not notify the author again, unless
    # their like was withdrawn from this still unread notification (it is put back).
    since = clock.now() - renotify_window()
    recently = {liker for liker, marker in markers.items() if _notified_at(marker) >= since} | set(fold.unmarked)
    recently -= set(fold.old_unliked)
    # Withdrawals first: a place they free goes to a later like of the same batch.
    fold.notify = [liker for liker in likers if liker in liked and liker not in recently and liker not in listed]
    for liker in fold.notify:
        fold.new_count += 1
        if len(fold.new_list) < likers_max():
            fold.new_list.append(liker)
    restored = fold.old_restored + [liker for liker in fold.notify if liker in fold.old_unliked]
    unliked = [liker for liker in fold.old_unliked if liker not in fold.notify]
    unliked += [liker for liker in fold.withdraw if liker not in restored]
    # Bounded like the list: a liker dropped from `unliked` is not put back until the read,
    # one dropped from `restored` may be put back once more.
    fold.new_unliked, fold.new_restored = unliked[-likers_max() :], restored[-likers_max() :]
    return fold


def _markers_get(comment_id: str, likers: list[str]) -> dict[str, LikeNotified]:
    if not likers:
        return {}
    keys = [(comment_id, liker) for liker in dict.fromkeys(likers)]
    return {row.user_id: row for row in LikeNotified.batch_get(keys, consistent_read=True)}


def _likes_batch_get(keys):
    from social.models import Like  # the like rows are the truth the fold follows

    return Like.batch_get(keys, consistent_read=True)


def _markers_put(comment_id: str, likers: list[str], at: float) -> None:
    """Put the likers' markers (BatchWriteItem, plain puts): idempotent, kept for the window."""
    if not likers:
        return
    expires = datetime.fromtimestamp(at + renotify_window(), tz=UTC)
    with LikeNotified.batch_write() as batch:
        for liker in likers:
            batch.save(LikeNotified(comment_id, liker, notified_at=at, expires_at=expires))


def _list_set(attribute, values: list[str]):
    return attribute.set(values) if values else attribute.remove()  # no empty list kept


def _notification_write(fold: _Fold, now: float) -> bool:
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
        if error_code(error) == "ConditionalCheckFailedException":
            return False
        raise
    return True


def _badge_sync(fold: _Fold, *, count: int, seq: int) -> None:
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
                actions=[UnreadCount.count.set(count), UnreadCount.seq.set(seq)],
                condition=UnreadCount.seq.does_not_exist() | (UnreadCount.seq < seq),
            ),
            what="like_badge",
        )
    except PynamoDBException as error:
        if error_code(error) != "ConditionalCheckFailedException":
            raise


def _events_delete(events: list[LikeEvent]) -> None:
    """Delete folded events (BatchWriteItem): the fold's last step (`_fold_batch`)."""
    with LikeEvent.batch_write() as batch:
        for event in events:
            batch.delete(event)


def _activity_lines(events: list[LikeEvent]) -> None:
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
        ]
    )


def _fold_read(comment_id: str) -> _Fold | None:
    """Read a batch of pending events of one comment and plan its fold (None: nothing pending)."""
    events = list(LikeEvent.query(comment_id, consistent_read=True, limit=FOLD_EVENTS_MAX))
    return _plan(comment_id=comment_id, events=events) if events else None


def _fold_batch(*, comment_id: str, attempts: int) -> int:
    """Fold up to FOLD_EVENTS_MAX pending events of one comment; returns how many (0: none pending).

    Plain writes, each idempotent, in an order that makes any prefix safe to repeat:
    1. the markers the last fold did not write (its likers are in the notification's journal);
    2. the notification, on condition it still holds what was read (the commit point; a
       changed notification is re-read and planned again, up to `attempts` times);
    3. this fold's markers; 4. the badge item, to the notification's count unless a newer
    state is there; 5. the counter's due flag; 6. the likers' activity lines (3-6 at once);
    7. the events. A crash anywhere leaves the events pending, and their next fold finds the
    notification as this one left it, changes nothing there and finishes steps 3-7.
    """
    for _ in range(attempts):
        fold = _fold_read(comment_id)
        if fold is None:
            return 0
        now = clock.now()
        _markers_put(comment_id, fold.unmarked, float(fold.unread.fold_at or now) if fold.unread else now)
        if fold.changes and not _notification_write(fold, now):
            logger.info("fold of %s: the notification changed meanwhile, re-read", comment_id)
            continue
        break
    else:
        return 0
    # Steps 3-6 depend on nothing but the commit: one round trip of latency, then the events.
    steps = [
        _writers.submit(counter_due_flag_raise, key=counter_key(kind=LIKES, object_id=comment_id)),
        _writers.submit(_activity_lines, fold.events),
    ]
    if fold.changes:
        steps.append(_writers.submit(_markers_put, comment_id, fold.notify, now))
        steps.append(_writers.submit(_badge_sync, fold, count=fold.new_count, seq=fold.old_seq + 1))
    elif fold.unread is not None:
        steps.append(_writers.submit(_badge_sync, fold, count=fold.old_count, seq=fold.old_seq))
    for step in steps:
        step.result()  # a failure leaves the events for the next fold, which repeats these steps
    _events_delete(fold.events)
    if fold.changes:
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

    Exactly once (`_fold_batch`): concurrent folders of one comment cannot both commit a
    batch, and a crash anywhere leaves events whose next fold only completes this one.
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


def like_events_fold_after_response(*, comment_id: str) -> None:
    """Best effort, once the like's answer is sent: one attempt, never raises (the folder does the rest).

    Only where cheap: skipped for a hot comment (more than HOT_LIKES_PER_SECOND likes a
    second in this process) and while another request of this process folds the same
    comment, where folds would cancel each other; the folder takes those events.
    """
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


def like_events_pending_comments(*, limit: int = PENDING_SCAN_LIMIT) -> list[str]:
    """Comments with pending like events: one page of a Scan of `like_events`.

    The table holds only events not folded yet (a fold deletes its events), so its size
    is the backlog: an empty poll reads nothing and costs the minimum half read unit,
    where a write-sharded index would cost a Query per partition and a write per event.
    Eventually consistent: an event a moment too new for it is found by the next poll.
    """
    found: dict[str, None] = {}
    for event in LikeEvent.scan(limit=limit, page_size=limit, attributes_to_get=["comment_id", "event_id"]):
        found.setdefault(event.comment_id)
    return list(found)


def like_events_fold_pending(*, stop: Callable[[], bool] = lambda: False) -> int:
    """Fold the pending events of every comment one Scan page lists; returns how many events.

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
    """Fold until `like_events` holds nothing (the command without --loop, tests, benchmarks);
    gives up after `idle_passes` passes in a row that folded nothing while events stayed (a
    fold that keeps failing; on AWS, a Scan may list events just deleted for a moment)."""
    folded, idle = 0, 0
    while not stop() and idle < idle_passes:
        done = like_events_fold_pending(stop=stop)
        folded += done
        if done:
            idle = 0
            continue
        if not like_events_pending_comments(limit=1):
            break
        idle += 1
        clock.sleep(0.1)
    return folded
