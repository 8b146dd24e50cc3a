"""Overload sheds instead of queueing: at most WEB_MAX_IN_FLIGHT requests per process.

A request arriving while this process already works on WEB_MAX_IN_FLIGHT others is
answered at once with 503 and `Retry-After` (JSON under /api/, a short page elsewhere),
so under a crowd the answers are fast refusals that clients retry later (the live
poll backs off on them) rather than ever longer waits. gunicorn runs more threads than
the limit (gunicorn.conf.py) so that the refusals never wait behind the work.

The count is this process's own load, not shared state: each process protects itself.
/healthz and /readyz are answered before this middleware (project.health).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from django.conf import settings
from django.http import HttpResponse, JsonResponse

from project.errors import error_answer
from project.guard import is_api

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.http import HttpRequest

RETRY_AFTER_SECONDS = 2


class InFlight:
    """A counter of the requests this process is working on."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count = 0

    def enter(self, limit: int) -> bool:
        with self._lock:
            if self.count >= limit:
                return False
            self.count += 1
            return True

    def leave(self) -> None:
        with self._lock:
            self.count -= 1


in_flight = InFlight()


def overloaded(request: HttpRequest) -> HttpResponse:
    response: HttpResponse
    if is_api(request):
        response = JsonResponse(error_answer("The server is busy, retry shortly.", code="overloaded"), status=503)
    else:
        response = HttpResponse(
            "The site is busy right now; please try again in a moment.",
            status=503,
            content_type="text/plain; charset=utf-8",
        )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


class LoadSheddingMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.WEB_MAX_IN_FLIGHT
        if limit <= 0:
            return self.get_response(request)
        if not in_flight.enter(limit):
            return overloaded(request)
        try:
            return self.get_response(request)
        finally:
            in_flight.leave()
