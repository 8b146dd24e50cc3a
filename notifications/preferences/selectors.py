"""Reads of preferences and thread states (writes: notifications/preferences/services.py).

Cost on AWS: one person's preferences are one GetItem (0.5 read unit eventually consistent,
1 strongly), **billed whether or not the item exists**: a person who never changed anything
has no item, and reading that absence costs the same as reading an item. Many people's
preferences are one BatchGetItem per 100 people (the fan-out of a reply, a fold batch, a
broadcast chunk), never a read per event. A thread's watchers and muters are one strongly
consistent Query of its partition (1 unit per 4 KB: about 100 people per unit).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.utils.translation import gettext
from pynamodb.exceptions import DoesNotExist

from notifications.models import Preferences, ThreadSubscription
from notifications.preferences.digest_slots import LEGACY_PARTITIONS, all_slots, digest_key
from project.errors import NotFound
from social.formatting import markdown_text
from social.models import Comment
from social.selectors import authors_by_id, comment_find, comment_thread_id

EXCERPT_LENGTH = 80

KINDS = ("like", "reaction", "reply", "mention", "message")
CHANNELS = ("inbox", "email", "push")
DIGESTS = ("off", "daily", "weekly")
THREAD_STATES = ("watch", "mute")
DEFAULT_CHANNELS = {"inbox": True, "email": False, "push": False}
# Staff messages always reach the inbox: the flag exists in the contract but cannot be turned off.
ALWAYS_ON = {("message", "inbox")}


def _defaults(channel: str) -> dict[str, bool]:
    return dict.fromkeys(KINDS, DEFAULT_CHANNELS[channel])


@dataclass(frozen=True)
class NotifyPreferences:
    """One person's choices; `NotifyPreferences()` is the defaults (inbox on, e-mail and push off, no digest)."""

    inbox: dict[str, bool] = field(default_factory=lambda: _defaults("inbox"))
    email: dict[str, bool] = field(default_factory=lambda: _defaults("email"))
    push: dict[str, bool] = field(default_factory=lambda: _defaults("push"))
    digest: str = "off"

    def wants(self, kind: str, channel: str) -> bool:
        """Whether a notification of `kind` (a watched-thread reply is `reply`) goes to `channel`."""
        if (kind, channel) in ALWAYS_ON:
            return True
        flags: dict[str, bool] = getattr(self, channel)
        return flags.get(kind, DEFAULT_CHANNELS[channel])

    def as_json(self) -> dict[str, Any]:
        """The API contract's shape: `{"kinds": {kind: {"inbox": .., "email": .., "push": ..}}, "digest": ..}`."""
        return {
            "kinds": {kind: {channel: self.wants(kind, channel) for channel in CHANNELS} for kind in KINDS},
            "digest": self.digest,
        }


def preferences_attribute(kind: str, channel: str) -> str:
    """The `preferences` item's attribute holding one flag (`like_email`)."""
    return f"{kind}_{channel}"


def preferences_from_item(item: Preferences | None) -> NotifyPreferences:
    """The preferences an item stands for; an absent item or flag is the default."""
    if item is None:
        return NotifyPreferences()
    flags: dict[str, dict[str, bool]] = {channel: {} for channel in CHANNELS}
    for kind in KINDS:
        for channel in CHANNELS:
            stored = getattr(item, preferences_attribute(kind, channel))
            flags[channel][kind] = DEFAULT_CHANNELS[channel] if stored is None else bool(stored)
            if (kind, channel) in ALWAYS_ON:
                flags[channel][kind] = True
    digest = item.digest if item.digest in DIGESTS else "off"
    return NotifyPreferences(inbox=flags["inbox"], email=flags["email"], push=flags["push"], digest=digest)


def preferences_get(*, user_id: str, consistent: bool = False) -> NotifyPreferences:
    """One person's preferences: one GetItem (billed even when there is no item: the defaults).

    `consistent=True` where the read decides a write or shows the person their own change
    (the settings page after saving, the mail sender at send time).
    """
    try:
        return preferences_from_item(Preferences.get(user_id, consistent_read=consistent))
    except DoesNotExist:
        return NotifyPreferences()


def preferences_get_many(*, user_ids: Iterable[str], consistent: bool = True) -> dict[str, NotifyPreferences]:
    """Several people's preferences by user id: one BatchGetItem per 100 (PynamoDB retries
    unprocessed keys), absent items = defaults.

    Strongly consistent by default: a fan-out decides whom to notify from it, and a person
    who turned a kind off a moment ago must not be notified from a replica that has not seen it.
    """
    wanted = list(dict.fromkeys(user_ids))
    if not wanted:
        return {}
    found = {item.user_id: item for item in Preferences.batch_get(wanted, consistent_read=consistent)}
    return {user_id: preferences_from_item(found.get(user_id)) for user_id in wanted}


def digest_readers(*, digest: str, slots: Iterable[str] | None = None) -> Iterator[tuple[str, str]]:
    """(user id, index key) of the readers of the `daily` or `weekly` digest listed under `slots`
    (notifications/preferences/digest_slots.py), or of every reader (None: every slot, and the
    partitions readers were listed under before slots): one Query per key of the sparse,
    keys-only `digest` index (eventually consistent: a choice made a second ago may be missed
    by a digest run at that very moment; the sender checks each reader's preferences again,
    strongly, before sending)."""
    keys = [digest_key(digest=digest, slot=slot) for slot in (all_slots() if slots is None else slots)]
    if slots is None:
        keys += [f"{digest}#{partition}" for partition in range(LEGACY_PARTITIONS)]
    for key in keys:
        for entry in Preferences.by_digest.query(key):
            yield entry.user_id, key


