"""How a fold is asked for: the event a like's transaction carries, and the fold by the
liking request itself once its answer is sent (the package's docstring,
notifications/like_fold/__init__.py, explains the fold and who else folds).

Which comments this process's requests are folding, and how often each was liked in the
last second, is per process and only an optimisation: a request that does not fold its like
leaves it to the folder; nothing here is needed for a like to be folded exactly once.
"""

from __future__ import annotations

import logging
import threading
from collections import deque

from pynamodb.transactions import TransactWrite

from notifications.like_fold import batches
from notifications.like_fold.writes import like_event
from notifications.models import LikeEvent
from project.clock import clock

logger = logging.getLogger("notifications.like_fold")

# Comments a request of this process is folding, and the events other requests handed it meanwhile.
_folding_here: dict[str, list[LikeEvent]] = {}
_folding_lock = threading.Lock()
# A comment liked this often per second in this process is hot: its requests leave the
# fold to the folder, which takes up to FOLD_EVENTS_MAX of its events per write.
HOT_LIKES_PER_SECOND = 8
_recent_likes: dict[str, deque[float]] = {}


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
    activity-log line from it, under a key derived from the event id. `request_folds`: the
    request folds it once answered (`like_events_fold_after_response`); `thread_id`: the
    comment's thread, whose state for the author the fold then reads with the rest.
    """
    event = like_event(author_id=author_id, comment_id=comment_id, liker_id=liker_id, kind=kind)
    if request_folds:
        event.request_folds = True
    event.thread_id = thread_id
    transaction.save(event)
    return event


def _hot(comment_id: str, now: float) -> bool:
    recent = _recent_likes.setdefault(comment_id, deque())
    recent.append(now)
    while recent and recent[0] < now - 1.0:
        recent.popleft()
    if len(_recent_likes) > 10_000:  # forget quiet comments
        for quiet in [key for key, times in _recent_likes.items() if not times or times[-1] < now - 1.0]:
            _recent_likes.pop(quiet, None)
    return len(recent) > HOT_LIKES_PER_SECOND


def request_folds_claim(*, comment_id: str) -> bool:
    """Whether a like of `comment_id` about to be written is folded by its own request once
    answered: not on a hot comment (more than HOT_LIKES_PER_SECOND likes a second in this
    process), where folds would cancel each other and the folder takes many events per write.
    Asked before the like's transaction, whose event records the answer (`request_folds`)."""
    with _folding_lock:
        return not _hot(comment_id, clock.monotonic())


def like_events_fold_after_response(*, event: LikeEvent) -> None:
    """Best effort, once the like's answer is sent: fold its `event` (known, so not read); never
    raises (the folder does the rest, after `batches.REQUEST_FOLD_GRACE_SECONDS`).

    One attempt per batch. While another request of this process folds the same comment,
    this one starts no second fold (they would cancel each other): it hands its event to that
    fold, which folds the events handed to it as its next batch once it is done.
    """
    comment_id = event.comment_id
    with _folding_lock:
        if comment_id in _folding_here:
            _folding_here[comment_id].append(event)
            return
        _folding_here[comment_id] = []
    events = [event]
    try:
        while events:
            batches.fold_batch(comment_id=comment_id, attempts=1, events=events)
            with _folding_lock:
                handed = _folding_here[comment_id]
                events, handed[:] = handed[: batches.FOLD_EVENTS_MAX], handed[batches.FOLD_EVENTS_MAX :]
                if not events:
                    del _folding_here[comment_id]
    except Exception as error:  # the likes are committed; their events wait for fold_like_events
        logger.info("like events of %s left to fold_like_events (%s)", comment_id, type(error).__name__)
        with _folding_lock:
            _folding_here.pop(comment_id, None)
