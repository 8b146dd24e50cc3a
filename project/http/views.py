"""Error pages: JSON under /api/ (the {detail, code} shape), HTML elsewhere; a refused form's 429."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.exceptions import RequestDataTooBig
from django.shortcuts import render
from django.views import defaults

from project.errors import (
    ApplicationError,
    PermissionDenied,
    RateLimited,
    error_response,
    exception_answer,
    retry_after_set,
)
from project.http.guard import is_api, too_large
from social import drafts

if TYPE_CHECKING:
    from django.forms import Form
    from django.http import HttpRequest, HttpResponse


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Django's 400 (SuspiciousOperation: upload limits, bad Host...): 413 for a body too large."""
    if isinstance(exception, RequestDataTooBig):
        return too_large(request)
    if is_api(request):
        answer = exception_answer(exception)
        status, message, code = answer if answer else (400, "Bad request.", "bad_request")
        return error_response(message, code=code, status=status)
    return defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api(request):
        return error_response("Permission denied.", code="permission_denied", status=403)
    return defaults.permission_denied(request, exception)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api(request):
        return error_response("Not found.", code="not_found", status=404)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    if is_api(request):
        return error_response("Server error.", code="server_error", status=500)
    return defaults.server_error(request)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A form sent with an out-of-date token (logged in or out in another tab, a page left
    open for long): nothing is done, but a post's or reply's text is kept in the session
    and is back in its box when the person opens that page again, logged in. A form from
    another site keeps nothing and leaves the browser's session as it was (drafts)."""
    kept = False
    if request.method == "POST" and "body" in request.POST and not request.path.startswith("/admin/"):
        kept = drafts.draft_keep_refused_form(request, path=request.path, body=request.POST.get("body", ""))
    back = request.path if request.user.is_authenticated else drafts.login_url(request.path)
    return render(request, "403_csrf.html", {"kept": kept, "back": back}, status=403)


def refused_page(response: HttpResponse, error: ApplicationError | None) -> HttpResponse:
    """A page re-rendered with the form a write limit refused: 429 and Retry-After, the text kept;
    a refusal of the person (a reply to someone who blocked them) 403, the text kept too."""
    if isinstance(error, RateLimited):
        response.status_code = 429
        retry_after_set(response, error.retry_after_header)
    elif isinstance(error, PermissionDenied):
        response.status_code = 403
    return response


def focus_first_error(form: Form) -> None:
    """A refused form opens with the keyboard focus on its first field in error (not on the
    field a form autofocuses when it is fresh, e.g. the username when the password was refused)."""
    if not form.errors:
        return
    first = next((name for name in form.fields if name in form.errors), None)
    for name, field in form.fields.items():
        field.widget.attrs.pop("autofocus", None)
        if name == first:
            field.widget.attrs["autofocus"] = True