def is_thread_id(value: str) -> bool:
    """A thread id is its first comment's id, a UUID."""
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def comment_thread_find(*, comment_id: str) -> str:
    """The thread of a comment one may mute or watch (one consistent GetItem of the comment);
    NotFound (404) for an unknown, hidden or deleted comment, as its page answers."""
    comment = comment_find(comment_id=comment_id)
    if comment is None or comment.hidden or comment.deleted_at:
        raise NotFound(gettext("No such comment."))
    return comment_thread_id(comment)


def thread_states(*, thread_id: str) -> dict[str, str]:
    """Everyone who watches or muted a thread: user id -> `watch` | `mute`, one consistent Query
    (paged by PynamoDB past 1 MB)."""
    return {
        item.user_id: item.state
        for item in ThreadSubscription.query(thread_id, consistent_read=True, attributes_to_get=["user_id", "state"])
    }


def thread_state(*, thread_id: str, user_id: str) -> str | None:
    """One person's state in a thread (`watch`, `mute`, or None): one consistent GetItem."""
    try:
        return ThreadSubscription.get(thread_id, user_id, consistent_read=True).state
    except DoesNotExist:
        return None


@dataclass(frozen=True)
class ThreadSubscriptionView:
    thread_id: str
    state: str
    at: int  # epoch milliseconds


def thread_subscriptions_of(
    *, user_id: str, limit: int = 100, fresh: Iterable[str] = ()
) -> list[ThreadSubscriptionView]:
    """A person's muted and watched threads, most recently changed first (the settings page).

    The `by_user` index gives the keys (eventually consistent: a thread muted a second ago
    may show a moment later); each listed item is then read back strongly from the table
    (BatchGetItem), so a thread the person just unmuted or switched never shows its old state.
    `fresh` names threads this browser changed a moment ago (`FRESH_THREADS`): read from the
    table too, so a thread just muted on its comment's page is listed at once.
    """
    keys = [
        (entry.thread_id, entry.user_id)
        for entry in ThreadSubscription.by_user.query(user_id, limit=limit, attributes_to_get=["thread_id", "user_id"])
    ]
    keys = list(dict.fromkeys([*keys, *((thread_id, user_id) for thread_id in fresh)]))
    if not keys:
        return []
    items = ThreadSubscription.batch_get(keys, consistent_read=True)
    views = [ThreadSubscriptionView(thread_id=item.thread_id, state=item.state, at=int(item.at)) for item in items]
    return sorted(views, key=lambda view: view.at, reverse=True)


@dataclass(frozen=True)
class ThreadShown:
    """A muted or watched thread as the settings page lists it."""

    thread_id: str
    state: str
    at: int
    author: str  # the thread's first comment's author, "" once it is gone
    excerpt: str  # its text, "" once it is gone (hidden or deleted): the undo button stays
    available: bool

    @property
    def changed_at(self) -> datetime:
        return datetime.fromtimestamp(self.at / 1000, tz=UTC)


def thread_subscriptions_shown(*, user_id: str, fresh: Iterable[str] = ()) -> list[ThreadShown]:
    """The person's muted and watched threads with their first comment's author and excerpt:
    the index Query and BatchGetItem of `thread_subscriptions_of`, one strongly consistent
    BatchGetItem of the comments (a page seldom visited: a comment hidden a moment ago is
    never shown here) and one query of names."""
    threads = thread_subscriptions_of(user_id=user_id, fresh=fresh)
    wanted = sorted({thread.thread_id for thread in threads})
    attributes = ["comment_id", "author_id", "body", "hidden", "deleted_at"]
    comments = {
        comment.comment_id: comment
        for comment in Comment.batch_get(wanted, consistent_read=True, attributes_to_get=attributes)
    }
    visible = {
        comment_id: comment for comment_id, comment in comments.items() if not comment.hidden and not comment.deleted_at
    }
    names = authors_by_id(sorted({comment.author_id for comment in visible.values()}))
    shown = []
    for thread in threads:
        comment = visible.get(thread.thread_id)
        body = markdown_text(comment.body) if comment else ""
        shown.append(
            ThreadShown(
                thread_id=thread.thread_id,
                state=thread.state,
                at=thread.at,
                author=names[comment.author_id].display_name if comment else "",
                excerpt=body if len(body) <= EXCERPT_LENGTH else body[: EXCERPT_LENGTH - 1] + "…",
                available=comment is not None,
            )
        )
    return shown


@dataclass(frozen=True)
class CommentThreadState:
    """The comment page's Mute / Watch buttons: the thread and the viewer's state in it."""

    thread_id: str
    state: str | None

    @property
    def muted(self) -> bool:
        return self.state == "mute"

    @property
    def watching(self) -> bool:
        return self.state == "watch"


def comment_thread_state(*, comment_id: str, parent_id: str | None, user_id: str) -> CommentThreadState:
    """The viewer's state in the thread of a comment already shown: one consistent GetItem of
    the state; a reply's thread costs one more GetItem of the reply (its stored `thread_id`),
    a top-level comment is its own thread."""
    thread_id = comment_id if parent_id is None else comment_thread_find(comment_id=comment_id)
    return CommentThreadState(thread_id=thread_id, state=thread_state(thread_id=thread_id, user_id=user_id))
