"""Writes of the social room: accounts (the username rule, the sign-up and password-reset
limits, creating a user, the display name) and comments (a new comment and its timeline day,
which actions/comments.py writes with what it causes in other apps; the replied and flag
marks; hide and show; edit; delete; views counted). Likes are written by actions/likes.py
(they notify), reactions by social/reactions/, reports by social/moderation/.

Every write states what happens when it runs twice, concurrently, or dies half way.
"""

from __future__ import annotations

import logging
import re
import uuid
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError
from django.db import transaction as db_transaction
from django.utils.translation import gettext, gettext_lazy
from pynamodb.exceptions import PutError, UpdateError
from pynamodb.transactions import TransactWrite

from project.clock import clock
from project.dynamo.transactions import transact, write_retrying
from project.errors import ApplicationError, Conflict, NotFound, PermissionDenied, condition_failed
from project.limits.store import address_subject, limit_enforce, limit_rules, once_per_window
from social.account.limits import account_limit_enforce
from social.activity.services import activity_put
from social.counters import (
    VIEWS,
    counter_increment,
    counter_key,
)
from social.display_names import display_name_clean
from social.edit_history import EDIT_ATTEMPTS, EditExtras, comment_version, comment_versions_erase, version_keep
from social.models import Comment, ErasedUsername, TimelineDay, User
from social.selectors import TIMELINE_BUCKET, comment_find
from social.spam.held import held_delete_by_author

if TYPE_CHECKING:
    from pynamodb.attributes import BooleanAttribute
    from pynamodb.expressions.condition import Condition
    from pynamodb.expressions.update import Action

    from project.dynamo.transactions import LabelledTransactWrite

logger = logging.getLogger(__name__)

BODY_MAX_LENGTH = 2000

# Days already recorded in `timeline_days` by this process, with their shard count.
_day_shards: dict[str, int] = {}


def timeline_key(*, day: str, comment_id: str, shards: int) -> str:
    """The write-sharded day partition of a comment (docs/reference/tables.md "Tables"): `20261122#7`."""
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
        if not condition_failed(error):
            raise
        marker = TimelineDay.get(TIMELINE_BUCKET, day, consistent_read=True)
    _day_shards[day] = int(marker.shards)
    return _day_shards[day]


# --- accounts -------------------------------------------------------------

# ASCII letters and digits plus @ . + - _ only: no letters of other scripts that look
# like Latin ones (a Cyrillic "o" in "bob" looks the same); case never distinguishes two names.
USERNAME_PATTERN = re.compile(r"[A-Za-z0-9@.+_-]+\Z")
USERNAME_RULE = gettext_lazy("Use only letters a-z, digits and @ . + - _ (no accents or other alphabets).")
USERNAME_TAKEN = gettext_lazy("This username is taken.")
USERNAME_RESERVED = gettext_lazy("This username belonged to a deleted account and can't be used again.")
# One limit for the sign-up page and the API: hashing a password costs time in its length.
PASSWORD_MAX_LENGTH = 128


def username_check(username: str) -> None:
    """ApplicationError (400 on `username`) for a name of other characters, or the name of an
    erased account in any letter case (`ErasedUsername`: old @mentions of it name nobody new)."""
    if not USERNAME_PATTERN.match(username):
        raise ApplicationError(USERNAME_RULE, field="username")
    if ErasedUsername.objects.filter(name=username.lower()).exists():
        raise ApplicationError(USERNAME_RESERVED, field="username")


def signup_limit_enforce(*, address: str) -> None:
    """Count a sign-up from `address` (IPv6: its /64) against LIMIT_SIGNUP; RateLimited when over."""
    limit_enforce(
        name="signup",
        subject=address_subject(address),
        rules=limit_rules("signup"),
        message="Too many accounts were created from your network recently. Please try again later.",
    )


