"""`{{ comment|comment_body }}`: a comment's body as every page shows it (social.mentions)."""

from django import template
from django.utils.safestring import SafeString

from social.mentions import mention_html

register = template.Library()


@register.filter
def comment_body(comment) -> SafeString:
    """Escaped, line breaks kept, each @mention of a person a link to their profile."""
    return mention_html(comment.body, getattr(comment, "mention_usernames", {}))
