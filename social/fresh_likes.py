"""The comments a browser just liked or unliked: its next pages read their counts exactly.

List pages read like counts eventually consistently, half the read units
(`social.selectors.comment_views`). A person who likes or unlikes a comment and lands on
a page right after must see their own change in its count, so the like's answer (the
form's redirect or the API's answer) sets a short cookie naming the comment, and pages
read those counts strongly consistently for FRESH_SECONDS. A forged cookie only makes its
own pages read at most FRESH_MAX counts exactly.
"""

from __future__ import annotations

import uuid

COOKIE = "fresh_likes"
FRESH_SECONDS = 10
FRESH_MAX = 5


def _is_comment_id(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def fresh_likes(request) -> list[str]:
    """The comments this browser liked or unliked in the last FRESH_SECONDS (at most FRESH_MAX)."""
    return [value for value in request.COOKIES.get(COOKIE, "").split(".") if _is_comment_id(value)][:FRESH_MAX]


def fresh_likes_remember(request, response, *, comment_id: str) -> None:
    """Name `comment_id` in the answer's cookie, newest first (the others it named stay)."""
    ids = [comment_id, *(value for value in fresh_likes(request) if value != comment_id)][:FRESH_MAX]
    response.set_cookie(
        COOKIE, ".".join(ids), max_age=FRESH_SECONDS, httponly=True, samesite="Lax", secure=request.is_secure()
    )
