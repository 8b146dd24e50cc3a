"""Reads of the held-for-review queue: the oldest waiting first, each with its comment as stored.

The order comes from the relational `HeldComment` rows (one query); the comments are then read
strongly consistently (one BatchGetItem), and only those still held are listed (a row whose
comment was approved, rejected or never written, because its writer died between the row and
the comment, is left out: `held_rows_drop_stale` deletes such rows).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from social.models import Comment, HeldComment
from social.selectors import Author, authors_by_id

HELD_PAGE_MAX = 100
HELD = "held"  # a held comment's `hidden_by`


def comment_is_held(comment: Comment | None) -> bool:
    """Whether the stored comment is waiting for review (hidden by the screen, not deleted)."""
    return comment is not None and bool(comment.hidden) and comment.hidden_by == HELD and not comment.deleted_at


@dataclass(frozen=True)
class HeldView:
    comment_id: str
    author: Author
    body: str
    parent_id: str | None
    rule: str
    reason: str
    held_at: datetime


@dataclass(frozen=True)
class HeldPage:
    results: list[HeldView]
    stale: list[str]  # rows whose comment is no longer held


def held_queue(*, limit: int = 50, author_id: str | None = None) -> HeldPage:
    """The oldest `limit` comments waiting for review (of one author with `author_id`)."""
    rows_query = HeldComment.objects.all()
    if author_id is not None:
        rows_query = rows_query.filter(author_id=author_id)
    rows = list(rows_query.order_by("held_at", "comment_id")[: min(limit, HELD_PAGE_MAX)])
    if not rows:
        return HeldPage([], [])
    ids = list(dict.fromkeys(row.comment_id for row in rows))
    found = {item.comment_id: item for item in Comment.batch_get(ids, consistent_read=True)}
    held = [row for row in rows if comment_is_held(found.get(row.comment_id))]
    stale = [row.comment_id for row in rows if not comment_is_held(found.get(row.comment_id))]
    authors = authors_by_id([row.author_id for row in held])
    return HeldPage(
        [
            HeldView(
                comment_id=row.comment_id,
                author=authors[row.author_id],
                body=found[row.comment_id].body,
                parent_id=row.parent_id or None,
                rule=row.rule,
                reason=row.reason,
                held_at=row.held_at,
            )
            for row in held
        ],
        stale,
    )


def held_count() -> int:
    return HeldComment.objects.count()
