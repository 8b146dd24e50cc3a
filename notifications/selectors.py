"""Reads of the notifications room: the unread badge and the inbox. No Scan anywhere.

The inbox merges *sources* by position. A source is a function
`(*, user_id, before, limit) -> list[Notification]` (notifications/inbox_items.py) returning
at most `limit` notifications positioned strictly after the cursor position `before` (None:
from the top), best first. Like notifications give two sources (unread, read:
notifications/like_selectors.py); the feed adds its own to `INBOX_SOURCES`. The order is
"unread first, then newest first": a position is `(1 if unread else 0, time in ns, id)` and
the inbox is sorted by position, descending.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from notifications.feed.selectors import batch_get_by_key, feed_entry_views, feed_read
from notifications.inbox_items import Actor, InboxPage, InboxSource, Notification, Position
from notifications.like_selectors import like_notifications, like_read_source, like_unread_source
from notifications.models import LikeEvent, LikeRead, UnreadCount
from notifications.subjects import LIKE, REACTION
from project.dynamo.cursors import InvalidCursor, cursor_decode, cursor_encode
from project.operations.backlog import BACKLOG_CAP, Backlog
from project.serving.pools import READS, pool
from social.formatting import markdown_text
from social.models import Comment
from social.relations.selectors import silenced_ids

if TYPE_CHECKING:
    from notifications.feed.encoding import Record

INBOX_PAGE_SIZE = 20
INBOX_PAGE_SIZE_MAX = 100
EXCERPT_LENGTH = 80
STAFF_HISTORY_LIMIT = 200

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
        read=_with_excerpts(like_notifications(list(read_items), unread=False)),
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
