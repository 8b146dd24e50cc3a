"""The notification e-mail settings are checked at start-up (a system check names the setting)."""

from __future__ import annotations

import pytest

from notifications.checks import mail_settings_errors


def test_the_defaults_pass():
    assert mail_settings_errors() == []


@pytest.mark.parametrize(
    ("name", "value", "named"),
    [
        ("SITE_URL", "social.example.com", "SITE_URL"),
        ("SITE_URL", "https://social.example.com/app", "SITE_URL"),
        ("NOTIFY_EMAIL_DELAY", -1, "NOTIFY_EMAIL_DELAY"),
        ("MAIL_LEASE_SECONDS", 0, "MAIL_LEASE_SECONDS"),
        ("NOTIFY_DIGEST_HOUR", 24, "NOTIFY_DIGEST_HOUR"),
        ("MAIL_LIMIT_SITE", "lots", "MAIL_LIMIT_SITE"),
        ("MAIL_LIMIT_RECIPIENT", "0/hour", "MAIL_LIMIT_RECIPIENT"),
    ],
)
def test_a_bad_value_is_named(settings, name, value, named):
    setattr(settings, name, value)
    (error,) = mail_settings_errors()
    assert error.startswith(named)
