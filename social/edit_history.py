"""The earlier bodies of edited comments, for staff (docs/explanation/moderation.md "Edit history").

A comment item holds its current body and `version` (1, absent, as posted; one more per edit).
Each edit writes, in its own transaction, one `comment_versions` item holding the body it
replaces (key: comment id, version number), under the condition that the comment still holds
that version: two edits at once cannot both replace version n, so each version is kept exactly
once and the loser re-reads and tries again (social.services.comment_edit). An item is one body
(at most BODY_MAX_LENGTH characters, 8 KB in UTF-8, well under the 400 KB item limit), so an edit costs the
transactional write of one more small item; nothing is read on a reader's page.

Readers never see these items: only the admin's comment page and a report case (staff) read
them. When a comment's text goes (its author's delete, staff's delete, the account's erasure),
its versions go too (`comment_versions_erase`): the pages show none for a deleted comment, so
versions a crash left behind are never shown, and the account's erasure deletes them again.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection
from dataclasses import dataclass

from project.dynamo.transactions import LabelledTransactWrite
from social.models import Comment, CommentVersion

VERSIONS_SHOWN_MAX = 100  # the versions one staff page lists, newest first
EDIT_ATTEMPTS = 8  # concurrent edits of one comment: each retry follows an edit that committed
# What an edit commits with it, decided from the comment as the edit read it: the people newly
# @mentioned (joining `mentioned_ids`) and what other apps add to the transaction.
EditExtras = tuple[Collection[str], Callable[[LabelledTransactWrite], None] | None]


@dataclass(frozen=True)
class VersionView:
    version: int
    body: str
    written_at: str  # when this body was posted or edited in
    replaced_at: str | None  # None: the current body
    current: bool


def comment_version(comment: Comment) -> int:
    """The number of the body `comment` holds (1 as posted)."""
    return int(comment.version or 1)


def version_keep(
    comment: Comment, *, replaced_at: str, also: Callable[[LabelledTransactWrite], None] | None = None
) -> Callable[[LabelledTransactWrite], None]:
    """What an edit at `replaced_at` adds to its transaction: the item keeping `comment`'s body
    as read (condition: no such version yet), then `also`."""
    kept = CommentVersion(
        comment.comment_id,
        comment_version(comment),
        body=comment.body,
        written_at=comment.edited_at or comment.created_at,
        replaced_at=replaced_at,
    )

    def build(transaction: LabelledTransactWrite) -> None:
        transaction.save(kept, condition=CommentVersion.version.does_not_exist(), label="version")
        if also is not None:
            also(transaction)

    return build


def comment_versions(*, comment: Comment) -> list[VersionView]:
    """Every body the comment held, the current one first, then newest first (one consistent
    Query; none for a comment never edited). A deleted comment has none: its text is gone."""
    if comment.deleted_at:
        return []
    current = VersionView(
        version=comment_version(comment),
        body=comment.body,
        written_at=comment.edited_at or comment.created_at,
        replaced_at=None,
        current=True,
    )
    if current.version == 1:
        return [current]
    earlier = CommentVersion.query(
        comment.comment_id, consistent_read=True, scan_index_forward=False, limit=VERSIONS_SHOWN_MAX
    )
    return [current] + [
        VersionView(
            version=int(item.version),
            body=item.body,
            written_at=item.written_at,
            replaced_at=item.replaced_at,
            current=False,
        )
        for item in earlier
        if int(item.version) < current.version
    ]


def version_diff(before: str, after: str) -> list[tuple[str, str]]:
    """Line by line what changed from `before` to `after`: ("-", line) removed, ("+", line)
    added, (" ", line) kept; the staff page shows it as text (escaped)."""
    lines = difflib.ndiff(before.splitlines(), after.splitlines())
    return [(line[0], line[2:]) for line in lines if line[:1] in ("-", "+", " ")]


def comment_versions_erase(*, comment_id: str) -> None:
    """Delete every earlier body of a comment (its text was deleted or its author erased).

    Again: nothing left to delete. Dies half way: the rest stay, never shown (a deleted comment
    shows none), until the author's account is erased (its eraser runs this for every comment)."""
    while True:
        page = list(CommentVersion.query(comment_id, consistent_read=True, limit=25))
        if not page:
            return
        with CommentVersion.batch_write() as batch:
            for item in page:
                batch.delete(item)
