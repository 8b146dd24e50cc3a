"""Context every page's header needs."""

from django.conf import settings


def header(request):
    return {"signup_open": settings.SIGNUP_OPEN}
