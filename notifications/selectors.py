"""Reads of the notifications room: the unread badge and the inbox. No Scan anywhere.

The inbox merges *sources* by position. A source is a function
`(*, user_id, before, limit) -> list[Notification]` returning at most `limit`
notifications positioned strictly after the cursor position `before` (None: from
the top), best first. Like notifications give two sources (unread, read); the feed
adds its own to `INBOX_SOURCES`. The order is "unread first, then newest first":
a position is `(1 if unread else 0, time in ns, id)` and the inbox is sorted by
position, descending.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, cast

from django.conf import settings
from django.urls import reverse
from django.utils.translation import gettext, ngettext

from notifications.feed.selectors import batch_get_by_key, feed_entry_views, feed_read
from notifications.models import LikeEvent, LikeRead, LikeUnread, UnreadCount, read_key
from notifications.subjects import LIKE, REACTION, reaction_subject, subject_comment, subject_kind
from project.clock import clock, parse_iso
from project.dynamo.cursors import InvalidCursor, cursor_decode, cursor_encode
from project.operations.backlog import BACKLOG_CAP, Backlog
from project.serving.pools import READS, pool
from social.formatting import markdown_text
from social.models import Comment
from social.reactions.names import REACTIONS
from social.reactions.selectors import reactions_of
from social.relations.selectors import silenced_ids
from social.selectors import authors_by_id

if TYPE_CHECKING:
    from pynamodb.expressions.condition import Condition

    from notifications.feed.encoding import Record

INBOX_PAGE_SIZE = 20
INBOX_PAGE_SIZE_MAX = 100
EXCERPT_LENGTH = 80
STAFF_HISTORY_LIMIT = 200

Position = tuple[int, int, str]  # (unread 1/0, time in ns, id), compared descending


@dataclass(frozen=True)
class Actor:
    id: str
    display_name: str


@dataclass(frozen=True)
class Notification:
    """One inbox item, whatever its source (API shape: docs/reference/http.md)."""

    id: str
    kind: str
    text: str
    unread: bool
    updated_at: datetime
    position: Position
    url: str = ""
    comment_id: str | None = None
    actors: tuple[Actor, ...] = ()
    actor_count: int = 0
    listed_count: int = 0  # likes: liker ids kept (at most LIKE_NOTIFICATION_LIKERS_MAX of actor_count)
    read_at: datetime | None = None
    expires_at: datetime | None = None
    excerpt: str = ""  # the comment's text, cut at EXCERPT_LENGTH
    body: str = ""  # a staff message's whole text (never cut: there is nowhere else to read it)
    entry_id: str | None = None  # feed entries: the id `entry_ids` takes
    removed: bool = False  # likes: the comment was hidden or deleted since
    grouped_by: str | None = None  # feed entries: "comment", "person" (feed_selectors.FeedEntryView)

    @property
    def expired(self) -> bool:
        """Past its retention: never shown to the user, even before TTL deletes it."""
        return self.expires_at is not None and self.expires_at <= clock.utcnow()

    @property
    def read_field(self) -> str | None:
        """The field of `POST /api/notifications/read/` that marks this item read."""
        if self.entry_id:
            return "entry_ids"
        return "comment_ids" if self.kind in (LIKE, REACTION) else None

    @property
    def read_id(self) -> str | None:
        """The id `read_field` takes: the entry, the comment (likes), `reaction#<comment id>` (reactions)."""
        if self.entry_id:
            return self.entry_id
        if self.kind == REACTION and self.comment_id:
            return reaction_subject(self.comment_id)
        return self.comment_id if self.kind == LIKE else None


@dataclass(frozen=True)
class InboxPage:
    unread_count: int
    results: list[Notification]
    next_cursor: str | None


InboxSource = Callable[..., list[Notification]]


# --- time ------------------------------------------------------------------


def _ns(at: datetime) -> int:
    return int(at.timestamp()) * 1_000_000_000 + at.microsecond * 1000


# --- badge -----------------------------------------------------------------


def unread_count_sources(*, user_id: str, consistent: bool = True) -> dict[str, int]:
    """The user's non-zero unread counts by source (`like#<comment_id>`, `feed`, ...).

    One Query on the `by_count` LSI: the items at 0 (one per comment ever posted) are
    never read, so the cost follows the unread sources only. Strongly consistent unless
    `consistent=False` (half the units, for polling).
    """
    return {
        item.source: int(item.count)
        for item in UnreadCount.by_count.query(user_id, UnreadCount.count > 0, consistent_read=consistent)
    }


LIKE_SOURCE_PREFIX = "like#"  # services.like_source: a comment's unread likes


def notifications_unread(sources: dict[str, int]) -> int:
    """The badge's number from `unread_count_sources`: unread notifications, as the inbox lists
    them. A comment's unread likes are one notification however many likes it holds (3 likes
    on one comment: 1); the feed's item counts its unread entries, one each."""
    return sum(1 if source.startswith(LIKE_SOURCE_PREFIX) else count for source, count in sources.items())


