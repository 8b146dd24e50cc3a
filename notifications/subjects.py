"""What a like-fold subject is about: a comment's likes (its id) or its reactions (`reaction#<comment id>`).

A comment's reactions are folded and notified as its likes are (notifications/like_fold/), under
this key in place of the comment id: their events, unread and read items, markers and badge item
(`like#reaction#<comment id>`) sit beside the likes' in the same tables.
"""

from __future__ import annotations

LIKE = "like"
REACTION = "reaction"
REACTION_SUBJECT_PREFIX = "reaction#"


def reaction_subject(comment_id: str) -> str:
    """The key a comment's reactions go under in the like fold's tables (`reaction#<comment id>`)."""
    return f"{REACTION_SUBJECT_PREFIX}{comment_id}"


def subject_kind(subject: str) -> str:
    """What a fold subject notifies of: `reaction` for `reaction#<comment id>`, else `like`."""
    return REACTION if subject.startswith(REACTION_SUBJECT_PREFIX) else LIKE


def subject_comment(subject: str) -> str:
    """The comment a fold subject is about (`reaction#<comment id>` -> the comment id)."""
    return subject.removeprefix(REACTION_SUBJECT_PREFIX)
