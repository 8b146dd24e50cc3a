"""Reads of the per-user feed: entries with their actors and text, and the unread count.

Every read is one GetItem (plus one query of Django users for the actor names); no Scan.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pynamodb.exceptions import DoesNotExist

from notifications.feed import FEED_SOURCE, feed_read
from notifications.models import FeedEntry, UnreadCount
from social.selectors import Author, authors_by_id


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


def feed_entry_text(*, kind: str, actors: list[Author], actor_count: int, title: str) -> str:
    """ "Bob replied to your comment", "Bob and Alice ...", "Bob and 3 others ..." (newest first)."""
    if kind == "reply" and actors:
        first = actors[0].display_name
        if actor_count <= 1:
            who = first
        elif actor_count == 2 and len(actors) > 1:
            who = f"{first} and {actors[1].display_name}"
        else:
            others = actor_count - 1
            who = f"{first} and {others} other{'s' if others != 1 else ''}"
        return f"{who} replied to your comment"
    return title or kind.capitalize()


def _parse(timestamp: str) -> datetime:
    return datetime.fromisoformat(timestamp)


def feed_entry_views(entries: list[FeedEntry]) -> list[FeedEntryView]:
    ids = [actor_id for entry in entries for actor_id in entry.actor_ids or []]
    authors = authors_by_id(ids) if ids else {}
    views = []
    for entry in entries:
        actors = [authors[actor_id] for actor_id in reversed(entry.actor_ids or [])]
        actor_count = int(entry.actor_count or 0)
        views.append(
            FeedEntryView(
                id=entry.entry_id,
                kind=entry.kind,
                rollup_key=entry.rollup_key,
                actors=actors,
                actor_count=actor_count,
                title=entry.title or "",
                body=entry.body or "",
                url=entry.url or "",
                text=feed_entry_text(kind=entry.kind, actors=actors, actor_count=actor_count, title=entry.title),
                unread=not entry.read,
                delivery_id=entry.delivery_id,
                created_at=_parse(entry.created_at),
                updated_at=_parse(entry.updated_at),
            )
        )
    return views


@dataclass(frozen=True)
class FeedPage:
    unread_count: int
    results: list[FeedEntryView]


def feed_entries_list(*, user_id: str, unread_only: bool = False) -> FeedPage:
    """The user's feed entries, newest first (at most FEED_MAX_ENTRIES), from one consistent read."""
    entries = list(feed_read(user_id=user_id).entries or [])
    unread_count = sum(1 for entry in entries if not entry.read)
    if unread_only:
        entries = [entry for entry in entries if not entry.read]
    return FeedPage(unread_count=unread_count, results=feed_entry_views(entries))


def feed_unread_count(*, user_id: str) -> int:
    """Unread feed entries, as the badge counts them (the `feed` item of unread_counts)."""
    try:
        return max(0, int(UnreadCount.get(user_id, FEED_SOURCE, consistent_read=True).count))
    except DoesNotExist:
        return 0
