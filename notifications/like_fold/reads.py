"""What a like fold reads of a batch before it decides (notifications/like_fold/decide.py).

One strongly consistent BatchGetItem across the tables a batch touches (`fold_reads`) beside
the author's block list, and with them the author's state in the comment's thread, so the
decision runs once per batch on everything it needs (`batch_read`).
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from pynamodb.models import Model

from notifications.like_fold.decide import Fold, FoldFacts
from notifications.models import LikeEvent, LikeNotified, LikeUnread, Preferences, ThreadSubscription, UnreadCount
from notifications.preferences.selectors import NotifyPreferences, preferences_from_item, thread_state
from notifications.services import like_source, likers_max
from notifications.subjects import REACTION, subject_comment, subject_kind
from project.clock import clock
from project.dynamo.batch_get import batch_get_many
from project.serving.pools import READS, pool
from social.models import Comment, Like, Reaction
from social.reactions.names import NAMES, reactor_key
from social.relations.selectors import silenced_ids
from social.selectors import comment_thread_id


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


def batch_read(
    *, comment_id: str, events: list[LikeEvent], previous: tuple[int, list[Future[None]]] | None = None
) -> tuple[Fold, FoldFacts]:
    """Read what the fold of these events needs (comment, notification, badge item, like rows,
    markers, the author's choices and state in the thread): the batch's `Fold`, undecided, and
    the `FoldFacts` its decision takes.

    The reads are one BatchGetItem (`fold_reads`) beside the author's block list (a Query),
    concurrently: one round trip of latency. The markers of the last fold's likers (its journal)
    are a second one, after the notification, unless that fold is `previous` (its `seq` and its
    marker writes), this folder's own batch right before, whose markers are being written: then
    this fold counts them as notified and waits for those writes before its commit, instead of
    reading them.
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
    if previous is not None and fold.unread and fold.old_seq == previous[0]:
        # The notification is as `previous` committed it: its journal is `previous`'s likers.
        fold.markers_in_flight = previous[1]
        markers = reads.markers
    else:
        # The last fold's likers have markers unless it died before writing them (rare: read apart).
        journal_rest = [x for x in fold.journal if x not in likers]
        markers = {**markers_get(comment_id, journal_rest), **reads.markers}
    found = reads.comment
    visible = found is not None and not found.hidden and not found.deleted_at
    liking = reads.liked - (silenced.result() if silenced is not None else frozenset())
    kind = subject_kind(comment_id)
    # Only a liker not listed yet can be notified: without one, whether the author hears
    # changes nothing, and the thread's state is not read apart.
    candidates = visible and any(liker in liking and liker not in fold.old_list for liker in likers)
    facts = FoldFacts(
        likers=likers,
        liking=liking,
        notified_at={liker: notified_at(marker) for liker, marker in markers.items()},
        visible=visible,
        hears=_author_hears(reads, comment=found, author_id=author_id, kind=kind) if found and candidates else True,
        mail_wanted=reads.preferences.wants(kind, "email"),
        push_wanted=reads.preferences.wants(kind, "push"),
        now=clock.now(),
        window=renotify_window(),
        most=likers_max(),
    )
    return fold, facts


def _author_hears(reads: FoldReads, *, comment: Comment, author_id: str, kind: str) -> bool:
    """Whether the author takes `kind`'s notifications (like, reaction) of `comment`: on in
    their inbox, and its thread not muted (read with the batch when the events named the thread,
    else one consistent GetItem, only when someone may be notified)."""
    if not reads.preferences.wants(kind, "inbox"):
        return False
    thread_id = comment_thread_id(comment)
    if reads.thread is not None and reads.thread[0] == thread_id:
        return reads.thread[1] != "mute"
    return thread_state(thread_id=thread_id, user_id=author_id) != "mute"
