"""Reads of the per-user feed: entries with their actors and text, and the unread count.

A read is one GetItem of the feed, then the text of the entries shown, read from where
it lives with BatchGetItem (the replies from `comments`, the messages from `deliveries`),
plus one query of Django users for the actor names; no Scan. A reply hidden or deleted
since it was notified is shown as removed, never with its old text.

Entries of a kind owned by an app above this one (a delivery's "message") get their text
from a source that app registers in its `feed_sources.py` module (found at start-up by
`autodiscover_modules`, as the admin finds `admin.py`): notifications imports no app above it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypeVar

from django.utils.translation import gettext, gettext_lazy, ngettext
from pynamodb.exceptions import DoesNotExist

from notifications.feed.encoding import PERSON_ROLLUP_KIND, FeedEntry, legacy_feed_upgrade
from notifications.feed.events import FEED_RETRY_SHARDS, MENTION_KIND, THREAD_KIND
from notifications.feed.notice_texts import notice_body_text
from notifications.models import Feed, FeedRetry
from project.clock import clock
from project.operations.backlog import Backlog, backlog_due_ms
from social.models import Comment
from social.selectors import Author, authors_by_id, comment_thread_id

if TYPE_CHECKING:
    from pynamodb.models import Model

REMOVED_REPLY = gettext_lazy("This reply was removed.")
REMOVED_MESSAGE = gettext_lazy("This message is no longer available.")


def feed_read(*, user_id: str) -> Feed:
    """The user's feed item read consistently (an empty, unsaved one when there is none)."""
    try:
        feed = Feed.get(user_id, consistent_read=True)
    except DoesNotExist:
        return feed_empty(user_id)
    legacy_feed_upgrade(feed)
    return feed


def feed_empty(user_id: str) -> Feed:
    """An empty, unsaved feed (what a user without a feed item has)."""
    return Feed(user_id)


def feed_read_many(*, user_ids: list[str]) -> dict[str, Feed]:
    """Several users' feeds with strongly consistent BatchGetItem (100 keys a request;
    PynamoDB retries unprocessed keys); an empty, unsaved feed for a user without one."""
    found = {feed.user_id: feed for feed in Feed.batch_get(list(dict.fromkeys(user_ids)), consistent_read=True)}
    for feed in found.values():
        legacy_feed_upgrade(feed)
    return {user_id: found.get(user_id) or feed_empty(user_id) for user_id in user_ids}


def feed_retries_due(*, limit: int = 100, now_ms: int | None = None) -> list[FeedRetry]:
    """Retries due at `now_ms` (now), oldest due first per shard: one LSI Query per shard (no Scan)."""
    now_ms = clock.now_ms() if now_ms is None else now_ms
    due: list[FeedRetry] = []
    for shard in range(FEED_RETRY_SHARDS):
        due.extend(FeedRetry.by_due.query(str(shard), FeedRetry.due_at <= now_ms, limit=limit, consistent_read=True))
    due.sort(key=lambda item: item.due_at)
    return due[:limit]


@dataclass(frozen=True)
class FeedEntryView:
    id: str
    kind: str
    rollup_key: str | None
    actors: list[Author]  # newest first
    actor_count: int
    title: str
    body: str
    url: str
    text: str
    unread: bool
    delivery_id: str | None
    created_at: datetime
    updated_at: datetime
    removed: bool = False  # what it pointed at was hidden or deleted since
    read_at: datetime | None = None  # to the second; None when unread (or read before it was kept)
    event_count: int = 1  # events rolled into the entry (replies, for a reply entry)
    # What the entry groups: "comment" (replies to one comment), "person" (one person's
    # replies across comments, beyond FEED_REPLIES_PER_PERSON entries), None (one event).
    grouped_by: str | None = None
    # Every person it names is blocked or muted by the feed's owner (`Feed.silenced`): pages,
    # the API and e-mail leave it out (a read entry from before the block, or one retracted next).
    hidden: bool = False


def feed_entry_text(*, kind: str, actors: list[Author], actor_count: int, title: str, event_count: int = 1) -> str:
    """ "Bob replied to your comment", "Bob and Alice ...", "Bob and 3 others ..." (newest first);
    one person's replies rolled up across comments: "Bob replied 5 more times to your comments";
    a watched thread: "Bob and 2 others replied in a thread you watch"; "Bob mentioned you".
    Worded when read, in the active language (the reader's); names are never translated."""
    if kind == PERSON_ROLLUP_KIND and actors:
        return ngettext(
            "%(name)s replied once more to your comments",
            "%(name)s replied %(count)d more times to your comments",
            event_count,
        ) % {"name": actors[0].display_name, "count": event_count}
    if kind == MENTION_KIND and actors:
        return gettext("%(name)s mentioned you") % {"name": actors[0].display_name}
    if kind in ("reply", THREAD_KIND) and actors:
        return _reply_text(kind=kind, actors=actors, actor_count=actor_count)
    return notice_title(kind=kind, title=title) if title else kind.capitalize()


