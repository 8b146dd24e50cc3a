"""Writes of the social room: comments, moderation, likes.

Every write states what happens when it runs twice, concurrently, or dies half way.
"""

from __future__ import annotations

import logging
import re
import uuid
import zlib

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError
from django.db import transaction as db_transaction
from pynamodb.exceptions import PutError
from pynamodb.transactions import TransactWrite

from project.clock import clock
from project.errors import ApplicationError, NotFound
from project.limits import address_subject, limit_enforce, limit_rules, once_per_window
from social.activity.services import activity_put
from social.counters import (
    VIEWS,
    counter_increment,
    counter_key,
)
from social.models import Comment, TimelineDay
from social.selectors import TIMELINE_BUCKET, comment_find

logger = logging.getLogger(__name__)

BODY_MAX_LENGTH = 2000

# Days already recorded in `timeline_days` by this process, with their shard count.
_day_shards: dict[str, int] = {}


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
# One limit for the sign-up page and the API: hashing a password costs time in its length.
PASSWORD_MAX_LENGTH = 128


def username_check(username: str) -> None:
    if not USERNAME_PATTERN.match(username):
        raise ApplicationError(USERNAME_RULE, field="username")


def signup_limit_enforce(*, address: str) -> None:
    """Count a sign-up from `address` (IPv6: its /64) against LIMIT_SIGNUP; RateLimited when over."""
    limit_enforce(
        name="signup",
        subject=address_subject(address),
        rules=limit_rules("signup"),
        message="Too many accounts were created from your network recently. Please try again later.",
    )


def user_create(*, username: str, password: str, display_name: str = "", address: str | None = None):
    """Create an account (one INSERT: a crash leaves it created or not).

    Two sign-ups racing for one name in any case: the database's case-insensitive
    unique constraint admits the first, the others get a 400 on `username`. With
    `address`, the sign-up counts against that address's limit first (RateLimited when
    over; a sign-up that then fails still counts).
    """
    username_check(username)
    if address is not None:
        signup_limit_enforce(address=address)
    try:
        with db_transaction.atomic():
            return get_user_model().objects.create_user(username=username, password=password, display_name=display_name)
    except IntegrityError:
        raise ApplicationError(USERNAME_TAKEN, field="username") from None


# --- views ----------------------------------------------------------------


def comment_view_record(*, comment_id: str, viewer: str) -> bool:
    """Count one view of a comment, at most once per viewer per comment per clock hour.

    `viewer` is `user:<pk>` or, for anonymous visitors, `address:<client ip>`. The
    "already counted" mark is a conditional put with TTL in the shared limit store
    (`once_per_window`), so every process on every machine counts a viewer once an
    hour; concurrent reloads count once. Costs one write per page view (the mark),
    plus the counter's when counted. Returns whether the view was counted.
    Dies between the mark and the count: that hour's view of that viewer is not counted.
    """
    if not once_per_window(name="view", subject=f"{viewer}|{comment_id}", seconds=3600):
        return False
    counter_increment(key=counter_key(kind=VIEWS, object_id=comment_id))
    return True


# --- comments -------------------------------------------------------------


def comment_new(*, author_id: str, body: str, parent_id: str | None = None) -> tuple[Comment, Comment | None]:
    """A validated, unsaved comment (or reply to `parent_id`) and its visible parent.

    Mints the comment's id; the only write is the day marker of a new timeline day
    (idempotent, see `_timeline_day_ensure`). `actions.comments.comment_create` saves it
    with `comment_put` in one transaction with what the comment causes in other apps.
    """
    body = body.strip()
    if not body:
        raise ApplicationError("The comment is empty.", field="body")
    if len(body) > BODY_MAX_LENGTH:
        raise ApplicationError(f"At most {BODY_MAX_LENGTH} characters.", field="body")
    parent = None
    if parent_id is not None:
        parent = comment_get_visible(comment_id=parent_id, field="parent_id")
        parent_id = parent.comment_id
    comment_id = str(uuid.uuid4())
    created_at = clock.now_iso()
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
    return comment, parent


def comment_put(transaction: TransactWrite, *, comment: Comment) -> None:
    """Add the comment's put (on condition its id is new) and its activity-log line to `transaction`."""
    transaction.save(comment, condition=Comment.comment_id.does_not_exist())
    activity_put(
        transaction,
        user_id=comment.author_id,
        action="reply" if comment.parent_id else "comment",
        object_id=comment.comment_id,
    )


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
