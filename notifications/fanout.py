"""Who hears of a comment: its parent's author, the people it @mentions, its thread's watchers.

A comment's notifications are promised in the comment's own transaction by **one** item in
`feed_retry` (an outbox entry whatever the number of people: a thread can have thousands of
watchers, a transaction holds at most 100 actions), the `FanOut`, an outbox job
(notifications/outbox.py: how it is recorded, claimed, resumed and completed). The request
runs it once it has answered (`outbox_send`: at most FANOUT_INLINE_MAX people, never raising),
and `process_feed_retries` runs it otherwise, or for the rest (at most FANOUT_DRAIN_MAX people
per claim, then again from where it stopped).

The expansion reads the thread's watch and mute states (one consistent Query) and the
preferences of the people it notifies (one BatchGetItem per 100), decides one entry per
person (a reply to your comment before a mention before a watched thread; none for the
author, none in a muted thread, none where the person turned that kind's inbox off), and
writes each person's feed with `feed_append`. Each person's event has an id of its own
(`reply:`, `mention:` or `thread:` and the comment id), so an expansion repeated after a
crash, or run by the request and a drainer at once, writes nobody's entry twice: the feed
finds the event applied. People are taken in user-id order and the item keeps the last one
done (`done_through`), so a long expansion resumes where it stopped instead of re-reading
every feed; nothing is lost if the process dies at any point (the item stays until the
expansion ends, and is due again after OUTBOX_DELAY_MS).
"""

from __future__ import annotations

from concurrent.futures import wait
from dataclasses import dataclass, field, replace
from typing import ClassVar

from notifications.feed.events import MENTION_KIND, PREFERENCE_KINDS, THREAD_KIND, FeedEvent
from notifications.feed.services import feed_append
from notifications.outbox import OutboxJob, OutboxRun
from notifications.preferences.selectors import preferences_get_many, thread_states
from notifications.preferences.services import thread_watch_if_unset
from project.serving.pools import WRITES, pool
from social.models import Comment

REPLY_KIND = "reply"
# People the replying request notifies itself once it has answered: a reply's usual few
# (its parent's author, a mention, some watchers); a big thread's others are the drainer's.
FANOUT_INLINE_MAX = 10
FANOUT_DRAIN_MAX = 500  # people per claim of the drainer (well within its one-minute lease)


@dataclass(frozen=True)
class FanOut(OutboxJob):
    """What a comment (or an edit) promised to notify, as stored in its `feed_retry` item
    (`fanout#<comment_id>`, an edit's `fanout#<comment_id>#<key>`, sharded by the comment)."""

    kind: ClassVar[str] = "fanout"

    comment_id: str
    actor_id: str  # who wrote it: never notified
    thread_id: str
    created_at: str
    parent_id: str | None = None
    parent_author_id: str | None = None  # told "replied to your comment"
    mention_ids: list[str] = field(default_factory=list)  # told "mentioned you" (already limited)
    watchers: bool = False  # a reply: the thread's watchers hear of it, and the replier watches it
    key: str = ""  # tells an edit's item from the comment's (one comment, several items)
    done_through: str = ""  # the last person done, in user-id order (a resumed expansion starts after)

    @property
    def job_id(self) -> str:
        return f"{self.comment_id}{'#' + self.key if self.key else ''}"

    @property
    def user_id(self) -> str:
        return self.actor_id

    @property
    def shard_key(self) -> str:
        return self.comment_id

    def run(self, *, inline: bool) -> OutboxRun:
        """Notify the next FANOUT_INLINE_MAX people (the request) or FANOUT_DRAIN_MAX (a drainer)."""
        done, done_through = fanout_expand(self, budget=FANOUT_INLINE_MAX if inline else FANOUT_DRAIN_MAX)
        return OutboxRun(rest=None if done else replace(self, done_through=done_through))

    def event(self, kind: str) -> FeedEvent:
        """The event a person of `kind` gets: its id names the comment, so it applies once per person."""
        rollup = {REPLY_KIND: f"reply#{self.parent_id}", THREAD_KIND: f"thread#{self.thread_id}"}.get(kind)
        return FeedEvent(
            event_id=f"{kind}:{self.comment_id}",
            kind=kind,
            actor_id=self.actor_id,
            rollup_key=rollup,  # a mention is one entry of its own ("Bob mentioned you")
            object_id=self.comment_id,  # the entry shows the comment's text, read when the feed is shown
            created_at=self.created_at,
        )


