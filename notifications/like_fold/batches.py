"""How a like fold runs: one comment's pending events, batch by batch (the package's
docstring, notifications/like_fold/__init__.py, says what the fold does and why).

Each batch is read (reads.py), decided once (decide.py), committed with one conditional
write of the notification and finished with plain idempotent writes (writes.py) and one
call into `social` (social/fold_effects.py: the counter's due flag, the likers' activity
lines, the live signal). The polling folder's pass (`like_events_fold_pending`) is here too;
how a request asks for its own fold is requests.py.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from notifications.like_fold.decide import Fold, fold_decide
from notifications.like_fold.reads import batch_read
from notifications.like_fold.writes import (
    PERSON_ACTIONS,
    badge_sync,
    events_delete,
    like_event_put,
    like_mail_schedule,
    markers_put,
    markers_put_async,
    markers_written,
    notification_write,
)
from notifications.mail.queue import PUSH
from notifications.models import LikeEvent
from notifications.subjects import REACTION, subject_comment, subject_kind
from project.clock import clock
from project.serving.pools import FINISH, WRITES, pool
from social.activity.services import ActivityLine
from social.counter_compaction import counter_compact
from social.counters import LIKES, REACTIONS, counter_key
from social.fold_effects import FoldEffects, fold_effects_start
from social.relations.selectors import silenced_ids

logger = logging.getLogger("notifications.like_fold")

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


def _plan(*, comment_id: str, events: list[LikeEvent], previous: _Committed | None = None) -> Fold:
    """Read a batch (reads.py `batch_read`: the author's state in the thread with the rest) and
    decide its fold, once (decide.py: no I/O).

    After `previous`, this folder's own batch right before, whose markers are being written,
    this fold counts them as notified and waits for those writes before its commit
    (`_fold_commit`), instead of reading them.
    """
    in_flight = (previous.seq, previous.markers) if previous is not None and previous.markers is not None else None
    fold, facts = batch_read(comment_id=comment_id, events=events, previous=in_flight)
    return fold_decide(fold, facts)


def _fold_read(comment_id: str, previous: _Committed | None, given: list[LikeEvent] | None = None) -> Fold | None:
    """Read a batch of pending events of one comment and plan its fold (None: nothing pending).

    After `previous` (this folder's batch right before, whose events are not deleted yet),
    the Query starts past its last event; an event committed meanwhile under an older key
    is left to the next pass. `given`: these events, not read (the requests that wrote them
    fold them: requests.py); one already folded is folded again, which changes nothing.
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
    state is there; 5. the counter's due flag; 6. the likers' activity lines (3-6 at once; 5
    and 6 are `social`'s, social/fold_effects.py); 7. the live signal for open pages (social/live.py:
    best effort), in one request with the events' delete. A crash
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
    # What the batch does in `social`, in one call: the due flag and the activity lines now, the signal last.
    social = fold_effects_start(
        counter=_counter(comment_id),
        comment_id=subject_comment(comment_id),
        lines=_activity_lines(fold.events),
        badge_of=fold.author_id if fold.changes else None,
    )
    steps = [*(markers or []), *social.writes]
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
        finish=pool(FINISH).submit(_fold_finish, fold, steps, social),
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


def _activity_lines(events: list[LikeEvent]) -> list[ActivityLine]:
    """The likers' activity-log lines, under keys derived from the event ids: written again
    by a fold that repeats an event, they land on the same items (exactly one line per like)."""
    return [
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


def _fold_finish(fold: Fold, steps: list[Future[Any]], social: FoldEffects) -> None:
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
    events_delete(fold.events, signals=social.signals())
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
