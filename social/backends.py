"""Log-in by username in any case: sign-up keeps names unique regardless of case."""

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend


class CaseInsensitiveModelBackend(ModelBackend):
    """Django's password check, for the account whose name matches in any case ("Alice" logs
    in as "alice"); the database's case-insensitive unique name makes the match one account."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is not None:
            stored = (
                get_user_model()
                ._default_manager.filter(username__iexact=username)
                .values_list("username", flat=True)
                .first()
            )
            username = stored or username
        return super().authenticate(request, username=username, password=password, **kwargs)
