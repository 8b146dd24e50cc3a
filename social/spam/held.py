"""Writes of the held-for-review queue: holding a new comment, rejecting one, the queue's rows and
the screen's audit lines. Approving (publishing with notifications) is actions/held.py.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from django.utils.translation import gettext
from pynamodb.exceptions import DeleteError

from project.errors import Conflict, condition_failed
from social.account.limits import account_limit_enforce
from social.models import Comment, HeldComment, ModerationAction
from social.spam.held_selectors import HELD, comment_is_held
from social.spam.screen import PUBLISH

if TYPE_CHECKING:
    from social.spam.screen import Verdict

logger = logging.getLogger(__name__)


def comment_hold_prepare(*, comment: Comment, verdict: Verdict) -> None:
    """Make the unsaved `comment` a held one and write its queue row first (one INSERT; again:
    the same row). Held: hidden with `hidden_by` "held", out of every listing index (no timeline,
    replies or profile key), so no page, list or count of anyone else's shows it. The row comes
    before the comment: a writer dying between them leaves a row the queue drops, never a held
    comment staff cannot find."""
    comment.hidden = True
    comment.hidden_by = HELD
    comment.timeline_key = None
    comment.reply_to = None
    comment.profile_author = None
    comment.mentioned_ids = None
    HeldComment.objects.get_or_create(
        comment_id=comment.comment_id,
        defaults={
            "author_id": comment.author_id,
            "parent_id": comment.parent_id or "",
            "rule": verdict.rule[:32],
            "reason": verdict.reason[:300],
            "held_at": datetime.fromisoformat(comment.created_at).astimezone(UTC),
        },
    )


def held_rows_drop(comment_ids: list[str]) -> None:
    """Delete the queue rows of these comments (decided, or never written). Idempotent."""
    if comment_ids:
        HeldComment.objects.filter(comment_id__in=comment_ids).delete()


def held_comment_delete(*, comment: Comment) -> bool:
    """Delete a held comment's item for good (rejected, or its author removed as a spammer), on
    condition it is still held; then its row. False when it was not held (nothing deleted).

    A rejection racing an approval: the two conditions make exactly one of them win; the loser
    sees Conflict (409). Twice: the second finds nothing held and deletes only the row."""
    if not comment_is_held(comment):
        held_rows_drop([comment.comment_id])
        return False
    try:
        comment.delete(condition=(Comment.hidden_by == HELD) & Comment.deleted_at.does_not_exist())
    except DeleteError as error:
        if not condition_failed(error):
            raise
        raise Conflict(gettext("This comment was decided at the same moment by someone else.")) from None
    held_rows_drop([comment.comment_id])
    logger.info("held comment %s deleted", comment.comment_id)
    return True


def held_delete_by_author(*, comment: Comment | None, author_id: str) -> bool:
    """The author deleting their own comment while it waits for review (its page, the API's
    delete): deleted for good with its queue row, counted in their `edit` limit (RateLimited:
    nothing written). True when done; False when `comment` is not their held comment, or staff
    approved it at this very moment (the caller then deletes it as a published one). Twice:
    the second finds no comment."""
    if comment is None or comment.author_id != author_id or not comment_is_held(comment):
        return False
    account_limit_enforce(name="edit", user_id=author_id)
    try:
        deleted = held_comment_delete(comment=comment)
    except Conflict:
        return False
    if deleted:
        logger.info("held comment %s deleted by its author, user %s", comment.comment_id, author_id)
    return deleted


def screen_audit(*, comment_id: str, author_id: str, verdict: Verdict) -> None:
    """A line of the moderation audit log for a screen decision other than a plain publish:
    held, blocked, flagged or censored, naming its rule (source "screen", no staff)."""
    if verdict.decision == PUBLISH and verdict.rule in ("none", "staff"):
        return
    action = verdict.decision if verdict.decision != PUBLISH else ("flag" if verdict.flagged else "censor")
    ModerationAction.objects.create(
        staff=None,
        staff_username="",
        action=action,
        target_type="comment",
        target_id=comment_id[:64],
        detail=f"rule {verdict.rule}: {verdict.reason} (author {author_id})"[:2000],
        source="screen",
        outcome="done",
    )
