"""`{% unread_badge %}`: the inbox link with the unread badge, for the header of every page."""

import logging

from django import template
from django.urls import reverse

from notifications.selectors import unread_count

logger = logging.getLogger(__name__)
register = template.Library()


@register.inclusion_tag("notifications/_badge.html", takes_context=True)
def unread_badge(context):
    user = context.get("user")
    count = None
    if user is not None and user.is_authenticated:
        try:
            count = unread_count(user_id=str(user.pk))
        except Exception:  # the page must render without its badge; the script fills it in later
            logger.warning("unread badge unavailable", exc_info=True)
    request = context.get("request")
    return {"unread_count": count, "current": request is not None and request.path == reverse("notifications")}
