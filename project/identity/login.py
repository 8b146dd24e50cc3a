"""Log-in with limits: Django's password check inside the log-in limits (login_limits.py), with
the device cookies (login_devices.py) and the second factor (two_factor/), and the middleware
that answers a refused log-in."""

from __future__ import annotations

import functools
import unicodedata
from typing import TYPE_CHECKING, Any

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import PermissionDenied
from django.shortcuts import render

from project.errors import error_response, retry_after_set
from project.http.security import client_ip
from project.identity.compiled_get import CompiledGet

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.contrib.auth.base_user import AbstractBaseUser
    from django.http import HttpRequest, HttpResponse


class LimitedModelBackend(ModelBackend):
    """Django's username/password check inside the log-in limits (project/identity/login_limits.py),
    with the device cookies (project/identity/login_devices.py) and the second factor
    (project/identity/two_factor/).

    Every log-in over HTTP passes its request (the log-in page, the admin, the token
    API). A refused attempt is never checked: the backend raises PermissionDenied (so
    `authenticate()` stops and answers None) and leaves the refusal on the request for
    `LoginRefusalMiddleware` (pages) or the token API to answer 429. A success issues a
    new device cookie for the account.

    An account with two-factor on is let in only with its code: `otp=` (the token API
    checks it in the same request; a wrong one is a failed log-in), or `otp_step=True`
    (the log-in pages: a right password answers the user with `request.login_pending`,
    the attempt still counted, and the page asks for the code before logging in). Without
    either it is refused, and `request.login_second_factor` says "missing", "wrong" or "just_used"
    (the code of the step last used: the person should wait for the next one).
    `authenticate()` without a request (the test client's `login()`, a shell) has no
    address and is checked as Django checks it.
    """

    # ModelBackend's own signature: mypy holds its named parameters against BaseBackend's **kwargs
    # (as it would django-stubs' ModelBackend), and its user type against AUTH_USER_MODEL's.
    def authenticate(  # type: ignore[override]
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        otp: str | None = None,
        otp_step: bool = False,
        **kwargs: Any,
    ) -> AbstractBaseUser | None:
        from project.errors import LockedOut
        from project.identity.login_devices import device_cookie_issue, device_nonce
        from project.identity.login_limits import login_attempt_begin, login_attempt_end
        from project.identity.two_factor.services import code_just_used, second_factor_enabled, second_factor_verify

        if username is None:
            username = kwargs.pop(self._username_field(), None)
        if username is None or password is None:
            return None
        # Names are unique in any case (sign-up's constraint), so "ALICE" logs in as alice; a name
        # typed with surrounding spaces or full-width letters is normalised as Django's log-in form
        # does (NFKC, stripped), so the token API, the page and the limits all see one account.
        username = unicodedata.normalize("NFKC", str(username)).strip()
        account = self._account(username)
        name = account.get_username() if account is not None else username
        if request is None:
            return super().authenticate(request, username=name, password=password, **kwargs)
        try:
            attempt = login_attempt_begin(
                username=str(username), address=client_ip(request), device=device_nonce(request, account)
            )
        except LockedOut as refusal:
            # For LoginRefusalMiddleware or the token API to answer (an attribute Django's request lacks).
            request.login_refused = refusal  # type: ignore[attr-defined]
            raise PermissionDenied(refusal.message) from None
        user = super().authenticate(request, username=name, password=password, **kwargs)
        user_id = str(account.pk) if account else None
        if user is not None and second_factor_enabled(user=user):
            if otp_step:
                request.login_pending = attempt  # type: ignore[attr-defined]
                return user
            if not otp:  # counted, and not given back: a right password alone is no log-in
                request.login_second_factor = "missing"  # type: ignore[attr-defined]
                return None
            device = second_factor_verify(user=user, code=otp)
            if device is None:
                answer = "just_used" if code_just_used(user=user, code=otp) else "wrong"
                request.login_second_factor = answer  # type: ignore[attr-defined]
                user = None
            else:
                user.otp_device = device  # type: ignore[attr-defined]  # django_otp keeps it in the session
        login_attempt_end(attempt, user_id=user_id, succeeded=user is not None)
        if user is not None:
            device_cookie_issue(request, user)
        return user

    def get_user(self, user_id: Any) -> AbstractBaseUser | None:  # type: ignore[override]  # as authenticate
        """ModelBackend's: the account of a session, if it may log in (read on every request)."""
        user = _user_by_pk().get(user_id)
        return user if user is not None and self.user_can_authenticate(user) else None

    @staticmethod
    def _username_field() -> str:
        from django.contrib.auth import get_user_model

        return get_user_model().USERNAME_FIELD

    @staticmethod
    def _account(username: str) -> AbstractBaseUser | None:
        """The account a log-in named (any case): to check its password, or tell its owner of a failure."""
        from django.contrib.auth import get_user_model

        model = get_user_model()
        return model._default_manager.filter(**{f"{model.USERNAME_FIELD}__iexact": username}).first()


@functools.cache
def _user_by_pk() -> CompiledGet[Any]:
    return CompiledGet(get_user_model(), "pk", placeholder=0)  # the account keys are integers (DEFAULT_AUTO_FIELD)


def password_check_limited(user: AbstractBaseUser, password: str, *, address: str) -> bool:
    """`user.check_password` inside the log-in limits, for a logged-in person retyping theirs.

    A wrong password counts as a failed log-in of the account from `address` (the
    address's and the pair's limits, the same owner's notice) and against a budget only the
    account's own sessions spend, never the untrusted one a botnet may have spent: the
    owner can change their password during an attack. A right one clears that address's
    failures as a log-in does. Once a budget is spent it raises LockedOut without
    checking, so a stolen session is no oracle for the password.
    """
    from project.identity.login_limits import login_attempt_begin, login_attempt_end

    attempt = login_attempt_begin(username=user.get_username(), address=address, signed_in=True)
    succeeded = user.check_password(password)
    login_attempt_end(attempt, user_id=str(user.pk), succeeded=succeeded)
    return succeeded


class LoginRefusalMiddleware:
    """A log-in the limits refused answers 429 with Retry-After (JSON under /api/, else a page)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        refusal = getattr(request, "login_refused", None)
        if refusal is None or response.status_code == 429:
            return response
        if request.path.startswith("/api/"):
            return error_response(
                refusal.message, code=refusal.code, status=429, retry_after=refusal.retry_after_header
            )
        page = render(request, "registration/locked_out.html", {"refusal": refusal}, status=429)
        return retry_after_set(page, refusal.retry_after_header)