def unread_count(*, user_id: str, consistent: bool = True) -> int:
    """The badge: unread notifications (one per comment with unread likes, one per feed entry),
    from the one Query of `unread_count_sources`."""
    return notifications_unread(unread_count_sources(user_id=user_id, consistent=consistent))


# --- like notifications ----------------------------------------------------


def like_text(names: list[str], count: int, *, reaction: bool = False) -> str:
    """ "Alice liked your comment", "Alice and Bob ...", "Alice and 2 others ..." in the active
    language (the reader's: pages and mails activate it), plural forms from its catalogue; with
    `reaction`, "Alice and 3 others reacted to your comment".

    `count` is every unread like (`num_likes`), `names` the first likers still listed:
    the list keeps at most LIKE_NOTIFICATION_LIKERS_MAX, and when every listed liker
    undid their like while overflow likes remain counted, no name is left. Names are
    never translated.
    """
    if count <= 0:
        return gettext("Nobody reacted to your comment yet") if reaction else gettext("Nobody liked your comment yet")
    if not names:
        if count == 1:
            return gettext("Someone reacted to your comment") if reaction else gettext("Someone liked your comment")
        if reaction:
            text = ngettext(
                "%(count)d person reacted to your comment", "%(count)d people reacted to your comment", count
            )
        else:
            text = ngettext("%(count)d person liked your comment", "%(count)d people liked your comment", count)
        return text % {"count": count}
    if count == 1:
        text = gettext("%(name)s reacted to your comment") if reaction else gettext("%(name)s liked your comment")
        return text % {"name": names[0]}
    if count == 2 and len(names) >= 2:
        if reaction:
            text = gettext("%(first)s and %(second)s reacted to your comment")
        else:
            text = gettext("%(first)s and %(second)s liked your comment")
        return text % {"first": names[0], "second": names[1]}
    others = count - 1
    if reaction:
        text = ngettext(
            "%(name)s and %(count)d other reacted to your comment",
            "%(name)s and %(count)d others reacted to your comment",
            others,
        )
    else:
        text = ngettext(
            "%(name)s and %(count)d other liked your comment",
            "%(name)s and %(count)d others liked your comment",
            others,
        )
    return text % {"name": names[0], "count": others}


def _reaction_emoji(items: list[LikeUnread | LikeRead]) -> dict[str, str]:
    """The emoji of each reacted-to comment's reactions counted now, in the buttons' order
    (`❤️ 🎉`): one strongly consistent Query of its reaction counter per comment (a reaction
    folded a moment ago is in it), concurrently, only for reaction notifications."""
    subjects = {item.comment_id for item in items}
    comment_ids = sorted(subject_comment(subject) for subject in subjects if subject_kind(subject) == REACTION)
    if not comment_ids:
        return {}
    counted = reactions_of([Comment(c, has_reactions=True) for c in comment_ids], viewer_id=None)
    return {c: " ".join(REACTIONS[name] for name in counted[c].counts) for c in comment_ids}


def like_count(item: LikeUnread | LikeRead) -> int:
    """Every like of the notification: `num_likes`, which goes on counting past the listed likers.

    (`liker_ids` holds only the first LIKE_NOTIFICATION_LIKERS_MAX; the max also covers
    history read before `num_likes` was copied faithfully.)
    """
    return max(int(item.num_likes or 0), len(item.liker_ids or []))


