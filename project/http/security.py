"""The client's address (behind NUM_PROXIES trusted proxies) and the Content-Security-Policy header."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.http import HttpRequest, HttpResponse


def client_ip(request: HttpRequest) -> str:
    """The client's address: REMOTE_ADDR, unless NUM_PROXIES proxies are trusted.

    With NUM_PROXIES=n, the n-th address from the right of X-Forwarded-For (the one
    the outermost trusted proxy saw), as Django REST framework's throttles count it.
    With 0 (the default), a client-sent X-Forwarded-For is ignored.
    """
    remote: str = request.META.get("REMOTE_ADDR", "") or ""
    proxies: int = settings.NUM_PROXIES
    if proxies > 0:
        forwarded: list[str] = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        forwarded = [part for part in forwarded if part]
        if forwarded:
            return forwarded[-min(proxies, len(forwarded))]
    return remote


class ContentSecurityPolicyMiddleware:
    """Adds CONTENT_SECURITY_POLICY to every answer that has none (empty setting: off)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        policy = settings.CONTENT_SECURITY_POLICY
        if policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy
        return response


def request_cross_site(request: HttpRequest) -> bool:
    """A browser says another site sent this request: its Origin is neither this site nor a
    CSRF_TRUSTED_ORIGINS one (`null` included), or its Sec-Fetch-Site is `cross-site`. A client
    sending neither header (curl, an app, a script) is not a browser on another site: False."""
    origin = request.META.get("HTTP_ORIGIN")
    if origin is not None and origin not in {
        f"{request.scheme}://{request.get_host()}",
        *settings.CSRF_TRUSTED_ORIGINS,
    }:
        return True
    return request.META.get("HTTP_SEC_FETCH_SITE") == "cross-site"