# Kinds whose stored title is an English message id (marked with gettext_noop where the notice
# is written), worded in the reader's language when read; a staff message's title is their own.
NOTICE_KINDS = ("moderation", "notice")


def notice_title(*, kind: str, title: str) -> str:
    return gettext(title) if kind in NOTICE_KINDS else title


def _reply_text(*, kind: str, actors: list[Author], actor_count: int) -> str:
    first = actors[0].display_name
    watched = kind == THREAD_KIND
    if actor_count <= 1:
        if watched:
            return gettext("%(name)s replied in a thread you watch") % {"name": first}
        return gettext("%(name)s replied to your comment") % {"name": first}
    if actor_count == 2 and len(actors) > 1:
        names = {"first": first, "second": actors[1].display_name}
        if watched:
            return gettext("%(first)s and %(second)s replied in a thread you watch") % names
        return gettext("%(first)s and %(second)s replied to your comment") % names
    others = actor_count - 1
    if watched:
        text = ngettext(
            "%(name)s and %(count)d other replied in a thread you watch",
            "%(name)s and %(count)d others replied in a thread you watch",
            others,
        )
    else:
        text = ngettext(
            "%(name)s and %(count)d other replied to your comment",
            "%(name)s and %(count)d others replied to your comment",
            others,
        )
    return text % {"name": first, "count": others}


