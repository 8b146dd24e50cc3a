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
next fold completes the rest (batches.py `_fold_commit`). A folder's batches of one comment overlap
by one: the next is read and committed while the one before finishes, and its commit
waits for that one's markers. A like on a hidden or deleted comment is dropped here: never listed,
never counted in the badge. Self-likes notify nobody. Every fold raises the counter's due
flag (ranking).

Reactions are folded the same way, under the subject `reaction#<comment id>`
(notifications/subjects.py) in place of the comment id: a reactor "likes" while any of their
six reaction rows exists, the author's `reaction` preferences decide, the reaction counter's
due flag is raised, and the notification and badge items are the reaction subject's own.

The package, by seam: requests.py (how a fold is asked for: the like's event, the fold after
the answer), reads.py (what a batch reads), decide.py (`Fold`, its facts and the decision, no
I/O), writes.py (the writes it makes), batches.py (how they run, batch by batch, and the
polling folder's pass); what a fold does in `social` is one call (social/fold_effects.py).
"""

from notifications.like_fold.batches import (
    FOLD_EVENTS_MAX,
    REQUEST_FOLD_GRACE_SECONDS,
    fold_batch,
    like_events_fold,
    like_events_fold_pending,
    like_events_fold_until_idle,
    like_events_pending_comments,
)
from notifications.like_fold.requests import like_event_add, like_events_fold_after_response, request_folds_claim
from notifications.like_fold.writes import LIKE, SILENCE, UNLIKE, like_event_put

__all__ = [
    "FOLD_EVENTS_MAX",
    "LIKE",
    "REQUEST_FOLD_GRACE_SECONDS",
    "SILENCE",
    "UNLIKE",
    "fold_batch",
    "like_event_add",
    "like_event_put",
    "like_events_fold",
    "like_events_fold_after_response",
    "like_events_fold_pending",
    "like_events_fold_until_idle",
    "like_events_pending_comments",
    "request_folds_claim",
]
