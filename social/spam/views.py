"""What the pages answer after posting a comment the spam screen held: its own page, which tells
its author it waits for review (social/templates/social/comment_hidden.html)."""

from django.contrib import messages
from django.shortcuts import redirect
from django.utils.translation import gettext_lazy

from social import selectors

WAITING_FOR_REVIEW = gettext_lazy(
    "Your comment is waiting for review: only you and the moderators can see it until they approve it."
)


def posted_held(comment_id: str) -> bool:
    """Whether the comment just posted was held for review (one consistent GetItem)."""
    comment = selectors.comment_find(comment_id=comment_id)
    return comment is not None and bool(comment.hidden) and comment.hidden_by == "held"


def held_answer(request, comment_id: str):
    """After posting a held comment: its page, which shows its author it waits for review."""
    messages.info(request, WAITING_FOR_REVIEW, extra_tags="posted")
    return redirect("comment", comment_id=comment_id)
