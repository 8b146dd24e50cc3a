"""The compose boxes' Preview button: the text as it will show, before it is posted or saved.

A plain submit button of the post, reply and edit forms (`name="preview"`), so it works
without JavaScript: the page comes back with the text still in its box (nothing typed is
lost) and, above the box, the text rendered as a comment shows it (social.formatting), its
@mentions of people linked. Nothing is written: a preview never posts, whatever the form's
idempotency key, and the box keeps that key for the Post that follows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.utils.safestring import SafeString

from social.formatting import comment_html
from social.mentions import mention_usernames
from social.services import line_breaks_normalize

if TYPE_CHECKING:
    from django import forms
    from django.http import HttpRequest

PREVIEW_FIELD = "preview"


def preview_asked(request: HttpRequest) -> bool:
    """The form was sent with its Preview button, not Post (or Save)."""
    return request.method == "POST" and PREVIEW_FIELD in request.POST


def comment_preview(form: forms.Form) -> SafeString:
    """The form's text rendered (one relational query for its @mentions; none without "@").
    A text too long to post is previewed too, and its form shows why it cannot be posted yet."""
    body = line_breaks_normalize(str(form.data.get("body", ""))).strip()
    if body:
        form.is_valid()  # the box's error (too long) shows with the preview
    return comment_html(body, mention_usernames([body]))
