"""What a like (or reaction) fold does in `social`, begun by one call (notifications/like_fold/).

The fold writes the author's side (notification, badge, markers); for the batch of events it
folded, `social` keeps the rest: the counter's due flag (the ranking aggregates the count,
social/counters.py), the likers' activity-log lines (social/activity/services.py), and the
live signal for open pages (social/live.py), which the fold puts with its events' delete, one
BatchWriteItem, once its other steps are done.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from project.serving.pools import WRITES, pool
from social.activity.services import BATCH_WRITE_MAX, ActivityLine, activity_record_keyed
from social.counters import counter_due_flag_raise
from social.live import live_comment, live_signal_items, live_user
from social.models import LiveChange


@dataclass(frozen=True)
class FoldEffects:
    """A fold's writes in `social`, under way, and the live signal it puts last."""

    writes: list[Future[Any]]  # the due flag, and the activity lines 25 a request
    comment_id: str
    badge_of: str | None  # the author, when the fold moved their badge

    def signals(self) -> list[LiveChange]:
        """The live signal's items, made when the fold is about to put them (so stamped after
        its writes): the comment's count moved, and the author's badge if it did."""
        return live_signal_items([live_comment(self.comment_id), live_user(self.badge_of) if self.badge_of else ""])


def fold_effects_start(
    *, counter: str, comment_id: str, lines: list[ActivityLine], badge_of: str | None
) -> FoldEffects:
    """Start a folded batch's writes here, all at once on the `writes` tier (project/serving/pools.py):
    raise `counter`'s due flag, and put the activity `lines` (keyed by their events).

    Twice (a fold repeated after a crash): the flag is raised again (at most one more
    aggregation), the lines land on the same items, and the signal is put again (a poll reads
    once more). The caller waits for `writes` before it puts `signals()`; a write that fails
    leaves the fold's events pending, and their next fold repeats this.
    """
    writes: list[Future[Any]] = [pool(WRITES).submit(counter_due_flag_raise, key=counter)]
    for start in range(0, len(lines), BATCH_WRITE_MAX):
        writes.append(pool(WRITES).submit(activity_record_keyed, lines=lines[start : start + BATCH_WRITE_MAX]))
    return FoldEffects(writes=writes, comment_id=comment_id, badge_of=badge_of)
