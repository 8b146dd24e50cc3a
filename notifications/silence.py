"""A block or mute reaching its owner's inbox: what the person already put there is retracted.

Blocking or muting someone (actions/relations.py) commits, in one transaction, the relation
(social) and **one** `feed_retry` item here, the `Silence`: the promise to retract, as a
reply's fan-out item is the promise to notify. Right after the commit the request applies it
(`silence_send`: never raises) and deletes it; if the request dies first, or the apply fails,
`process_feed_retries` applies it once it is due (FEED_REPLY_OUTBOX_DELAY_MS), with its lease.

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

import json
import logging
import zlib
from dataclasses import asdict, dataclass

from pynamodb.exceptions import DeleteError

from notifications.feed.events import FEED_RETRY_SHARDS, SILENCE_PREFIX
from notifications.feed.services import APPLIED, FEED_REPLY_OUTBOX_DELAY_MS, feed_silence
from notifications.like_fold import like_event_put, like_events_fold
from notifications.models import FeedRetry, LikeUnread
from project.clock import clock
from project.dynamo.transactions import LabelledTransactWrite
from project.errors import error_code
from social.relations.selectors import relation_get

logger = logging.getLogger(__name__)

SILENCE_FOLD_INLINE = 10  # comments whose fold the blocking request runs itself


@dataclass(frozen=True)
class Silence:
    """The promise a block, mute, unblock or unmute makes to the owner's inbox (one item per pair)."""

    owner_id: str  # who blocks or mutes
    other_id: str  # whom

    @property
    def retry_id(self) -> str:
        return f"{SILENCE_PREFIX}{self.owner_id}#{self.other_id}"

    @property
    def shard(self) -> str:
        return str(zlib.crc32(self.owner_id.encode()) % FEED_RETRY_SHARDS)

    def to_json(self) -> str:
        return json.dumps({"silence": asdict(self)}, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Silence:
        return cls(**json.loads(text)["silence"])


def silence_outbox_add(transaction: LabelledTransactWrite, *, silence: Silence) -> None:
    """Add the item to the block's (or unblock's) own transaction: one put under the pair's key,
    so doing it twice leaves one item; due when the drainer should take over."""
    transaction.save(
        FeedRetry(
            silence.shard,
            silence.retry_id,
            user_id=silence.owner_id,
            event=silence.to_json(),
            due_at=clock.now_ms() + FEED_REPLY_OUTBOX_DELAY_MS,
            attempts=0,
            last_error="",
            created_at=clock.now_iso(),
        ),
        label="silence",
    )


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


def _done(silence: Silence) -> None:
    try:
        FeedRetry(silence.shard, silence.retry_id).delete()
    except DeleteError as error:  # applied again later, finding nothing to do, then deleted
        logger.warning("silence %s not deleted (%s)", silence.retry_id, error_code(error))


def silence_send(silence: Silence) -> None:
    """Right after the block (or unblock) committed: apply it, fold a few of the comments at once,
    delete the item. Never raises: whatever fails, the item makes `process_feed_retries` do it."""
    try:
        comments = silence_apply(silence)
        _done(silence)
    except Exception:
        logger.exception("retraction %s left to process_feed_retries", silence.retry_id)
        return
    for comment_id in comments[:SILENCE_FOLD_INLINE]:
        try:
            like_events_fold(comment_id=comment_id, attempts=2)
        except Exception as error:  # its trigger event waits for fold_like_events
            logger.info("fold of %s left to fold_like_events (%s)", comment_id, type(error).__name__)


def silence_retry_apply(retry: FeedRetry) -> str:
    """The drainer's turn at an item it claimed: apply, then delete (the folder folds the
    comments). Errors raise (the caller postpones the item)."""
    silence = Silence.from_json(retry.event)
    silence_apply(silence)
    _done(silence)
    return APPLIED
