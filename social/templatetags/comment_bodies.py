"""`{{ comment|comment_body }}`: a comment's body as every page shows it (social.formatting)."""

from django import template
from django.utils.safestring import SafeString

from social.formatting import comment_html, markdown_text

register = template.Library()


@register.filter
def comment_body(comment) -> SafeString:
    """Its Markdown subset rendered and sanitised, each @mention of a person a link to their profile."""
    return comment_html(comment.body, getattr(comment, "mention_usernames", {}))


@register.filter
def comment_words(comment) -> str:
    """Its words as they read rendered, on one line, without the Markdown signs (a page's title)."""
    return markdown_text(comment.body)
