"""Writes of the social room: comments, moderation, likes.

Every write states what happens when it runs twice, concurrently, or dies half way.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
import uuid
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import IntegrityError
from django.db import transaction as db_transaction
from pynamodb.exceptions import PutError
from pynamodb.transactions import TransactWrite

from notifications import like_events
from notifications.feed import feed_reply_notification
from project.errors import ApplicationError, NotFound
from project.transactions import sent_actions, transact
from social.activity.services import activity_put
from social.counters import (
    LIKES,
    VIEWS,
    ShardPick,
    counter_add,
    counter_contended,
    counter_increment,
    counter_key,
    counter_value,
)
from social.models import Comment, CounterShard, Like, TimelineDay
from social.selectors import TIMELINE_BUCKET, comment_find

logger = logging.getLogger(__name__)

BODY_MAX_LENGTH = 2000

# Days already recorded in `timeline_days` by this process, with their shard count.
_day_shards: dict[str, int] = {}


@dataclass(frozen=True)
class LikeState:
    like_count: int
    liked: bool


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def timeline_key(*, day: str, comment_id: str, shards: int) -> str:
    """The write-sharded day partition of a comment (seed 003): `20261122#7`."""
    return f"{day}#{zlib.crc32(comment_id.encode()) % shards}"


def _timeline_day_ensure(day: str) -> int:
    """Record that `day` has comments (once per process and day) and return its shard count.

    Conditional put: concurrent writers of the first comment of a day all end with
    the same, first-written shard count.
    """
    if day in _day_shards:
        return _day_shards[day]
    marker = TimelineDay(TIMELINE_BUCKET, day, shards=settings.TIMELINE_DAY_SHARDS)
    try:
        marker.save(condition=TimelineDay.day.does_not_exist())
    except PutError as error:
        if error.cause_response_code != "ConditionalCheckFailedException":
            raise
        marker = TimelineDay.get(TIMELINE_BUCKET, day, consistent_read=True)
    _day_shards[day] = int(marker.shards)
    return _day_shards[day]


# --- accounts -------------------------------------------------------------

# ASCII letters and digits plus @ . + - _ only: no letters of other scripts that look
# like Latin ones (a Cyrillic "o" in "bob" looks the same); case never distinguishes two names.
USERNAME_PATTERN = re.compile(r"[A-Za-z0-9@.+_-]+\Z")
USERNAME_RULE = "Use only letters a-z, digits and @ . + - _ (no accents or other alphabets)."
USERNAME_TAKEN = "This username is taken."


def username_check(username: str) -> None:
    if not USERNAME_PATTERN.match(username):
        raise ApplicationError(USERNAME_RULE, field="username")


def user_create(*, username: str, password: str, display_name: str = ""):
    """Create an account (one INSERT: a crash leaves it created or not).

    Two sign-ups racing for one name in any case: the database's case-insensitive
    unique constraint admits the first, the others get a 400 on `username`.
    """
    username_check(username)
    try:
        with db_transaction.atomic():
            return get_user_model().objects.create_user(username=username, password=password, display_name=display_name)
    except IntegrityError:
        raise ApplicationError(USERNAME_TAKEN, field="username") from None


# --- views ----------------------------------------------------------------


def comment_view_record(*, comment_id: str, viewer: str) -> bool:
    """Count one view of a comment, at most once per viewer per comment per clock hour.

    `viewer` is `user:<pk>` or, for anonymous visitors, `address:<client ip>`. The
    "already counted" mark is a key in Django's cache (no DynamoDB write for a
    reload); `cache.add` is atomic, so concurrent reloads count once. A shared cache
    (CACHE_URL) makes that hold across processes; with the per-process default, each
    process counts a viewer once an hour. Returns whether the view was counted.
    """
    hour = int(time.time() // 3600)
    digest = hashlib.sha256(f"{viewer}|{comment_id}".encode()).hexdigest()[:32]
    if not cache.add(f"viewed:{hour}:{digest}", 1, timeout=3600):
        return False
    counter_increment(key=counter_key(kind=VIEWS, object_id=comment_id))
    return True


# --- comments -------------------------------------------------------------


def comment_create(*, author_id: str, body: str, parent_id: str | None = None) -> Comment:
    """Post a comment (or a reply to `parent_id`).

    Twice: two comments (each call mints its own id). Dies half way: at worst a
    day marker without comments, which the timeline skips. A reply and the feed
    notification of the parent's author commit together through the feed's outbox.
    """
    body = body.strip()
    if not body:
        raise ApplicationError("The comment is empty.", field="body")
    if len(body) > BODY_MAX_LENGTH:
        raise ApplicationError(f"At most {BODY_MAX_LENGTH} characters.", field="body")
    if parent_id is not None:
        parent = comment_get_visible(comment_id=parent_id, field="parent_id")
        parent_id = parent.comment_id
    comment_id = str(uuid.uuid4())
    created_at = now_iso()
    # The timeline lists conversations (top-level comments); replies live under their parent.
    listed_in = None
    if parent_id is None:
        day = created_at[:10].replace("-", "")
        listed_in = timeline_key(day=day, comment_id=comment_id, shards=_timeline_day_ensure(day))
    comment = Comment(
        comment_id,
        author_id=author_id,
        body=body,
        parent_id=parent_id,
        created_at=created_at,
        sort_key=f"{created_at}#{comment_id}",
        hidden=False,
        timeline_key=listed_in,
        reply_to=parent_id,
    )

    # A reply tells the parent's author through their feed (never the replier themself).
    notification = None
    if parent_id is not None:
        notification = feed_reply_notification(
            reply_id=comment_id,
            replier_id=author_id,
            parent_id=parent_id,
            parent_author_id=parent.author_id,
            body=body,
            created_at=created_at,
        )

    def build(transaction: TransactWrite) -> None:
        transaction.save(comment, condition=Comment.comment_id.does_not_exist())
        activity_put(transaction, user_id=author_id, action="reply" if parent_id else "comment", object_id=comment_id)
        if notification:
            notification.add_outbox_to(transaction)

    transact(build, what="comment_create")
    logger.info("comment %s posted by user %s", comment_id, author_id)
    if notification:
        notification.send()  # never raises: what it cannot do, process_feed_retries does
    return comment


def comment_get_visible(*, comment_id: str, field: str | None = None) -> Comment:
    """The comment if it exists and is not hidden, else NotFound (or a 400 on `field`)."""
    comment = comment_find(comment_id=comment_id)
    if comment is None or comment.hidden:
        if field:
            raise ApplicationError("No such comment.", field=field)
        raise NotFound("No such comment.")
    return comment


def comment_set_hidden(*, comment_id: str, hidden: bool) -> Comment:
    """Hide a comment from every listing, or show it again (staff moderation).

    Idempotent; the update is one conditional UpdateItem, so a concurrent moderator
    simply sets the same flag.
    """
    comment = comment_find(comment_id=comment_id)
    if comment is None:
        raise NotFound("No such comment.")
    day = comment.created_at[:10].replace("-", "")
    if hidden:
        actions = [Comment.hidden.set(True), Comment.timeline_key.remove(), Comment.reply_to.remove()]
    elif comment.parent_id:
        actions = [Comment.hidden.set(False), Comment.reply_to.set(comment.parent_id)]
    else:
        shards = _timeline_day_ensure(day)
        actions = [
            Comment.hidden.set(False),
            Comment.timeline_key.set(timeline_key(day=day, comment_id=comment_id, shards=shards)),
        ]
    comment.update(actions=actions, condition=Comment.comment_id.exists())
    logger.info("comment %s %s", comment_id, "hidden" if hidden else "shown")
    return comment


# --- likes ----------------------------------------------------------------


def _like_transaction(
    transaction: TransactWrite, *, comment: Comment, user_id: str, key: str, kind: str, shard: int
) -> None:
    """The one place the like (or unlike) transaction is built.

    Only items no other liker of the comment writes at the same moment: the person's
    like row, one counter shard (the counter grows its shards when they collide), and
    the event under its own key, which the fold turns into the author's notification,
    badge and the counter's due flag (notifications/like_events.py). No condition check
    on the comment item: every like of a comment would hold it (on AWS, a transaction
    conflict); the comment is read before, and the fold drops likes on a comment hidden
    meanwhile. Three actions, 6 write capacity units, and the activity log's line (its
    own key, so no contention: 2 more).
    """
    if kind == like_events.LIKE:
        transaction.save(Like(comment.comment_id, user_id), condition=Like.user_id.does_not_exist())
    else:
        transaction.delete(Like(comment.comment_id, user_id), condition=Like.user_id.exists())
    counter_add(transaction, key=key, delta=1 if kind == like_events.LIKE else -1, shard=shard, flag=False)
    like_events.like_event_add(
        transaction, author_id=comment.author_id, comment_id=comment.comment_id, liker_id=user_id, kind=kind
    )
    activity_put(transaction, user_id=user_id, action=kind, object_id=comment.comment_id)


def _like_write(*, comment_id: str, user_id: str, kind: str) -> int:
    """Run the like/unlike transaction; returns the counter's exact value read right after it."""
    comment = comment_get_visible(comment_id=comment_id)
    key = counter_key(kind=LIKES, object_id=comment_id)
    shards_table = CounterShard.Meta.table_name

    contention = []

    def grow_on_contention(transaction: TransactWrite, codes: list[str | None]) -> None:
        contention.append(codes)
        contended = [
            item["TableName"] == shards_table
            for item, code in zip(sent_actions(transaction), codes, strict=False)
            if code is not None and code != "None"
        ]
        if not codes or any(contended):  # throttled as a whole, or the shard collided
            counter_contended(key=key)

    with ShardPick(key) as pick:
        codes = transact(
            lambda transaction: _like_transaction(
                transaction, comment=comment, user_id=user_id, key=key, kind=kind, shard=pick.next()
            ),
            what=f"like_{'add' if kind == like_events.LIKE else 'remove'}",
            on_retry=grow_on_contention,
        )
    # Fold right away only where that is cheap: a like that met no contention is not on
    # a hot comment, where concurrent folds would only cancel each other.
    if not codes and not contention:
        like_events.like_events_fold_after_request(comment_id=comment_id)
    # codes: the like row's condition failed (already liked / not liked): nothing written.
    return counter_value(key=key)


