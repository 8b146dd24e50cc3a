"""The `profile` index's one-off backfill (docs/reference/tables.md "Tables"): comments written
before the index existed carry no `profile_author`, so their author's profile would not
list them until this has run once (`python manage.py profile_index_backfill`)."""

from __future__ import annotations

from functools import partial

from pynamodb.exceptions import UpdateError
from pynamodb.expressions.condition import Condition

from project.dynamo.transactions import write_retrying
from project.errors import condition_failed
from social.models import Comment


def comment_profile_backfill() -> tuple[int, int]:
    """List in the `profile` index every visible comment written before it existed: set
    `profile_author` on each visible, undeleted comment that lacks it. Returns (visible
    comments found without it, how many this run set).

    A one-off for operators (`python manage.py profile_index_backfill`): one Scan of
    `comments` (filtered server side, so it reads the whole table once), then one
    conditional UpdateItem per comment. Twice, or after being killed: it sets only what
    is still missing. Concurrently with a hide or delete: the condition (still visible,
    not deleted, not set) makes the hide win, so a hidden comment never reappears.
    """
    found = written = 0
    missing: Condition = (
        Comment.profile_author.does_not_exist() & Comment.deleted_at.does_not_exist() & (Comment.hidden == False)  # noqa: E712 (a PynamoDB condition)
    )
    for comment in Comment.scan(filter_condition=missing, attributes_to_get=["comment_id", "author_id"]):
        found += 1
        try:
            write_retrying(partial(_profile_author_set, comment, missing), what="comment_profile_backfill")
            written += 1
        except UpdateError as error:
            if not condition_failed(error):
                raise
    return found, written


def _profile_author_set(comment: Comment, missing: Condition) -> None:
    Comment(comment.comment_id).update(
        actions=[Comment.profile_author.set(comment.author_id)], condition=Comment.comment_id.exists() & missing
    )
