"""What a person sent but the site could not take yet, kept in their session until they
can: the text of a post or reply sent while logged out (or with a stale form), and a like
pressed after the session ended. Django's log-in keeps an anonymous session's data (it
only changes its key), so both survive the log-in round trip; a log-in as someone
else flushes them.

Kept in the database session (never in process memory); one of each per session, the
newest wins. For a person not logged in, each kept one may be a new session row: they
count per address against LIMIT_ANONYMOUS_KEEP, and past it nothing is kept (the page
says so).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.shortcuts import resolve_url
from django.utils.http import urlencode

from project.limits import address_subject, limit_hit, limit_rules
from project.security import client_ip

if TYPE_CHECKING:
    from django.http import HttpRequest

DRAFT_KEY = "kept_draft"
LIKE_KEY = "kept_like"
# More than a body may hold, so an over-long paste comes back whole (with the error).
DRAFT_MAX_CHARS = 20_000


def _anonymous_keep_allowed(request: HttpRequest) -> bool:
    """Logged in, or an address still under LIMIT_ANONYMOUS_KEEP (counted here)."""
    if request.user.is_authenticated or not settings.RATE_LIMITS_ENABLED:
        return True
    subject = address_subject(client_ip(request))
    return limit_hit(name="anonymous_keep", subject=subject, rules=limit_rules("anonymous_keep")).allowed


def draft_keep(request: HttpRequest, *, path: str, body: str) -> bool:
    """Keep the text posted to `path`; False (nothing kept) for empty text or past the limit."""
    body = (body or "")[:DRAFT_MAX_CHARS]
    if not body.strip() or not _anonymous_keep_allowed(request):
        return False
    request.session[DRAFT_KEY] = {"path": path, "body": body}
    return True


def draft_take(request: HttpRequest, *, path: str) -> str | None:
    """The text kept for `path`, removed from the session (it is shown once)."""
    kept = request.session.get(DRAFT_KEY)
    if not kept or kept.get("path") != path:
        return None
    del request.session[DRAFT_KEY]
    return kept.get("body") or None


def like_keep(request: HttpRequest, *, comment_id: str, action: str) -> bool:
    """Keep a like or unlike pressed while logged out; False (nothing kept) past the limit."""
    if not _anonymous_keep_allowed(request):
        return False
    request.session[LIKE_KEY] = {"comment_id": comment_id, "action": action}
    return True


def like_take(request: HttpRequest, *, comment_id: str) -> dict[str, str] | None:
    """The like or unlike kept for this comment (removed), or None."""
    kept: dict[str, str] | None = request.session.get(LIKE_KEY)
    if not kept or kept.get("comment_id") != comment_id:
        return None
    del request.session[LIKE_KEY]
    return kept


def login_url(next_path: str) -> str:
    return f"{resolve_url(settings.LOGIN_URL)}?{urlencode({'next': next_path})}"