def like_add(*, comment_id: str, user_id: str) -> LikeState:
    """Like a comment: one 3-action TransactWriteItems, no read of the like first.

    The like row is put on condition it is absent, so a second like (or a concurrent
    twin) cancels the whole transaction and changes nothing; it still answers the
    current state. A crash cannot leave a like without its count or its event: all are
    in the same transaction; the event reaches the author's notification by the fold
    right after (best effort) or by `fold_like_events` within seconds.

    The answer is the state the like made: `liked` is True and `like_count` the exact
    count read right after, which includes this like; if the same person's unlike in
    another request lands between the two, the count read no longer does, and the
    answer still counts this like (at least 1): it describes the moment the like
    committed, and the unlike's own answer describes the later one.
    """
    count = _like_write(comment_id=comment_id, user_id=user_id, kind=like_events.LIKE)
    return LikeState(like_count=max(1, count), liked=True)


def like_remove(*, comment_id: str, user_id: str) -> LikeState:
    """Undo a like: delete the like row on condition it exists and subtract 1, atomically.

    A second undo (or a concurrent twin) fails the condition and changes nothing, so
    the count can never be decremented twice for one like. The unlike's event takes
    the liker out of the author's unread notification when folded.
    """
    count = _like_write(comment_id=comment_id, user_id=user_id, kind=like_events.UNLIKE)
    return LikeState(like_count=count, liked=False)