def _at(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


@dataclass(frozen=True)
class FeedText:
    """What an entry shows, read from what it points at."""

    title: str = ""
    body: str = ""
    url: str = ""
    rollup_key: str | None = None
    removed: bool = False


# kind -> a function from object ids to the texts of those that still exist.
FeedTextSource = Callable[[set[str]], dict[str, FeedText]]
_SOURCES: dict[str, FeedTextSource] = {}


def feed_text_source(kind: str) -> Callable[[FeedTextSource], FeedTextSource]:
    """Register (decorator) where the text of `kind` entries is read (an app's `feed_sources.py`)."""

    def register(source: FeedTextSource) -> FeedTextSource:
        _SOURCES[kind] = source
        return source

    return register


_M = TypeVar("_M", bound="Model")


def batch_get_by_key(model: type[_M], ids: set[str], attributes: list[str]) -> dict[str, _M]:
    """Items of `model` with hash keys `ids`, by key; `attributes[0]` is the key.

    One eventually consistent BatchGetItem (half the units), then the keys it did not find
    once more, strongly consistently: the texts read here are never deleted (a comment stays
    as a tombstone, a delivery stays), so a key not found is usually an item written less
    than a second ago, which AWS's eventually consistent read may not have yet, and which
    must not read as removed (a reply notified at once, a message just delivered).
    """
    if not ids:
        return {}
    key = attributes[0]
    found = {getattr(item, key): item for item in model.batch_get(sorted(ids), attributes_to_get=attributes)}
    missing = sorted(ids - found.keys())
    if missing:
        again = model.batch_get(missing, attributes_to_get=attributes, consistent_read=True)
        found.update((getattr(item, key), item) for item in again)
    return found


def _texts(entries: list[FeedEntry], silenced: frozenset[str] = frozenset()) -> dict[str, FeedText]:
    """The text of each entry by entry id: one BatchGetItem per kind shown at most. A reply by
    someone in `silenced` (the owner blocked or muted them) is shown without its text."""
    reply_kinds = ("reply", PERSON_ROLLUP_KIND, THREAD_KIND, MENTION_KIND)  # their text is a comment's
    reply_ids = {entry.object_id for entry in entries if entry.kind in reply_kinds and entry.object_id}
    replies = batch_get_by_key(
        Comment, reply_ids, ["comment_id", "body", "parent_id", "hidden", "deleted_at", "thread_id", "author_id"]
    )
    wanted: dict[str, set[str]] = {}
    for entry in entries:
        if entry.kind not in reply_kinds and entry.object_id:
            wanted.setdefault(entry.kind, set()).add(entry.object_id)
    found = {kind: _SOURCES[kind](ids) if kind in _SOURCES else {} for kind, ids in wanted.items()}
    texts = {}
    for entry in entries:
        if entry.object_id is None:  # an event that kept its text inline (or an old-format entry)
            body = notice_body_text(entry.body) if entry.kind in NOTICE_KINDS else entry.body
            texts[entry.entry_id] = FeedText(entry.title, body, entry.url)
        elif entry.kind in reply_kinds:
            reply = replies.get(entry.object_id)
            if reply is None or (reply.parent_id is None and entry.kind != MENTION_KIND):
                texts[entry.entry_id] = FeedText(body=str(REMOVED_REPLY), removed=True)
                continue
            # A mention may be in a top-level comment: its own page shows it.
            url = f"/c/{reply.parent_id}/#c-{reply.comment_id}" if reply.parent_id else f"/c/{reply.comment_id}/"
            rollup_key: str | None = f"reply#{reply.parent_id}"
            if entry.kind == THREAD_KIND:
                rollup_key = f"thread#{comment_thread_id(reply)}"
            elif entry.kind == MENTION_KIND:
                rollup_key = None
            elif entry.kind == PERSON_ROLLUP_KIND and entry.actor_ids:
                rollup_key = f"{PERSON_ROLLUP_KIND}#{entry.actor_ids[-1]}"
            if reply.hidden or reply.deleted_at:
                texts[entry.entry_id] = FeedText(body=str(REMOVED_REPLY), url=url, rollup_key=rollup_key, removed=True)
            elif reply.author_id in silenced:  # the newest reply of an entry others are left in
                texts[entry.entry_id] = FeedText(url=url, rollup_key=rollup_key)
            else:
                texts[entry.entry_id] = FeedText(body=reply.body, url=url, rollup_key=rollup_key)
        else:
            text = found[entry.kind].get(entry.object_id)
            texts[entry.entry_id] = text or FeedText(title=str(REMOVED_MESSAGE), removed=True)
    return texts


def feed_entry_views(entries: list[FeedEntry], *, silenced: frozenset[str] = frozenset()) -> list[FeedEntryView]:
    """Views of `entries` with their actors and their text read from its source; `silenced`
    (the feed's `silenced` set) marks entries naming only those people `hidden`."""
    ids = [actor_id for entry in entries for actor_id in entry.actor_ids]
    authors = authors_by_id(ids) if ids else {}
    texts = _texts(entries, silenced)
    views = []
    for entry in entries:
        actors = [authors[actor_id] for actor_id in reversed(entry.actor_ids) if actor_id in authors]
        actor_count = int(entry.actor_count)
        text = texts[entry.entry_id]
        grouped_by = {"reply": "comment", PERSON_ROLLUP_KIND: "person", THREAD_KIND: "thread"}.get(entry.kind)
        views.append(
            FeedEntryView(
                id=entry.entry_id,
                # A person's roll-up and a watched thread's replies are reply entries to clients;
                # `grouped_by` tells them apart.
                kind="reply" if entry.kind in (PERSON_ROLLUP_KIND, THREAD_KIND) else entry.kind,
                rollup_key=text.rollup_key,
                actors=actors,
                actor_count=actor_count,
                title=text.title,
                body=text.body,
                url=text.url,
                text=feed_entry_text(
                    kind=entry.kind,
                    actors=actors,
                    actor_count=actor_count,
                    title=text.title,
                    event_count=int(entry.event_count),
                ),
                unread=not entry.read,
                delivery_id=entry.delivery_id,
                created_at=_at(entry.created_ms),
                updated_at=_at(entry.updated_ms),
                removed=text.removed,
                read_at=_at(entry.read_ms) if entry.read_ms is not None else None,
                event_count=int(entry.event_count),
                grouped_by=grouped_by,
                hidden=bool(entry.actor_ids) and all(actor_id in silenced for actor_id in entry.actor_ids),
            )
        )
    return views


@dataclass(frozen=True)
class FeedPage:
    unread_count: int
    results: list[FeedEntryView]


def feed_entries_list(*, user_id: str, unread_only: bool = False) -> FeedPage:
    """The user's feed entries, newest first (at most FEED_MAX_ENTRIES), from one consistent read."""
    feed = feed_read(user_id=user_id)
    entries = list(feed.entries)
    unread_count = sum(1 for entry in entries if not entry.read)
    if unread_only:
        entries = [entry for entry in entries if not entry.read]
    views = feed_entry_views(entries, silenced=frozenset(feed.silenced or ()))
    return FeedPage(unread_count=unread_count, results=[view for view in views if not view.hidden])


FEED_RETRY_BACKLOG_CAP = 100  # the index holds whole items (the event's JSON): count fewer


def feed_retries_backlog(*, now_ms: int | None = None) -> Backlog:
    """Feed events due for a retry (`process_feed_retries`' queue) and how long the oldest waits.

    One Query per shard of the `by_due` LSI (`due_at <= now`), at most 100 items in all;
    its entries are whole items of up to ~1 KB, so at the cap about 8 RCU (bench/health.py),
    and 0.5 RCU per shard when nothing is due. An item a worker holds has a `due_at` in the future: not counted.
    """
    now_ms = clock.now_ms() if now_ms is None else now_ms
    return backlog_due_ms(
        FeedRetry, parts=FEED_RETRY_SHARDS, label="feed retries due", cap=FEED_RETRY_BACKLOG_CAP, now_ms=now_ms
    )
