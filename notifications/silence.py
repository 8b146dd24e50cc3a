"""A block or mute reaching its owner's inbox: what the person already put there is retracted.

Blocking or muting someone (actions/relations.py) commits, in one transaction, the relation
(social) and **one** `feed_retry` item here, the `Silence`: the promise to retract, an outbox
job (notifications/outbox.py) as a reply's fan-out is the promise to notify. Right after the
commit the request applies it (`outbox_send`: never raises) and deletes it; if the request dies
first, or the apply fails, `process_feed_retries` applies it once it is due (OUTBOX_DELAY_MS),
with its lease.

Applying it (`silence_apply`), each step idempotent and state-based, so any prefix is safe to
repeat:

1. the owner's feed is brought in step (`feed_silence`): the person joins the feed's
   `silenced` set, which the feed's merge checks for every later event (so their replies,
   mentions and watched-thread replies are not written), and leaves the unread entries'
   actors (an entry left with nobody goes), with the feed's version condition; an unblock or
   unmute takes them out of the set again and brings nothing back;
2. for each of the owner's unread like notifications listing the person (one consistent Query
   of the owner's unread ones), a `silence` like event: the comment's next fold reads the
   block and takes the liker out of the notification and the badge (the like still counts).
   The request folds up to SILENCE_FOLD_INLINE of those comments itself; the folder does the rest.

E-mail already queued about them is checked at send time (notifications/mail/checks.py).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import ClassVar

from notifications.feed.services import feed_silence
from notifications.like_fold import like_event_put, like_events_fold
from notifications.models import LikeUnread
from notifications.outbox import OutboxJob, OutboxRun
from social.relations.selectors import relation_get

logger = logging.getLogger(__name__)

SILENCE_FOLD_INLINE = 10  # comments whose fold the blocking request runs itself


@dataclass(frozen=True)
class Silence(OutboxJob):
    """The promise a block, mute, unblock or unmute makes to the owner's inbox: one item per pair
    (`silence#<owner>#<other>`, sharded by the owner), so a second one recorded leaves one."""

    kind: ClassVar[str] = "silence"

    owner_id: str  # who blocks or mutes
    other_id: str  # whom

    @property
    def job_id(self) -> str:
        return f"{self.owner_id}#{self.other_id}"

    @property
    def user_id(self) -> str:
        return self.owner_id

    def run(self, *, inline: bool) -> OutboxRun:
        """Steps 1 and 2 in one run; the request then folds a few of the comments (`then`), a
        drainer leaves them to the folder."""
        comments = silence_apply(self)
        return OutboxRun(then=lambda: _fold_some(comments))


def silence_apply(silence: Silence) -> list[str]:
    """Steps 1 and 2 of the module's docstring; returns the comments given a trigger event.

    Reads the relation as it is now (strongly), so an item applied after a later unblock
    retracts nothing more. Raises on DynamoDB errors (the item stays for the drainer).
    """

    def silenced() -> bool:
        return relation_get(user_id=silence.owner_id, other_id=silence.other_id).silenced

    feed_silence(user_id=silence.owner_id, other_id=silence.other_id, silenced=silenced)
    if not silenced():
        return []
    unread = LikeUnread.by_num_likes.query(silence.owner_id, LikeUnread.num_likes > 0, consistent_read=True)
    comments = [item.comment_id for item in unread if silence.other_id in (item.liker_ids or [])]
    for comment_id in comments:
        like_event_put(author_id=silence.owner_id, comment_id=comment_id, liker_id=silence.other_id)
    return comments


def _fold_some(comments: list[str]) -> None:
    """Fold up to SILENCE_FOLD_INLINE of the comments given a trigger event. Never raises."""
    for comment_id in comments[:SILENCE_FOLD_INLINE]:
        try:
            like_events_fold(comment_id=comment_id, attempts=2)
        except Exception as error:  # its trigger event waits for fold_like_events
            logger.info("fold of %s left to fold_like_events (%s)", comment_id, type(error).__name__)
