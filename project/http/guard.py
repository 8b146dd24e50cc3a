"""The request guard: malformed or oversized requests become the documented error
answers ({detail, code}, 400/413/415 under /api/) before they reach a view.

Three pieces, one rule ("nothing a client sends is a 5xx"):
- `RequestGuardMiddleware`: refuses an /api/ body larger than DATA_UPLOAD_MAX_MEMORY_SIZE
  from its Content-Length before anything reads it, and maps what escapes a page view
  (DynamoDB refusing a client-made value, Django's upload limits) to 400/413/503 pages.
- `project.http.parsers.SafeJSONParser` (the API's JSON parser): depth limit, and no RecursionError.
- `project.errors.api_exception_handler` and the JSON 400/403/404/500 handlers of
  project.http.views map the same exceptions inside API views.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import HttpResponse
from django.views import defaults

from project.errors import error_response, exception_answer, retry_after_set

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.http import HttpRequest

logger = logging.getLogger(__name__)

API_PREFIX = "/api/"


def is_api(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


def _content_length(request: HttpRequest) -> int | None:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return None


class RequestGuardMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if is_api(request):
            length = _content_length(request)
            if length is None:
                return error_response("Invalid Content-Length header.", code="parse_error", status=400)
            limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            if limit is not None and length > limit:
                return too_large(request)
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        """Page views (API views answer through project.errors): client faults are 4xx pages."""
        if is_api(request):
            return None
        answer = exception_answer(exception)
        if answer is None:
            return None
        status, message, _code = answer
        if status == 400:
            return defaults.bad_request(request, SuspiciousOperation(message))
        response = HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")
        return retry_after_set(response, "1" if status in (429, 503) else None)


def too_large(request: HttpRequest) -> HttpResponse:
    """413 before the body is read: the answer Django's own RequestDataTooBig gets."""
    answer = exception_answer(RequestDataTooBig())
    assert answer is not None
    status, message, code = answer
    if is_api(request):
        return error_response(message, code=code, status=status)
    return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")
