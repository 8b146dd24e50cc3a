"""Device cookies (OWASP, "Slow Down Online Guessing Attacks with Device Cookies"): a browser
that logged in to an account holds a signed cookie saying so, and its log-ins to that
account are limited per cookie instead of by the account's untrusted budget
(project.identity.login_limits).

One cookie per account, so a browser shared by a family keeps each person's: its name is
`device_` and an HMAC of the account name (the name says nothing about the account to
anyone without SECRET_KEY); its value is a random nonce signed with SECRET_KEY and salted
with the account, so it is valid for that account only, and carries its time: it lasts
LOGIN_DEVICE_COOKIE_DAYS. It also carries the account's `device_version` (an HMAC of its id
and password hash): a new password, or an erasure, ends every cookie issued before.
HttpOnly, SameSite=Lax, Secure when the session cookie is.

Every successful log-in (the page and its code step, the admin, POST /api/auth/token/)
and every successful password reset issues a new one (a new nonce: a fresh per-device
count), set on the answer by `LoginDeviceMiddleware`.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core import signing
from django.utils.crypto import constant_time_compare, salted_hmac

from project.identity.login_limits import account_name

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from django.contrib.auth.base_user import AbstractBaseUser
    from django.http import HttpRequest, HttpResponse

COOKIE_PREFIX = "device_"


def _signer(account: str) -> signing.TimestampSigner:
    return signing.TimestampSigner(salt=f"project.identity.login_devices:{account}")


def device_cookie_name(username: str) -> str:
    digest = salted_hmac("project.identity.login_devices.name", account_name(username), algorithm="sha256").hexdigest()
    return COOKIE_PREFIX + digest[:20]


def device_version(user: AbstractBaseUser) -> str:
    """What a device cookie of `user` is bound to: the account's id and its password hash, so
    every cookie issued before stops counting when the password changes (the change and
    reset pages, the admin, `changepassword`) or the account is erased (its password made
    unusable, its name free for a newcomer with another id). A hash upgrade at a log-in
    changes it too: that browser gets a new cookie, the account's other browsers lose theirs."""
    material = f"{user.pk}|{user.password}"
    return salted_hmac("project.identity.login_devices.version", material, algorithm="sha256").hexdigest()[:24]


def device_nonce(request: HttpRequest, user: AbstractBaseUser | None) -> str:
    """The nonce of the request's valid device cookie for the account `user`; "" when there is
    no account, or the cookie is missing, forged, another account's, issued before the
    account's last password change, or older than LOGIN_DEVICE_COOKIE_DAYS."""
    return device_nonce_in(request.COOKIES, user)


def device_nonce_in(cookies: Mapping[str, str], user: AbstractBaseUser | None) -> str:
    """device_nonce, from a request's cookies (kept for work done after the answer)."""
    if user is None:
        return ""
    username = user.get_username()
    value = cookies.get(device_cookie_name(username), "")
    if not value:
        return ""
    try:
        signed: str = _signer(account_name(username)).unsign(value, max_age=settings.LOGIN_DEVICE_COOKIE_DAYS * 86400)
    except signing.BadSignature:  # also SignatureExpired
        return ""
    nonce, _, version = signed.partition(":")
    return nonce if nonce and constant_time_compare(version, device_version(user)) else ""


def device_cookie_issue(request: HttpRequest, user: AbstractBaseUser) -> None:
    """Mark the answer to this request to carry a new device cookie for the account `user`
    (bound to its id and current password: device_version).

    Twice in one request: one cookie (the last). The cookie is set only on an answer that
    is not an error (LoginDeviceMiddleware).
    """
    target: Any = getattr(request, "_request", request)  # DRF's Request: the middleware sees Django's
    issued: dict[str, str] = getattr(target, "login_devices_issued", {})
    account = account_name(user.get_username())
    value = f"{secrets.token_urlsafe(16)}:{device_version(user)}"
    issued[device_cookie_name(account)] = _signer(account).sign(value)
    target.login_devices_issued = issued


class LoginDeviceMiddleware:
    """Sets the device cookies a successful log-in or password reset issued (device_cookie_issue)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        issued: dict[str, str] = getattr(request, "login_devices_issued", {})
        if response.status_code < 400:
            for name, value in issued.items():
                response.set_cookie(
                    name,
                    value,
                    max_age=settings.LOGIN_DEVICE_COOKIE_DAYS * 86400,
                    secure=settings.SESSION_COOKIE_SECURE,
                    httponly=True,
                    samesite="Lax",
                )
        return response