def _like_notifications(items: list[LikeUnread | LikeRead], *, unread: bool) -> list[Notification]:
    """Notifications for like items; the text names at most the first two likers."""
    named = {liker for item in items for liker in list(item.liker_ids or [])[:2]}
    authors = authors_by_id(sorted(named))
    emoji = _reaction_emoji(items)
    results = []
    for item in items:
        liker_ids = list(item.liker_ids or [])
        count = like_count(item)
        actors = tuple(Actor(liker, authors[liker].display_name) for liker in liker_ids[:2])
        updated_at = parse_iso(item.updated_at)
        kind, comment_id = subject_kind(item.comment_id), subject_comment(item.comment_id)
        names = [actor.display_name for actor in actors]
        text = like_text(names, count, reaction=kind != LIKE)
        if kind == REACTION and emoji.get(comment_id):
            text = f"{text} {emoji[comment_id]}"
        if unread:
            notification_id = f"like:{item.comment_id}"
            position = (1, _ns(updated_at), notification_id)
            read_at = expires_at = None
        else:
            read = cast(LikeRead, item)  # `unread` is False: the items are LikeRead ones
            notification_id = f"like:{read.read_key}"
            position = (0, int(read.read_key.split("#", 1)[0]), notification_id)
            read_at = parse_iso(read.read_at)
            expires_at = read.expires_at
        results.append(
            Notification(
                id=notification_id,
                kind=kind,
                text=text,
                unread=unread,
                updated_at=updated_at,
                position=position,
                url=reverse("comment", args=[comment_id]),
                comment_id=comment_id,
                actors=actors,
                actor_count=count,
                listed_count=len(liker_ids),
                read_at=read_at,
                expires_at=expires_at,
            )
        )
    return results


def like_unread_source(*, user_id: str, before: Position | None, limit: int) -> list[Notification]:
    """Unread like notifications, newest update first.

    The LSI yields the comments with `num_likes > 0` only; they are sorted here by
    update time (DynamoDB can't key on both). A user has one unread item
    per liked comment at most, and reading them empties the set.
    """
    if before is not None and before[0] == 0:
        return []  # the cursor is already past every unread item
    items = list(LikeUnread.by_num_likes.query(user_id, LikeUnread.num_likes > 0, consistent_read=True))
    notifications = sorted(_like_notifications(items, unread=True), key=lambda n: n.position, reverse=True)
    if before is not None:
        notifications = [n for n in notifications if n.position < before]
    return notifications[:limit]


def _retention_start_key() -> str:
    oldest = clock.now_ns() - int(timedelta(days=settings.NOTIFICATION_READ_RETENTION_DAYS).total_seconds() * 1e9)
    return f"{oldest:020d}"


def like_read_source(*, user_id: str, before: Position | None, limit: int) -> list[Notification]:
    """Read like notifications still within retention, newest read first.

    Expired items are filtered whether or not TTL has deleted them yet (AWS takes
    up to two days): the key range stops at the retention window and `expires_at`
    is checked too (the retention setting may have changed since they were read).
    """
    start = _retention_start_key()
    condition: Condition = LikeRead.read_key > start
    if before is not None and before[0] == 0:
        end = _before_read_key(before)
        if end < start:
            # The cursor is older than the retention window (e.g. a page that ended on an
            # old read feed entry): nothing read is left after it, and DynamoDB refuses
            # a BETWEEN whose bounds are reversed.
            return []
        condition = LikeRead.read_key.between(start, end)
    items = LikeRead.query(
        user_id,
        range_key_condition=condition,
        filter_condition=LikeRead.expires_at > clock.utcnow(),
        scan_index_forward=False,
        consistent_read=True,
        limit=limit + 2,  # the cursor's own item may be among them (the key range is inclusive)
    )
    notifications = _like_notifications(list(items), unread=False)
    if before is not None:
        notifications = [n for n in notifications if n.position < before]
    return notifications[:limit]


def _before_read_key(before: Position) -> str:
    """The largest `read_key` that can sort before the position (the source filters exactly)."""
    prefix = "like:"
    if before[2].startswith(prefix):
        return before[2][len(prefix) :]
    return read_key(read_ns=before[1], comment_id="\uffff")


