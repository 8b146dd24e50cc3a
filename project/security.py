"""Production safety: the client's address and the Content-Security-Policy header."""

from __future__ import annotations

from axes.backends import AxesStandaloneBackend
from django.conf import settings


def client_ip(request) -> str:
    """The client's address: REMOTE_ADDR, unless NUM_PROXIES proxies are trusted.

    With NUM_PROXIES=n, the n-th address from the right of X-Forwarded-For (the one
    the outermost trusted proxy saw), as Django REST framework's throttles count it.
    With 0 (the default), a client-sent X-Forwarded-For is ignored.
    """
    remote = request.META.get("REMOTE_ADDR", "") or ""
    proxies = settings.NUM_PROXIES
    if proxies > 0:
        forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        forwarded = [part for part in forwarded if part]
        if forwarded:
            return forwarded[-min(proxies, len(forwarded))]
    return remote


def login_username(request, credentials=None) -> str | None:
    """The name a log-in attempt is counted under: lower case, as names are matched in any case."""
    source = credentials or getattr(request, "data", request.POST)
    username = source.get("username")
    return username.lower() if isinstance(username, str) else username


class ContentSecurityPolicyMiddleware:
    """Adds CONTENT_SECURITY_POLICY to every answer that has none (empty setting: off)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        policy = settings.CONTENT_SECURITY_POLICY
        if policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy
        return response


class LoginLimitBackend(AxesStandaloneBackend):
    """django-axes' check, skipped for the in-process calls that have no request.

    Every log-in that comes over HTTP (the log-in page, the admin, the token API)
    passes its request; `authenticate()` without one (Django's test client `login()`,
    a shell) has no address to limit, and axes would refuse it outright.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)
