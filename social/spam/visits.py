"""Days visited, for trust levels (social.spam.levels): a day counts when the person is seen
logged in, on any page or API request answered without error, at a log-in and at a write.

`TrustVisitMiddleware` asks `trust_visit` after the view ran, so a person authenticated by an
API token (set by the API's own authentication, inside the view) counts too. Cheap by design:
each process remembers whom it counted today (its cache), so a person costs one UPDATE per
process a day, and the database row is written once a day. The count is a side matter: when
the database refuses it, the answer already made still goes out and the day is asked again at
the person's next request.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.db import DatabaseError

from social.spam.levels import trust_visit

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponse

logger = logging.getLogger(__name__)


class TrustVisitMiddleware:
    """Counts today as a day visited for the logged-in person a request answers (status below 400)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and response.status_code < 400:
            try:
                trust_visit(user_id=str(user.pk))
            except DatabaseError:
                logger.warning("day visited of user %s not counted: the database refused", user.pk, exc_info=True)
        return response


def trust_on_login(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    """`user_logged_in` receiver: a log-in counts today as a day visited."""
    trust_visit(user_id=str(user.pk))