def _feed_position(record: Record) -> Position:
    """Unread: by the latest update; read: by when it was read, as likes are (only read
    records are decoded for it; one read before its time was kept goes by its update)."""
    if not record.read:
        return (1, record.updated_ms * 1_000_000, f"feed:{record.entry_id}")
    read_ms = record.entry().read_ms or record.updated_ms
    return (0, read_ms * 1_000_000, f"feed:{record.entry_id}")


def feed_source(*, user_id: str, before: Position | None, limit: int) -> list[Notification]:
    """The feed's entries (replies, messages), unread ones first, each by its latest update.

    One consistent GetItem (the whole feed is one item of at most FEED_MAX_ENTRIES small
    entries), ordered by the records' heads; only the page's entries are decoded, and
    their text read from its sources.
    """
    feed = feed_read(user_id=user_id)
    positioned = sorted(
        ((_feed_position(record), record) for record in feed.records),
        key=lambda pair: pair[0],
        reverse=True,
    )
    if before is not None:
        positioned = [pair for pair in positioned if pair[0] < before]
    page = positioned[:limit]
    views = feed_entry_views([record.entry() for _, record in page], silenced=frozenset(feed.silenced or ()))
    return [
        Notification(
            id=position[2],
            kind=view.kind,
            text=view.text,
            unread=view.unread,
            updated_at=view.updated_at,
            position=position,
            url=view.url,
            actors=tuple(Actor(actor.id, actor.display_name) for actor in view.actors[:2]),
            actor_count=view.actor_count,
            excerpt="" if view.kind == "message" else _excerpt(view.body),
            body=view.body if view.kind == "message" else "",
            entry_id=view.id,
            read_at=view.read_at,
            grouped_by=view.grouped_by,
        )
        for (position, _), view in zip(page, views, strict=True)
        if not view.hidden  # only people the owner blocked or muted: left out (a page may be short)
    ]


# Every source of the inbox.
INBOX_SOURCES: list[InboxSource] = [like_unread_source, like_read_source, feed_source]


# --- inbox -----------------------------------------------------------------


def encode_cursor(position: Position, *, user_id: str) -> str:
    """A signed cursor bound to this user's inbox (project.dynamo.cursors)."""
    return cursor_encode(list(position), query=f"inbox:{user_id}")


# An inbox item's id: "like:<comment id>", "like:<read key>" or "feed:<entry id>".
INBOX_ITEM_ID = re.compile(r"(like|feed):[0-9A-Za-z#._-]{1,120}", flags=re.ASCII)
AT_NS_MAX = 10**20 - 1  # read keys keep the time as 20 digits


def decode_cursor(cursor: str, *, user_id: str) -> Position:
    """The position of a cursor of this user's inbox, each value type-checked (InvalidCursor)."""
    payload = cursor_decode(cursor, query=f"inbox:{user_id}")
    if not isinstance(payload, list) or len(payload) != 3:
        raise InvalidCursor()
    unread, at_ns, item_id = payload
    # `type(...) is int`: JSON true/false are bools, which Python would take for 1/0.
    if type(unread) is not int or unread not in (0, 1) or type(at_ns) is not int or not 0 <= at_ns <= AT_NS_MAX:
        raise InvalidCursor()
    if not isinstance(item_id, str) or not INBOX_ITEM_ID.fullmatch(item_id):
        raise InvalidCursor()
    return (unread, at_ns, item_id)


def _with_excerpts(notifications: list[Notification]) -> list[Notification]:
    comment_ids = sorted({n.comment_id for n in notifications if n.comment_id})
    if not comment_ids:
        return notifications
    attributes = ["comment_id", "body", "hidden", "deleted_at"]
    bodies = {
        comment_id: None if comment.hidden or comment.deleted_at else comment.body
        for comment_id, comment in batch_get_by_key(Comment, set(comment_ids), attributes).items()
    }
    return [
        (
            replace(n, excerpt=_excerpt(bodies.get(n.comment_id) or ""), removed=bodies.get(n.comment_id) is None)
            if n.comment_id
            else n
        )
        for n in notifications
    ]


