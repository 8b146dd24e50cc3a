"""Who a profile page is about: an account found by its name (its comments: social.selectors.profile_comments)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model
from django.utils.translation import gettext

from project.errors import NotFound
from social.models import Comment


@dataclass(frozen=True)
class Profile:
    id: str
    username: str
    display_name: str
    date_joined: datetime


def profile_get(*, username: str) -> Profile:
    """The public face of an account, found by username in any case; NotFound if none."""
    user = get_user_model().objects.filter(username__iexact=username, is_active=True).first()
    if user is None:
        raise NotFound(gettext("No such person."))
    return Profile(str(user.pk), user.username, user.shown_name, user.date_joined)


HIDDEN_SCAN = 50  # the owner's newest comments looked through for hidden ones


@dataclass(frozen=True)
class HiddenComment:
    id: str
    body: str
    created_at: str
    by_reports: bool  # hidden by reports, staff not yet decided (else by staff)
    held: bool = False  # waiting for review (social.spam), not hidden by a decision


def own_hidden_comments(*, author_id: str) -> list[HiddenComment]:
    """The author's comments hidden by moderation (not deleted) among their HIDDEN_SCAN newest,
    newest first: their own profile shows them marked, nobody else's view does. One Query of
    the keys-only `author` index and one BatchGetItem."""
    keys = list(Comment.author_index.query(author_id, scan_index_forward=False, limit=HIDDEN_SCAN))
    if not keys:
        return []
    comments = [
        comment
        for comment in Comment.batch_get([key.comment_id for key in keys])
        if comment.hidden and not comment.deleted_at
    ]
    comments.sort(key=lambda comment: comment.sort_key, reverse=True)
    return [
        HiddenComment(
            comment.comment_id,
            comment.body,
            comment.created_at,
            comment.hidden_by == "reports",
            held=comment.hidden_by == "held",
        )
        for comment in comments
    ]
