"""Helpers for notification tests: comments, likes, and the tables' own view of a user."""

from __future__ import annotations

from actions.comments import comment_create
from actions.likes import like_add, like_remove
from notifications.like_fold import like_events_fold_until_idle
from notifications.models import LikeRead, LikeUnread, UnreadCount


def uid(user) -> str:
    return str(user.pk)


def post(author, body="A comment") -> str:
    return comment_create(author_id=uid(author), body=body).comment_id


def fold() -> int:
    """Run the like folder synchronously until nothing is pending (what `fold_like_events` does)."""
    return like_events_fold_until_idle()


def like(user, comment_id, *, folded=True):
    """Like, then fold (notification tests turn the fold after the response off: the folder does it)."""
    state = like_add(comment_id=comment_id, user_id=uid(user))
    if folded:
        fold()
    return state


def unlike(user, comment_id, *, folded=True):
    state = like_remove(comment_id=comment_id, user_id=uid(user))
    if folded:
        fold()
    return state


def unread_item(author, comment_id) -> LikeUnread:
    return LikeUnread.get(uid(author), comment_id, consistent_read=True)


def read_items(author) -> list[LikeRead]:
    return list(LikeRead.query(uid(author), consistent_read=True))


def count_items(author) -> dict[str, int]:
    return {item.source: int(item.count) for item in UnreadCount.query(uid(author), consistent_read=True)}


def table_badge(user_id: str) -> int:
    """Unread likes and feed entries summed from the base table (not the LSI the selector uses);
    the badge itself counts a comment's unread likes as one notification."""
    return sum(max(0, int(item.count)) for item in UnreadCount.query(user_id, consistent_read=True))
