"""The person's own language on every page: their setting when logged in, else what
Django's LocaleMiddleware chose (the language cookie the switcher sets, then the browser's
Accept-Language, then LANGUAGE_CODE). Catalogues are compiled .mo files Django loads once
per process; activating one is a dictionary lookup."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.utils import translation

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.http import HttpRequest, HttpResponse


def language_of(locale: str | None) -> str:
    """A stored locale if the site speaks it, else "" (no preference)."""
    codes = {code for code, _name in settings.LANGUAGES}
    return locale if locale in codes else ""


class PersonLanguageMiddleware:
    """After AuthenticationMiddleware: a logged-in person's chosen language wins."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        chosen = language_of(getattr(user, "locale", "")) if user is not None and user.is_authenticated else ""
        if chosen:
            translation.activate(chosen)
            request.LANGUAGE_CODE = chosen
        return self.get_response(request)
