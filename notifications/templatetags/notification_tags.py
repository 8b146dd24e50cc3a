"""`{% unread_badge %}`: the inbox link with the unread badge, for the header of every page;
`{% live_cursor %}`: the page's cursor for the live poll."""

import logging

from django import template
from django.conf import settings
from django.urls import reverse

from notifications.selectors import unread_count
from project.clock import clock
from project.http.fresh import FRESH_BADGE
from social.live import page_badge_kept, page_cursor, shared_badges

logger = logging.getLogger(__name__)
register = template.Library()


@register.inclusion_tag("notifications/_badge.html", takes_context=True)
def unread_badge(context):
    """The badge of every page's header: eventually consistent (half the read units, at most
    about a second old, as the live poll's), or the one another page of this process read for
    the person while nothing about it changed since (`_badge`), except on the inbox page, where
    "mark all read" lands, and for a browser that just marked its notifications read
    (`FRESH_BADGE`): the person must see the badge at what they left it."""
    user = context.get("user")
    request = context.get("request")
    current = request is not None and request.path == reverse("notifications")
    count = None
    page_count = getattr(context.get("page"), "unread_count", None) if current else None
    if isinstance(page_count, int):
        count = page_count  # the inbox read it exactly a moment ago: not twice per page
    elif user is not None and user.is_authenticated:
        user_id = str(user.pk)
        own_read = request is not None and user_id in FRESH_BADGE.names(request)
        exact = current or own_read
        try:
            count = _badge(user_id) if not exact and settings.SHARED_READ_SECONDS > 0 else None
            if count is None:
                count = unread_count(user_id=user_id, consistent=exact)
        except Exception:  # the page must render without its badge; the script fills it in later
            logger.warning("unread badge unavailable", exc_info=True)
    return {"unread_count": count, "current": current}


def _badge(user_id: str) -> int:
    """Another page's badge: the one this process read for the person lately if nothing about it
    changed since (social/live.py `page_badge_kept`), else read eventually consistently and
    kept for their next page."""
    now = clock.now_ms()
    kept = page_badge_kept(user_id, now_ms=now)
    if kept is not None:
        return kept
    count = unread_count(user_id=user_id, consistent=False)
    shared_badges.put({user_id: count}, read_ms=now, strong=())
    return count


@register.simple_tag(takes_context=True)
def live_cursor(context) -> str:
    """The page's cursor for `/api/live/` (`data-live-cursor` on `<body>`, social/live.py
    `page_cursor`): its first poll is a 304 when nothing it shows changed since it was read."""
    user = context.get("user")
    return page_cursor(user_id=str(user.pk) if user is not None and user.is_authenticated else None)