def fanout_recipients(fanout: FanOut, states: dict[str, str]) -> dict[str, list[str]]:
    """Each person to notify -> the kinds they could be told, best first (reply > mention > watch)."""
    kinds: dict[str, list[str]] = {}

    def offer(user_id: str | None, kind: str) -> None:
        if user_id and user_id != fanout.actor_id and kind not in kinds.get(user_id, []):
            kinds.setdefault(user_id, []).append(kind)

    offer(fanout.parent_author_id, REPLY_KIND)
    for user_id in fanout.mention_ids:
        offer(user_id, MENTION_KIND)
    if fanout.watchers:
        for user_id, state in states.items():
            if state == "watch":
                offer(user_id, THREAD_KIND)
    # The one place every notification of a comment passes: a muted thread tells nobody anything.
    # People who blocked or muted `actor_id` are dropped one step later, by each one's feed write:
    # the feed's merge refuses an event whose actor is in the feed's `silenced` set
    # (notifications/silence.py), under the version condition a block's retraction also writes
    # with, so a mention or reply racing the block is refused or retracted, never kept, and the
    # fan-out reads nothing more for it (the feed write reads that feed anyway).
    return {user_id: offered for user_id, offered in kinds.items() if states.get(user_id) != "mute"}


def fanout_still_shown(fanout: FanOut) -> bool:
    """Whether the comment may still notify: it is neither hidden (by staff or by reports) nor
    deleted, and neither its parent nor its thread's root is hidden (a hidden comment's replies
    notify nobody). One strongly consistent BatchGetItem of up to 3 small projections, at each
    expansion, so a hide that lands while a fan-out is pending (the drainer's, or a long
    one's next claim) stops the rest of it: a hide leaves nothing of its replies to notify."""
    ids = {fanout.comment_id, fanout.thread_id, *([fanout.parent_id] if fanout.parent_id else [])}
    found = {
        comment.comment_id: comment
        for comment in Comment.batch_get(
            sorted(ids), consistent_read=True, attributes_to_get=["comment_id", "hidden", "deleted_at"]
        )
    }
    comment = found.get(fanout.comment_id)
    if comment is None or comment.hidden or comment.deleted_at:
        return False
    return not any(found[other].hidden for other in ids - {fanout.comment_id} if other in found)


def fanout_expand(fanout: FanOut, *, budget: int) -> tuple[bool, str]:
    """Notify up to `budget` people after `fanout.done_through`; returns (all done, the last one done).

    Reads: one consistent Query of the thread's states, one BatchGetItem of the batch's
    preferences. Writes: one feed write per person notified, the batch's writes side by side
    in the `writes` pool (project/serving/pools.py: people of a hot thread are told in the time
    of a few writes, not of one each), and, for a reply, the replier's watch on its first
    expansion. A feed write that keeps failing is queued by `feed_append` in `feed_retry` for
    that person alone; other errors raise once the batch's writes have all ended, and the item
    keeps the progress from before the batch: the next run writes the batch again, which changes
    nothing for those already told (a feed keeps each event's digest).
    """
    if not fanout_still_shown(fanout):
        return True, fanout.done_through  # hidden (or under a hidden comment), or deleted: nobody is told
    if fanout.watchers and not fanout.done_through:
        thread_watch_if_unset(user_id=fanout.actor_id, thread_id=fanout.thread_id)  # never over a mute
    states = thread_states(thread_id=fanout.thread_id)
    kinds = fanout_recipients(fanout, states)
    pending = sorted(user_id for user_id in kinds if user_id > fanout.done_through)
    batch = pending[:budget]
    preferences = preferences_get_many(user_ids=batch)
    writes = []
    for user_id in batch:
        wanted = preferences[user_id]
        event = next(
            (fanout.event(kind) for kind in kinds[user_id] if wanted.wants(PREFERENCE_KINDS.get(kind, kind), "inbox")),
            None,
        )
        if event is not None:
            event = replace(
                event,
                notify_email=wanted.wants(event.preference_kind, "email"),
                notify_push=wanted.wants(event.preference_kind, "push"),
            )
            writes.append(pool(WRITES).submit(feed_append, user_id=user_id, event=event, queue=True))
    wait(writes)
    for write in writes:
        write.result()  # an error raises: the progress stays where this batch began
    return len(pending) <= budget, batch[-1] if batch else fanout.done_through