def password_reset_limit_enforce(*, address: str) -> None:
    """Count a reset request from `address` (IPv6: its /64) against LIMIT_PASSWORD_RESET
    (RateLimited when over). Only the requester's own network is refused: the e-mail address
    asked for is limited in mails sent (social.reset_mail), never in requests, so
    strangers asking for the owner's address never get the owner's own request refused.
    Counted whether or not an account has the address, so it tells nothing about which exist."""
    limit_enforce(
        name="password_reset",
        subject=address_subject(address),
        rules=limit_rules("password_reset"),
        message="Too many reset e-mails were asked for from your network recently. Please try again later.",
    )


def user_create(
    *, username: str, password: str, display_name: str = "", email: str = "", address: str | None = None
) -> User:
    """Create an account (one INSERT: a crash leaves it created or not).

    Two sign-ups racing for one name in any case: the database's case-insensitive
    unique constraint admits the first, the others get a 400 on `username`. With
    `address`, the sign-up counts against that address's limit first (RateLimited when
    over; a sign-up that then fails still counts).
    """
    username_check(username)
    display_name = display_name_clean(display_name)
    if address is not None:
        signup_limit_enforce(address=address)
    try:
        with db_transaction.atomic():
            return get_user_model().objects.create_user(
                username=username, password=password, display_name=display_name, email=email
            )
    except IntegrityError:
        raise ApplicationError(USERNAME_TAKEN, field="username") from None


# The model's column is where the limit is written; forms, APIs and this check read it there.
DISPLAY_NAME_MAX_LENGTH = int(User._meta.get_field("display_name").max_length or 0)


def user_display_name_set(*, user: User, display_name: str) -> User:
    """Change the name shown beside a person's comments (blank: their username is shown).

    One UPDATE of one column: twice or concurrently, the last one wins; every page reads
    names from the user table when it renders, so old comments show the new name at once.
    Stored without format characters (social.display_names: no bidi override or zero-width
    character), whitespace collapsed.
    """
    display_name = display_name_clean(display_name)
    if len(display_name) > DISPLAY_NAME_MAX_LENGTH:
        raise ApplicationError(
            gettext("At most %(display_name_max_length)s characters.")
            % {"display_name_max_length": DISPLAY_NAME_MAX_LENGTH},
            field="display_name",
        )
    user.display_name = display_name
    user.save(update_fields=["display_name"])
    return user


# --- views ----------------------------------------------------------------


