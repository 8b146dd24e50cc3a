"""API tokens (DRF's authtoken model, one per account): issued at log-in, expiring after
API_TOKEN_MAX_AGE_DAYS, revoked by the client (DELETE /api/auth/token/) and by any new
password.

Sessions need nothing of their own here: Django keeps a hash of the password in each
session and logs out every session whose hash no longer matches, so a new password ends
the account's other sessions (`update_session_auth_hash` keeps the one that changed it).
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth import authenticate
from django.utils import timezone, translation
from django.utils.translation import gettext, gettext_lazy
from rest_framework import serializers
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.exceptions import AuthenticationFailed

from project.http.locales import language_of
from project.http.timezones import zone_from
from project.identity.compiled_get import CompiledGet

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser
    from django.contrib.auth.models import AnonymousUser

TOKEN_EXPIRED = gettext_lazy("This token has expired: log in again (POST /api/auth/token/) for a new one.")
OTP_MISSING = gettext_lazy(
    "This account logs in with a code too: send `otp`, the 6 digits its authenticator app shows "
    "(or one of its recovery codes)."
)


class TokenExpired(AuthenticationFailed):
    default_detail = TOKEN_EXPIRED
    default_code = "token_expired"


class TokenLogInSerializer(AuthTokenSerializer):
    """DRF's username and password, and `otp` for an account with two-factor log-in on."""

    otp = serializers.CharField(
        required=False,
        max_length=32,
        help_text="The code of the account's authenticator app (or a recovery code), when two-factor log-in is on.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        request = self.context.get("request")
        user = authenticate(
            request=request, username=attrs["username"], password=attrs["password"], otp=attrs.get("otp")
        )
        second_factor = getattr(request, "login_second_factor", None)  # project.identity.login.LimitedModelBackend
        if second_factor is not None:
            # Here, not at the top: project.errors' DRF handler loads this module's authentication.
            from project.errors import ApplicationError
            from project.identity.two_factor.services import CODE_JUST_USED, CODE_WRONG

            refusals = {"missing": str(OTP_MISSING), "just_used": str(CODE_JUST_USED)}
            raise ApplicationError(refusals.get(second_factor, str(CODE_WRONG)), field="otp")
        if user is None:
            raise serializers.ValidationError(
                gettext("Unable to log in with provided credentials."), code="authorization"
            )
        attrs["user"] = user
        return attrs


def api_token_expired(token: Token) -> bool:
    """Older than API_TOKEN_MAX_AGE_DAYS (0: tokens never expire)."""
    days: int = settings.API_TOKEN_MAX_AGE_DAYS
    return days > 0 and token.created <= timezone.now() - timedelta(days=days)


# The token and its user in one SELECT, as DRF's own check reads them.
_token_by_key = CompiledGet(Token, "key", placeholder="", related=("user",))


def api_token_find(*, key: str) -> Token | None:
    """The token `key` with its user, or None (read on every call: a revoked token is gone at once)."""
    return _token_by_key.get(key)


class ExpiringTokenAuthentication(TokenAuthentication):
    """DRF's token check, and a 401 `token_expired` for a token past API_TOKEN_MAX_AGE_DAYS."""

    def authenticate_credentials(self, key: str) -> tuple[AbstractBaseUser | AnonymousUser, Token]:
        token = api_token_find(key=key)
        # DRF's own answers (and translations) for a key that is not there and an inactive user.
        if token is None:
            raise AuthenticationFailed(gettext_lazy("Invalid token."))
        if not token.user.is_active:
            raise AuthenticationFailed(gettext_lazy("User inactive or deleted."))
        if api_token_expired(token):
            raise TokenExpired()
        person_settings_activate(token.user)
        return token.user, token


def person_settings_activate(user: AbstractBaseUser) -> None:
    """A token client's chosen language and time zone for the rest of the request, as
    project.http.locales and project.http.timezones do for a browser's session (which a
    token request has none of when the middleware runs)."""
    language = language_of(getattr(user, "locale", ""))
    if language:
        translation.activate(language)
    zone = zone_from(getattr(user, "time_zone", ""))
    if zone is not None:
        timezone.activate(zone)


def api_token_issue(*, user: AbstractBaseUser) -> Token:
    """The account's token for a log-in: its current one, or a new one when it has none or it expired.

    Twice: the same token. Concurrently: get_or_create's unique user makes one token and
    both log-ins get it (an expired one is deleted by either, idempotently, first).
    """
    current = Token.objects.filter(user_id=user.pk).first()
    if current is not None and api_token_expired(current):
        Token.objects.filter(key=current.key).delete()
    token, _ = Token.objects.get_or_create(user_id=user.pk)
    return token


def api_token_revoke(*, key: str) -> None:
    """Log one client out: its token stops working at once. Twice: nothing more happens."""
    Token.objects.filter(key=key).delete()


def api_tokens_revoke_all(*, user_id: Any) -> None:
    """Every token of the account stops working (a new password). Idempotent."""
    Token.objects.filter(user_id=user_id).delete()


def password_saved_revoke_tokens(sender: Any, instance: AbstractBaseUser, created: bool, **kwargs: Any) -> None:
    """post_save of the user model: a password set and saved revokes the account's tokens.

    Whatever set it (the change and reset pages, the admin, `changepassword`): Django marks a
    new password with `_password` until the save, the same mark its own
    `password_validation.password_changed` hook reads; the hash upgrade of a log-in clears it
    first, so logging in revokes nothing.
    """
    if not created and getattr(instance, "_password", None) is not None:
        api_tokens_revoke_all(user_id=instance.pk)
