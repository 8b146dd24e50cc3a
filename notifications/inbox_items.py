"""What the inbox shows, whatever its source: the `Notification` item, its position, a page.

A position is `(1 if unread else 0, time in ns, id)`; the inbox (notifications/selectors.py)
sorts by position, descending: unread first, then newest first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from notifications.subjects import LIKE, REACTION, reaction_subject
from project.clock import clock

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


def at_ns(at: datetime) -> int:
    """A time as nanoseconds since the epoch (an inbox position's middle part)."""
    return int(at.timestamp()) * 1_000_000_000 + at.microsecond * 1000