def comment_view_record(*, comment_id: str, viewer: str) -> bool:
    """Count one view of a comment, at most once per viewer per comment per clock hour.

    `viewer` is `user:<pk>` or, for anonymous visitors, `address:<their address>` (an
    IPv6 one's /64, as every limit groups them: project.limits.store.address_subject). The
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


def line_breaks_normalize(text: str) -> str:
    """A line break is one character, however it was sent: a browser's form sends CRLF, its
    text box (and so the box's counter, project/static/project/site.js) holds LF. Bodies are
    counted and stored with LF, so the box and the server count alike."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def comment_body_clean(body: str) -> str:
    """The body as stored (line breaks as LF, trimmed), or a 400 on `body` when it is empty
    or longer than BODY_MAX_LENGTH characters (Unicode code points, a line break one)."""
    body = line_breaks_normalize(body).strip()
    if not body:
        raise ApplicationError(gettext("The comment is empty."), field="body")
    if len(body) > BODY_MAX_LENGTH:
        raise ApplicationError(
            gettext("At most %(body_max_length)s characters.") % {"body_max_length": BODY_MAX_LENGTH}, field="body"
        )
    return body


def comment_new(*, author_id: str, body: str, parent_id: str | None = None) -> tuple[Comment, Comment | None]:
    """A validated, unsaved comment (or reply to `parent_id`) and its visible parent.

    Mints the comment's id; the only write is the day marker of a new timeline day
    (idempotent, see `_timeline_day_ensure`). `actions.comments.comment_create` saves it
    with `comment_put` in one transaction with what the comment causes in other apps.
    """
    body = comment_body_clean(body)
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
        profile_author=author_id,
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


def comment_replied_mark(*, parent: Comment) -> None:
    """Record on `parent` that it has a reply (`has_replies`), once: after a reply committed.

    One conditional UpdateItem at a comment's first reply only (the parent was just read
    consistently; a later reply finds the flag and writes nothing), so the replies of a
    popular comment do not all write its item. Best effort, never failing the reply: a
    concurrent first reply finds it set (condition failed), and a write that fails or a
    process that dies first leaves the delete to the replies index alone (see
    `comment_delete`). Cost: the parent's size in KB in write units, twice (its `timeline`
    or `replies` index entry carries every attribute), once per comment ever replied to.
    """
    if not parent.has_replies:
        comment_flag_mark(parent, Comment.has_replies, what="comment_replied_mark")


def comment_flag_mark(comment: Comment, flag: BooleanAttribute, *, what: str) -> None:
    """Set a once-in-its-life flag on a comment (`has_replies`, `has_reactions`): one UpdateItem on
    condition the comment exists and the flag is absent. Best effort, never raising: a concurrent
    first setter finds it set (condition failed), and a write that fails is logged, for the next
    reply (reaction) to make. Cost: the comment's size in KB in write units, twice (its `timeline`
    or `replies` index entry carries every attribute)."""
    try:
        write_retrying(
            lambda: comment.update(
                actions=[flag.set(True)],
                condition=Comment.comment_id.exists() & flag.does_not_exist(),
            ),
            what=what,
        )
    except UpdateError as error:
        if not condition_failed(error):
            logger.warning("comment %s: %s not recorded (%s)", comment.comment_id, flag.attr_name, error)
    except ApplicationError as error:  # Conflict: refusals persisted
        logger.warning("comment %s: %s not recorded (%s)", comment.comment_id, flag.attr_name, error.message)


def comment_get_visible(*, comment_id: str, field: str | None = None) -> Comment:
    """The comment if it exists and is neither hidden nor deleted, else NotFound (or a 400 on `field`)."""
    comment = comment_find(comment_id=comment_id)
    if comment is None or comment.hidden or comment.deleted_at:
        if field:
            raise ApplicationError(gettext("No such comment."), field=field)
        raise NotFound(gettext("No such comment."))
    return comment


def comment_visibility_actions(*, comment: Comment, hidden: bool, hidden_by: str = "staff") -> list[Action]:
    """The update that hides `comment` from every listing (by "staff" or "reports"), or shows it again."""
    if hidden:
        return [
            Comment.hidden.set(True),
            Comment.hidden_by.set(hidden_by),
            Comment.timeline_key.remove(),
            Comment.reply_to.remove(),
            Comment.profile_author.remove(),
        ]
    if comment.deleted_at:
        # A deleted comment shown again stays a tombstone where its delete left it.
        return [Comment.hidden.set(False), Comment.hidden_by.remove()]
    shown = [Comment.hidden.set(False), Comment.hidden_by.remove(), Comment.profile_author.set(comment.author_id)]
    if comment.parent_id:
        return [*shown, Comment.reply_to.set(comment.parent_id)]
    day = comment.created_at[:10].replace("-", "")
    shards = _timeline_day_ensure(day)
    return [
        *shown,
        Comment.timeline_key.set(timeline_key(day=day, comment_id=comment.comment_id, shards=shards)),
    ]


def comment_set_hidden(*, comment_id: str, hidden: bool, hidden_by: str = "staff") -> Comment:
    """Hide a comment from every listing, or show it again (staff moderation; the audited
    staff path is social.moderation.services, which calls this).

    Idempotent; the update is one conditional UpdateItem, so a concurrent moderator
    simply sets the same flag.
    """
    comment = comment_find(comment_id=comment_id)
    if comment is None:
        raise NotFound(gettext("No such comment."))
    actions = comment_visibility_actions(comment=comment, hidden=hidden, hidden_by=hidden_by)
    comment.update(actions=actions, condition=Comment.comment_id.exists())
    logger.info("comment %s %s", comment_id, "hidden" if hidden else "shown")
    return comment


# --- the author's own edit and delete ---------------------------------------

COMMENT_DELETED = gettext_lazy("This comment was deleted.")


def _own_comment(*, comment_id: str, author_id: str, found: Comment | None = None) -> Comment:
    """The comment (`found`: as the caller just read it) if `author_id` wrote it and it is still there to change.

    Unknown, hidden (moderated) or deleted: NotFound; someone else's: PermissionDenied.
    """
    comment = found if found is not None else comment_find(comment_id=comment_id)
    if comment is None or comment.hidden:
        raise NotFound(gettext("No such comment."))
    if comment.author_id != author_id:
        raise PermissionDenied(gettext("Only its author can change a comment."))
    if comment.deleted_at:
        raise NotFound(COMMENT_DELETED)
    return comment


def _changeable_by(author_id: str) -> Condition:
    """The condition every author's change is written under: what `_own_comment` checked,
    checked again by DynamoDB at the moment of the write (a delete or a moderator's hide
    that landed in between wins; nothing brings a deleted comment back)."""
    condition: Condition = (
        Comment.comment_id.exists()
        & (Comment.author_id == author_id)
        & Comment.deleted_at.does_not_exist()
        & (Comment.hidden == False)  # noqa: E712 (a PynamoDB condition, not a comparison)
    )
    return condition


def _author_write(
    *,
    comment_id: str,
    author_id: str,
    actions: list[Action],
    activity: str,
    also: Callable[[LabelledTransactWrite], None] | None = None,
    condition: Condition | None = None,
) -> bool:
    """Update the comment under `_changeable_by` (and `condition`) and log `activity`, in one
    transaction; False when only `condition` can have failed (the caller re-reads and retries).

    `_changeable_by` failing means a concurrent delete or hide came first: the re-read answers
    for it (NotFound / PermissionDenied). Conflicts (AWS) are retried by `transact`; a
    cancelled attempt wrote nothing, so the log line is there once.
    """

    def build(transaction: LabelledTransactWrite) -> None:
        full = _changeable_by(author_id) if condition is None else _changeable_by(author_id) & condition
        transaction.update(Comment(comment_id), actions=actions, condition=full, label="comment")
        activity_put(transaction, user_id=author_id, action=activity, object_id=comment_id)
        if also is not None:
            also(transaction)

    outcome = transact(build, what=f"comment_{activity}")
    if outcome.ok:
        return True
    _own_comment(comment_id=comment_id, author_id=author_id)  # raises what came first
    if condition is not None:
        return False
    raise NotFound(gettext("No such comment."))  # the condition failed, yet the re-read looks fine: a race


def comment_edit(
    *,
    comment_id: str,
    author_id: str,
    body: str,
    extras: Callable[[Comment], EditExtras] | None = None,
) -> Comment:
    """Replace the body of the author's own comment, stamp `edited_at` and keep the body it
    replaces for staff (social.edit_history).

    One transaction: the comment's UpdateItem (condition: still theirs, not deleted, not
    hidden, and still the version this edit read), the earlier body's `comment_versions` item
    (condition: new) and the activity log's `edit` line. `extras(comment)` (called with the
    comment as read, again on each retry) adds the people whose mention notifications the edit
    commits, added to `mentioned_ids` in the same write, and what other apps commit with it
    (actions.comments.comment_edit): decided from the version the write is conditioned on, so
    concurrent edits never notify past the comment's mention budget together.

    Twice: the second body wins, both earlier bodies are kept, each edit is logged.
    Concurrently: one commits, the others fail the version condition, re-read and apply after it
    (up to EDIT_ATTEMPTS, then Conflict, 409, nothing written): each version is kept exactly
    once. With a like or a reply: those never write the comment item, so neither is lost. With
    a delete: whichever commits first; an edit after the delete fails its condition and
    answers 404, so a deleted comment never comes back. Dies half way: nothing was written.
    """
    body = comment_body_clean(body)
    _own_comment(comment_id=comment_id, author_id=author_id)
    account_limit_enforce(name="edit", user_id=author_id)  # RateLimited: nothing written
    for _attempt in range(EDIT_ATTEMPTS):
        current = _own_comment(comment_id=comment_id, author_id=author_id)
        mentioned_add, also = extras(current) if extras is not None else ((), None)
        now = clock.now_iso()
        version = comment_version(current)
        actions: list[Action] = [
            Comment.body.set(body),
            Comment.edited_at.set(now),
            Comment.version.set(version + 1),
        ]
        if mentioned_add:
            actions.append(Comment.mentioned_ids.add(set(mentioned_add)))
        read: Condition = Comment.version.does_not_exist() if version == 1 else Comment.version == version
        keep = version_keep(current, replaced_at=now, also=also)
        written = _author_write(
            comment_id=comment_id, author_id=author_id, actions=actions, activity="edit", also=keep, condition=read
        )
        if written:
            break
    else:
        raise Conflict(gettext("This comment was being changed at the same moment by another edit: please try again."))
    logger.info("comment %s edited by user %s (version %d)", comment_id, author_id, version + 1)
    edited = comment_find(comment_id=comment_id)
    if edited is None:  # deleted between the edit and this read: the delete came last
        raise NotFound(gettext("No such comment."))
    return edited


def comment_delete(*, comment_id: str, author_id: str) -> None:
    """Delete the author's own comment: empty its body and stamp `deleted_at`.

    The item stays as a tombstone so the thread stays readable: a comment with replies
    keeps its place in the timeline (or its parent's replies) and shows as deleted; one
    without replies leaves those listings. Likes, the ranking, like notifications and
    reply feed entries read the tombstone and leave it out (or say it was removed).

    One transaction with its `delete` activity line, on the condition of `comment_edit`.
    Twice: the second finds it deleted and answers 404. Concurrently with an edit:
    whichever first; the edit after it fails. With a reply that lands after the reply
    check (the comment's `has_replies`, read consistently, set right after a first reply
    commits): the reply is kept and hangs under the tombstone at the comment's page (its
    thread is not lost, only the timeline no longer lists it). With a like: the like row
    and count stay (the count is no longer shown); the fold notifies nobody of it.
    Dies half way: nothing was written, or the comment is deleted and some of its earlier bodies
    stay, never shown (social.edit_history.comment_versions_erase).
    A held one (waiting for review) goes for good, off the queue: social.spam.held.held_delete_by_author.
    """
    found = comment_find(comment_id=comment_id)
    if held_delete_by_author(comment=found, author_id=author_id):
        return
    comment = _own_comment(comment_id=comment_id, author_id=author_id, found=None if found and found.hidden else found)
    account_limit_enforce(name="edit", user_id=author_id)  # RateLimited: nothing written
    # The flag, read consistently with the comment; the index too, for a reply whose flag
    # write failed (a GSI may not list a reply less than a second old yet).
    has_replies = bool(comment.has_replies) or any(True for _ in Comment.replies_index.query(comment_id, limit=1))
    actions: list[Action] = [
        Comment.body.set(""),
        Comment.deleted_at.set(clock.now_iso()),
        Comment.profile_author.remove(),  # a profile lists no tombstone, replies or not
    ]
    if not has_replies:  # nothing hangs under it: it leaves the timeline or its parent's replies
        if comment.timeline_key:
            actions.append(Comment.timeline_key.remove())
        if comment.reply_to:
            actions.append(Comment.reply_to.remove())
    _author_write(comment_id=comment_id, author_id=author_id, actions=actions, activity="delete")
    comment_versions_erase(comment_id=comment_id)  # its earlier bodies go with its text
    logger.info("comment %s deleted by user %s", comment_id, author_id)
