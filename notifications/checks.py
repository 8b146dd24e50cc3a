"""System checks of the notifications settings: a bad value stops `runserver`, `migrate`
and every management command at start-up, with the setting named, instead of failing the
first request that writes a feed."""

from urllib.parse import urlsplit

from django.conf import settings
from django.core.checks import Error, register

from notifications.feed.merge import feed_settings_errors
from project.limits.store import rules_parse


@register()
def feed_settings_check(app_configs, **kwargs):
    return [Error(message, id="notifications.E001") for message in feed_settings_errors()]


def mail_settings_errors() -> list[str]:
    """What is wrong with the notification e-mail settings (docs/how-to/set-up-email.md)."""
    errors = []
    site = urlsplit(settings.SITE_URL)
    if site.scheme not in ("http", "https") or not site.netloc or site.path not in ("", "/"):
        errors.append(
            f"SITE_URL must be the site's address, like https://social.example.com (got {settings.SITE_URL!r})."
        )
    for name in ("NOTIFY_EMAIL_DELAY", "MAIL_LEASE_SECONDS", "EMAIL_VERIFY_TIMEOUT"):
        if getattr(settings, name) < (0 if name == "NOTIFY_EMAIL_DELAY" else 1):
            errors.append(f"{name} must be {'0 or more' if name == 'NOTIFY_EMAIL_DELAY' else 'at least 1'} (seconds).")
    if not 0 <= settings.NOTIFY_DIGEST_HOUR <= 23:
        errors.append("NOTIFY_DIGEST_HOUR must be an hour of the day, 0 to 23 (UTC).")
    for name in ("MAIL_LIMIT_RECIPIENT", "MAIL_LIMIT_SITE"):
        try:
            rules_parse(getattr(settings, name))
        except ValueError as error:
            errors.append(f"{name}: {error}")
    return errors


@register()
def mail_settings_check(app_configs, **kwargs):
    return [Error(message, id="notifications.E002") for message in mail_settings_errors()]
