"""Context every page's header needs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.conf import settings

if TYPE_CHECKING:
    from django.http import HttpRequest


def header(request: HttpRequest) -> dict[str, Any]:
    return {"signup_open": settings.SIGNUP_OPEN}
