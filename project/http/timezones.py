"""Times on pages in the person's own time zone: the one they chose in their settings, else the
browser's (site.js keeps it in the `tz` cookie), else the site's TIME_ZONE. The cookie is only a
name looked up in the time zone database; anything else is ignored."""

from __future__ import annotations

import re
import zoneinfo
from typing import TYPE_CHECKING

from django.utils import timezone

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.http import HttpRequest, HttpResponse

COOKIE = "tz"
ZONE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+){0,2}$")


def zone_from(name: str) -> zoneinfo.ZoneInfo | None:
    if not name or len(name) > 64 or not ZONE_NAME.match(name):
        return None
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return None


class BrowserTimeZoneMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        chosen = getattr(user, "time_zone", "") if user is not None and user.is_authenticated else ""
        zone = zone_from(chosen or request.COOKIES.get(COOKIE, ""))
        if zone is None:
            try:
                return self.get_response(request)
            finally:  # a token client's zone (project.identity.api_tokens) ends with its request
                timezone.deactivate()
        with timezone.override(zone):
            return self.get_response(request)