def _excerpt(body: str) -> str:
    """The first words of the body as it reads rendered (social.formatting): `**late**` is "late"."""
    body = markdown_text(body)
    return body if len(body) <= EXCERPT_LENGTH else body[: EXCERPT_LENGTH - 1] + "…"


def _only_silenced(notification: Notification, silenced: frozenset[str]) -> bool:
    """A like notification naming only people the reader blocked or muted (their read history,
    or an unread one whose fold has not taken them out yet): the inbox leaves it out."""
    actors = notification.actors
    return (
        notification.kind in (LIKE, REACTION)
        and bool(actors)
        and notification.actor_count <= len(actors)
        and all(actor.id in silenced for actor in actors)
    )


def notification_inbox(
    *, user_id: str, cursor: str | None = None, limit: int | None = None, excerpts: bool = False
) -> InboxPage:
    """The user's inbox page: unread first (newest update first), then read (newest read first).

    Each source returns at most `limit + 1` items after the cursor; the merge keeps
    `limit`, and there is a next page when anything was left over.
    """
    limit = max(1, min(INBOX_PAGE_SIZE_MAX, limit or INBOX_PAGE_SIZE))
    before = decode_cursor(cursor, user_id=user_id) if cursor else None
    # Beside the inbox's sources: the badge and the block list (DynamoDB only, no ORM).
    badge = pool(READS).submit(unread_count, user_id=user_id)
    silenced = pool(READS).submit(silenced_ids, user_id=user_id)
    merged: list[Notification] = []
    for source in INBOX_SOURCES:
        merged.extend(source(user_id=user_id, before=before, limit=limit + 1))
    merged = [n for n in merged if not _only_silenced(n, silenced.result())]
    merged.sort(key=lambda n: n.position, reverse=True)
    results, more = merged[:limit], len(merged) > limit
    if excerpts:
        results = _with_excerpts(results)
    return InboxPage(
        unread_count=badge.result(),
        results=results,
        next_cursor=encode_cursor(results[-1].position, user_id=user_id) if more and results else None,
    )


# --- staff -----------------------------------------------------------------


@dataclass(frozen=True)
class StaffNotifications:
    unread_count: int
    sources: dict[str, int]
    unread: list[Notification]
    read: list[Notification]
    feed: list[Notification]  # replies and broadcast messages, unread first


def notifications_for_staff(*, user_id: str) -> StaffNotifications:
    """A user's notifications of every kind and badge, for the admin page.

    Likes: unread, and read history including items past `expires_at` that TTL has
    not deleted yet (they have `expires_at` in the past), newest read first, at most
    200. The feed (replies, broadcast messages): its entries as the inbox orders them.
    """
    unread = like_unread_source(user_id=user_id, before=None, limit=STAFF_HISTORY_LIMIT)
    read_items = LikeRead.query(user_id, scan_index_forward=False, consistent_read=True, limit=STAFF_HISTORY_LIMIT)
    sources = unread_count_sources(user_id=user_id)
    return StaffNotifications(
        unread_count=notifications_unread(sources),
        sources=sources,
        unread=_with_excerpts(unread),
        read=_with_excerpts(_like_notifications(list(read_items), unread=False)),
        feed=feed_source(user_id=user_id, before=None, limit=STAFF_HISTORY_LIMIT),
    )


def like_events_backlog() -> Backlog:
    """Like events not folded yet (`fold_like_events`' queue) and the oldest one's time.

    One Scan page of `like_events` (it holds only events not folded yet), at most
    BACKLOG_CAP items, eventually consistent: 0.5 RCU when nothing is pending, about 13 RCU
    at the cap. Past the cap the count says "at least" and the oldest is of those read.
    """
    count, oldest = 0, None
    for event in LikeEvent.scan(limit=BACKLOG_CAP, page_size=BACKLOG_CAP, attributes_to_get=["comment_id", "event_id"]):
        count += 1
        at = int(event.event_id.partition("#")[0]) / 1e9  # <time ns>#<random>
        oldest = at if oldest is None else min(oldest, at)
    return Backlog(label="pending like events", count=count, capped=count >= BACKLOG_CAP, oldest_at=oldest)
