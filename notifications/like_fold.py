"""The like fold: the likes' outbox (like events), folded into the authors' notifications many at a time.

A like or unlike writes, in its own transaction, only items no other liker writes: its
like row, one counter shard, and a `like_events` item with its own key. Everything that
all likes of a comment share (the author's `like_unread` item, the `unread_counts` badge
item, the counter's due flag) is written here, by the fold, for up to FOLD_EVENTS_MAX
events of one comment at a time.

Who folds: the web process right after the like's answer was sent (project/serving/after_response.py,
one attempt, never on a hot comment), and `fold_like_events --loop`, which polls the
table (a Scan: it holds only events not folded yet) for whatever is left: events of hot
comments, of a process that died, of a fold that lost a race. An event says whether its
request folds it (`request_folds`); the folder leaves those to their request for
REQUEST_FOLD_GRACE_SECONDS, so one like is not folded twice at once by two processes, each
reading everything and one losing its commit.

Why an outbox table and not DynamoDB Streams: the event is written in the like's own
transaction, so a committed like always leaves something to fold, and it stays until a
fold has taken it into account; a stream keeps records 24 hours, by shard, at least
once, and tests and development would run a different path than production.

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
- a liker the author blocked or muted counts as not liking (their like still counts on the
  comment): not listed, or taken out as above. A block writes a `silence` event for each
  unread notification listing them (notifications/silence.py), so that fold happens at once.
- anything else changes nothing. So a person who likes, unlikes and likes again counts
  once in the unread notification however their events were split between folds; once
  it is read, their like again within the window does not raise it again, and flapping
  before a read raises it at most once more (a read while the notification shows nothing
  does not reach its item).

Exactly once: the commit point is one write of the notification conditioned on it still
holding what was read, so two folders (or a fold and a mark-read) cannot both apply the
same likes; the markers, badge item, lines and the events' delete are idempotent plain
writes after it, the delete last, so a crash anywhere leaves the events pending and their
next fold completes the rest (`_fold_commit`). A folder's batches of one comment overlap
by one: the next is read and committed while the one before finishes, and its commit
waits for that one's markers. A like on a hidden or deleted comment is dropped here: never listed,
never counted in the badge. Self-likes notify nobody. Every fold raises the counter's due
flag (ranking).

Reactions are folded the same way, under the subject `reaction#<comment id>`
(notifications/subjects.py) in place of the comment id: a reactor "likes" while any of their
six reaction rows exists, the author's `reaction` preferences decide, the reaction counter's
due flag is raised, and the notification and badge items are the reaction subject's own.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, replace
from typing import Any

from pynamodb.transactions import TransactWrite

from notifications.like_fold_plan import FoldFacts, fold_decide
from notifications.like_fold_steps import (
    Fold,
    FoldReads,
    activity_lines,
    badge_sync,
    chunks,
    events_delete,
    fold_reads,
    like_mail_schedule,
    markers_get,
    markers_put,
    markers_put_async,
    markers_written,
    notification_write,
    notified_at,
    renotify_window,
)
from notifications.mail.queue import PUSH
from notifications.models import LikeEvent
from notifications.preferences.selectors import thread_state
from notifications.services import likers_max
from notifications.subjects import REACTION, subject_comment, subject_kind
from project.clock import clock
from project.serving.pools import FINISH, READS, WRITES, pool
from social.counter_compaction import counter_compact
from social.counters import LIKES, REACTIONS, counter_due_flag_raise, counter_key
from social.live import live_comment, live_signal_items, live_user
from social.models import Comment
from social.relations.selectors import silenced_ids
from social.selectors import comment_thread_id

logger = logging.getLogger(__name__)

LIKE = "like"
UNLIKE = "unlike"
# A block's or mute's trigger (notifications/silence.py): no action of the liker's, only a
# reason to fold their state again, which the block changed.
SILENCE = "silence"
# Events one fold takes (one Query page). The notification lists the likers a fold notified
# (`fold_notified`): a few short ids for a quiet comment, at most 45 when a storm's folds
# amortise a bigger item over as many likes.
FOLD_EVENTS_MAX = 45
FOLD_ATTEMPTS = 8
# A fold of one comment goes on past a partial batch of at least FOLD_CONTINUE_MIN events
# (likes arrive while it folds) for this long, its batches overlapping, before the folder
# moves on (compaction, the next Scan): a hot comment's events wait for a batch, not a pass.
FOLD_CONTINUE_MIN = 4
FOLD_CONTINUE_SECONDS = 2.0
PENDING_SCAN_LIMIT = 200
# How long the polling folder leaves an event to the request that folds it (`request_folds`):
# far longer than a fold takes after its answer, even on a busy machine. An event whose
# request died or failed to fold is folded this much later.
REQUEST_FOLD_GRACE_SECONDS = 5.0


def like_event_add(
    transaction: TransactWrite,
    *,
    author_id: str,
    comment_id: str,
    liker_id: str,
    kind: str,
    request_folds: bool = False,
    thread_id: str | None = None,
) -> LikeEvent:
    """Add the like's (or unlike's) event to its transaction: a put under a fresh key, no condition.

    No index: an event item under 1 KB in a table of its own costs 2 write units in the
    like's transaction, the least an outbox entry can cost. The fold writes the person's
    activity-log line from it (`activity_lines`), under a key derived from the event id.
    `request_folds`: the request folds it once answered (notifications/like_fold_requests.py);
    `thread_id`: the comment's thread, whose state for the author the fold then reads with the rest.
    """
    event_id = f"{clock.now_ns():020d}#{uuid.uuid4().hex[:12]}"
    event = LikeEvent(comment_id, event_id, author_id=author_id, liker_id=liker_id, kind=kind, created_at=clock.now())
    if request_folds:
        event.request_folds = True
    event.thread_id = thread_id
    transaction.save(event)
    return event


def like_event_put(*, author_id: str, comment_id: str, liker_id: str, kind: str = SILENCE) -> None:
    """A plain put of an event outside any like (a block's trigger): the comment's next fold
    takes the liker's state again. Twice: two events, folded as one (the fold is state-based)."""
    event_id = f"{clock.now_ns():020d}#{uuid.uuid4().hex[:12]}"
    LikeEvent(comment_id, event_id, author_id=author_id, liker_id=liker_id, kind=kind, created_at=clock.now()).save()


def _plan(*, comment_id: str, events: list[LikeEvent], previous: _Committed | None = None) -> Fold:
    """Read what the fold needs (comment, notification, badge item, like rows, markers) and decide
    (`fold_decide`, notifications/like_fold_plan.py: no I/O).

    The reads are one BatchGetItem (`fold_reads`) beside the author's block list (a Query),
    concurrently: one round trip of latency. The markers
    of the last fold's likers (its journal) are a second one, after the notification, unless
    that fold is `previous`, this folder's own batch right before, whose markers are being
    written: then this fold counts them as notified and waits for those writes before its
    commit (`_fold_commit`), instead of reading them.
    """
    author_id = events[0].author_id
    likers = list(dict.fromkeys(e.liker_id for e in events if e.liker_id != author_id))
    # The people the author blocked or muted, once per batch (one Query of a small list): for
    # the notification they do not like the comment (their likes still count).
    silenced = pool(READS).submit(silenced_ids, user_id=author_id) if likers else None
    # With the author's choices, once per batch (strongly: they decide whom this fold notifies).
    # The thread the likes name (all the same: one comment), so the author's state in it is read too.
    threads = {event.thread_id for event in events}
    thread_id = threads.pop() if len(threads) == 1 else None
    reads = fold_reads(comment_id=comment_id, author_id=author_id, likers=likers, thread_id=thread_id)
    fold = Fold(comment_id, author_id, events, reads.unread, reads.badge)
    if previous is not None and previous.markers is not None and fold.unread and fold.old_seq == previous.seq:
        # The notification is as `previous` committed it: its journal is `previous.notify`.
        fold.markers_in_flight = previous.markers
        markers = reads.markers
    else:
        # The last fold's likers have markers unless it died before writing them (rare: read apart).
        journal_rest = [x for x in fold.journal if x not in likers]
        markers = {**markers_get(comment_id, journal_rest), **reads.markers}
    found = reads.comment
    facts = FoldFacts(
        likers=likers,
        liking=reads.liked - (silenced.result() if silenced is not None else frozenset()),
        notified_at={liker: notified_at(marker) for liker, marker in markers.items()},
        visible=found is not None and not found.hidden and not found.deleted_at,
        hears=True,
        mail_wanted=reads.preferences.wants(subject_kind(comment_id), "email"),
        push_wanted=reads.preferences.wants(subject_kind(comment_id), "push"),
        now=clock.now(),
        window=renotify_window(),
        most=likers_max(),
    )
    decided = fold_decide(fold, facts)
    # Whether the author takes them is read only when someone is to be notified (the thread's mute).
    kind = subject_kind(comment_id)
    if decided.notify and found is not None and not _author_hears(reads, author_id=author_id, comment=found, kind=kind):
        decided = fold_decide(fold, replace(facts, hears=False))
    return decided


def _author_hears(reads: FoldReads, *, author_id: str, comment: Comment, kind: str) -> bool:
    """Whether the author takes `kind`'s notifications (like, reaction) of this comment: on in their inbox, and
    its thread not muted (read with the fold's other reads when the events named the thread,
    else one consistent GetItem; either way only when someone is to be notified)."""
    if not reads.preferences.wants(kind, "inbox"):
        return False
    thread_id = comment_thread_id(comment)
    if reads.thread is not None and reads.thread[0] == thread_id:
        return reads.thread[1] != "mute"
    return thread_state(thread_id=thread_id, user_id=author_id) != "mute"


def _fold_read(comment_id: str, previous: _Committed | None, given: list[LikeEvent] | None = None) -> Fold | None:
    """Read a batch of pending events of one comment and plan its fold (None: nothing pending).

    After `previous` (this folder's batch right before, whose events are not deleted yet),
    the Query starts past its last event; an event committed meanwhile under an older key
    is left to the next pass. `given`: these events, not read (the requests that wrote them
    fold them: notifications/like_fold_requests.py); one already folded is folded again, which
    changes nothing.
    """
    if given is not None:
        return _plan(comment_id=comment_id, events=given, previous=None) if given else None
    after = {"comment_id": {"S": comment_id}, "event_id": {"S": previous.last_event_id}} if previous else None
    events = list(LikeEvent.query(comment_id, consistent_read=True, limit=FOLD_EVENTS_MAX, last_evaluated_key=after))
    return _plan(comment_id=comment_id, events=events, previous=previous) if events else None


@dataclass
class _Committed:
    """A batch past its commit point, its later steps (3-7 of `_fold_commit`) under way in `finish`."""

    seq: int  # the notification's `seq` as this batch left it
    notify: list[str]
    markers: list[Future[None]] | None  # this batch's marker writes (None: it notified nobody)
    last_event_id: str
    count: int
    finish: Future[None]


def _fold_commit(
    *, comment_id: str, attempts: int, previous: _Committed | None = None, given: list[LikeEvent] | None = None
) -> _Committed | None:
    """Fold up to FOLD_EVENTS_MAX pending events of one comment up to its commit point, and start the rest.

    Plain writes, each idempotent, in an order that makes any prefix safe to repeat:
    1. the markers the last fold did not write (its likers are in the notification's journal;
       if that fold is `previous`, its own marker writes, awaited);
    2. the notification, on condition it still holds what was read (the commit point; a
       changed notification is re-read and planned again, up to `attempts` times);
    3. this fold's markers; 4. the badge item, to the notification's count unless a newer
    state is there; 5. the counter's due flag; 6. the likers' activity lines (3-6 at once);
    7. the live signal for open pages (social/live.py: best effort), then the events. A crash
    anywhere leaves the events pending, and their next fold finds the notification as this
    one left it, changes nothing there and finishes steps 3-7 (signalling again: harmless).

    Returns once step 2 is done (None: nothing pending, or `attempts` lost races); steps
    3-7 run in the background (`finish`). So a folder reads and commits its next batch while
    this one finishes: the next batch's commit waits for this one's markers (step 1), and a
    crash of both leaves this batch's events pending, to be completed as above.
    """
    for _ in range(attempts):
        fold = _fold_read(comment_id, previous, given)
        if fold is None:
            return None
        now = clock.now()
        if fold.unmarked and not (fold.markers_in_flight is not None and markers_written(fold.markers_in_flight)):
            markers_put(comment_id, fold.unmarked, float(fold.unread.fold_at or now) if fold.unread else now)
        if fold.mail:
            # Before the commit point: a fold that dies after the commit has already scheduled it,
            # and one whose commit then fails leaves an item the sender finds unread-less and skips.
            like_mail_schedule(fold)
        if fold.push:
            like_mail_schedule(fold, channel=PUSH)
        if fold.changes and not notification_write(fold, now):
            logger.info("fold of %s: the notification changed meanwhile, re-read", comment_id)
            continue
        break
    else:
        return None
    # Steps 3-6 depend on nothing but the commit: one round trip of latency, then the events.
    markers = markers_put_async(comment_id, fold.notify, now) if fold.changes else None
    steps = [
        *(markers or []),
        pool(WRITES).submit(counter_due_flag_raise, key=_counter(comment_id)),
        *[pool(WRITES).submit(activity_lines, chunk) for chunk in chunks(fold.events)],
    ]
    if fold.notify:
        steps.append(pool(WRITES).submit(_silenced_since_read, fold))
    if fold.changes:
        steps.append(pool(WRITES).submit(badge_sync, fold, count=fold.new_count, seq=fold.old_seq + 1))
    elif fold.unread is not None:
        steps.append(pool(WRITES).submit(badge_sync, fold, count=fold.old_count, seq=fold.old_seq))
    return _Committed(
        seq=fold.old_seq + 1 if fold.changes else fold.old_seq,
        notify=fold.notify,
        markers=markers,
        last_event_id=fold.events[-1].event_id,
        count=len(fold.events),
        finish=pool(FINISH).submit(_fold_finish, fold, steps),
    )


def _counter(subject: str) -> str:
    """The counter whose due flag a fold raises: the comment's like counter, or its reaction counter."""
    kind = REACTIONS if subject_kind(subject) == REACTION else LIKES
    return counter_key(kind=kind, object_id=subject_comment(subject))


def _silenced_since_read(fold: Fold) -> None:
    """After the commit: the likers it notified whom the author blocked or muted since the batch's
    read get a trigger event, so the next fold takes them out again.

    Closes the race with a block: the block's retraction (notifications/silence.py) reads the
    author's unread notifications after the block committed; a fold that read the list before
    the block and committed after that read is the one case it cannot see, and this read, made
    after the commit, sees the block. One Query, only for a batch that notified someone; a fold
    that dies before it leaves its events, and their next fold reads the list anew.
    """
    for liker in sorted(set(fold.notify) & silenced_ids(user_id=fold.author_id)):
        like_event_put(author_id=fold.author_id, comment_id=fold.comment_id, liker_id=liker)


def _fold_finish(fold: Fold, steps: list[Future[Any]]) -> None:
    failures = []
    for step in steps:  # every step ends before this does, so nothing of the batch outlives it
        try:
            step.result()
        except BaseException as error:
            failures.append(error)
    if failures:  # the events stay for the next fold, which repeats these steps
        raise failures[0]
    # Open pages follow: the count moved (the events' likes and unlikes), the badge if it did.
    # The signal goes in the events' delete request: one round trip.
    comment_signal = live_comment(subject_comment(fold.comment_id))
    signals = live_signal_items([comment_signal, live_user(fold.author_id) if fold.changes else ""])
    events_delete(fold.events, signals=signals)
    if fold.changes:
        logger.info(
            "folded %d like event(s) of %s: +%d notified, -%d withdrawn",
            len(fold.events),
            fold.comment_id,
            len(fold.notify),
            len(fold.withdraw),
        )


def fold_batch(*, comment_id: str, attempts: int, events: list[LikeEvent] | None = None) -> int:
    """Fold up to FOLD_EVENTS_MAX pending events of one comment (or these `events` of it, unread),
    every step (`_fold_commit`); returns how many."""
    batch = _fold_commit(comment_id=comment_id, attempts=attempts, given=events)
    if batch is None:
        return 0
    batch.finish.result()
    return batch.count


def _settled(batch: _Committed | None) -> None:
    """Wait for a batch's later steps, whatever else failed (nothing runs on after the fold returns)."""
    if batch is not None:
        with contextlib.suppress(Exception):
            batch.finish.result()


def like_events_fold(
    *, comment_id: str, attempts: int = FOLD_ATTEMPTS, stop: Callable[[], bool] = lambda: False
) -> int:
    """Fold every pending like event of one comment into its author's notification; returns how many.

    Exactly once: each batch's notification write is conditioned on the notification still
    holding what was read, and the fold follows the like rows, markers and notification as
    they are, so a second folder (or a rerun after a crash) folds nothing twice and loses
    nothing: a crash before that write leaves the events pending, after it leaves steps that
    the next fold completes (`_fold_commit`). Concurrent folders of one comment: one wins
    each batch, the others re-read. A hot comment's batches overlap by one: the next one is
    read and committed while the last one's later steps and delete finish. `stop` is asked
    after each batch (a stopping worker leaves the rest to the next folder).
    """
    folded = 0
    previous: _Committed | None = None
    batch: _Committed | None = None
    started = clock.monotonic()
    try:
        while True:
            batch = _fold_commit(comment_id=comment_id, attempts=attempts, previous=previous)
            if previous is not None:
                previous.finish.result()  # at most one batch's later steps in flight
            if batch is None:
                break
            folded += batch.count
            # A partial batch ends the fold, unless likes keep coming (a hot comment): then
            # the next batch follows at once, for up to FOLD_CONTINUE_SECONDS (other comments wait).
            hot = batch.count >= FOLD_CONTINUE_MIN and clock.monotonic() - started < FOLD_CONTINUE_SECONDS
            if stop() or (batch.count < FOLD_EVENTS_MAX and not hot):
                batch.finish.result()
                break
            previous = batch
    except BaseException:
        _settled(previous)
        _settled(batch)
        raise
    # Reactions are never compacted: their shard numbers name the reaction (social/reactions/names.py).
    if folded and subject_kind(comment_id) != REACTION:
        try:  # keep the comment's count one small read (social/counters.py)
            counter_compact(key=_counter(comment_id))
        except Exception as error:  # a like on a shard meanwhile: the next fold compacts
            logger.info("like counter of %s not compacted (%s)", comment_id, type(error).__name__)
    return folded


def like_events_pending_comments(
    *, limit: int = PENDING_SCAN_LIMIT, consistent: bool = False, leave_to_requests: bool = False
) -> list[str]:
    """Comments with pending like events: one page of a Scan of `like_events`.

    The table holds only events not folded yet (a fold deletes its events), so its size
    is the backlog: an empty poll reads nothing and costs the minimum half read unit,
    where a write-sharded index would cost a Query per partition and a write per event.
    Eventually consistent unless `consistent`: an event a moment too new for it is found
    by the next poll, and an event folded a moment ago may still be listed (its comment's
    fold then reads no event and writes nothing). `leave_to_requests`: a comment whose only
    events are younger than REQUEST_FOLD_GRACE_SECONDS and folded by their requests is not listed.
    """
    found: dict[str, None] = {}
    events = LikeEvent.scan(
        limit=limit,
        page_size=limit,
        attributes_to_get=["comment_id", "event_id", "request_folds"],
        consistent_read=consistent,
    )
    since = clock.now_ns() - int(REQUEST_FOLD_GRACE_SECONDS * 1e9)
    for event in events:
        if leave_to_requests and event.request_folds and int(event.event_id.split("#", 1)[0]) > since:
            continue
        found.setdefault(event.comment_id)
    return list(found)


def like_events_fold_pending(
    *, stop: Callable[[], bool] = lambda: False, consistent: bool = False, leave_to_requests: bool = False
) -> int:
    """Fold the pending events of every comment one Scan page lists; returns how many events.

    Several folders may run at once, on several machines: they may pick the same
    comment, and the fold's conditions let one of them fold each batch. A comment whose
    fold fails is logged and left for the next pass. `leave_to_requests`: the polling
    folder's pass, which leaves fresh events to the requests that fold them.
    """
    folded = 0
    for comment_id in like_events_pending_comments(consistent=consistent, leave_to_requests=leave_to_requests):
        if stop():
            break
        try:
            folded += like_events_fold(comment_id=comment_id, stop=stop)
        except Exception:
            logger.exception("fold of the like events of %s failed; left for the next pass", comment_id)
    return folded


def like_events_fold_until_idle(*, stop: Callable[[], bool] = lambda: False, idle_passes: int = 50) -> int:
    """Fold until `like_events` holds nothing (the command without --loop, tests, benchmarks).

    Its Scans are strongly consistent (1 read unit a page where the polling folder pays
    half): "nothing left" must see an event committed a moment ago, which an eventually
    consistent Scan may not list yet on AWS. Gives up after `idle_passes` passes in a row
    that folded nothing while the table still held events (a comment whose fold keeps failing).
    """
    folded, idle = 0, 0
    while not stop() and idle < idle_passes:
        done = like_events_fold_pending(stop=stop, consistent=True)
        folded += done
        if done:
            idle = 0
            continue
        if not like_events_pending_comments(limit=1, consistent=True):
            break
        idle += 1
        clock.sleep(0.1)
    return folded
