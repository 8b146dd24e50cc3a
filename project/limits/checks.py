"""System checks of the limit settings: a malformed LIMIT_* or API_THROTTLE_* stops start-up,
named, instead of answering 500 to the first request it limits; so does a negative
API_TOKEN_MAX_AGE_DAYS, instead of silently never expiring a token. A retired setting still in
the environment warns, naming what replaced it, instead of being silently ignored."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.checks import Error, Warning, register

from project.limits.store import rules_parse

if TYPE_CHECKING:
    from collections.abc import Sequence

    from django.apps import AppConfig
    from django.core.checks import CheckMessage


# Settings the site no longer reads, and what took their place (docs/reference/settings.md).
RETIRED_SETTINGS = {
    "LIMIT_NEW_ACCOUNT_DAYS": (
        "an account's age alone earns nothing now: the _NEW limits apply to trust level 0, which an "
        "account leaves by its conduct (TRUST_MEMBER_COMMENTS, TRUST_MEMBER_LIKES, TRUST_MEMBER_DAYS)"
    ),
}


def limit_settings_errors() -> list[str]:
    rates = settings.REST_FRAMEWORK.get("DEFAULT_THROTTLE_RATES", {})
    named = {f"API_THROTTLE_{scope.upper()}": rate for scope, rate in rates.items() if rate}
    for name, (rules, new_rules) in settings.RATE_LIMITS.items():
        named[f"LIMIT_{name.upper()}"] = rules
        if new_rules:
            named[f"LIMIT_{name.upper()}_NEW"] = new_rules
    # The spam check's budgets (social/spam/checks.py) are limits of the same store.
    named["SPAM_DUPLICATE_LIMIT"] = settings.SPAM_DUPLICATE_LIMIT
    named["SPAM_BURST_LIMIT"] = settings.SPAM_BURST_LIMIT
    errors = []
    for setting, rules in named.items():
        try:
            rules_parse(rules)
        except ValueError as error:
            errors.append(f"{setting}={rules!r}: {error}")
    if settings.LIMIT_LIVE_BLOCK < 1:
        errors.append(f"LIMIT_LIVE_BLOCK={settings.LIMIT_LIVE_BLOCK!r}: at least 1.")
    return errors


@register()
def limit_settings_check(app_configs: Sequence[AppConfig] | None, **kwargs: Any) -> list[CheckMessage]:
    return [Error(message, id="project.E001") for message in limit_settings_errors()]


@register()
def api_token_settings_check(app_configs: Sequence[AppConfig] | None, **kwargs: Any) -> list[CheckMessage]:
    days = settings.API_TOKEN_MAX_AGE_DAYS
    if isinstance(days, int) and days >= 0:
        return []
    return [Error(f"API_TOKEN_MAX_AGE_DAYS={days!r}: a whole number of days, 0 for never.", id="project.E002")]


@register()
def retired_settings_check(app_configs: Sequence[AppConfig] | None, **kwargs: Any) -> list[CheckMessage]:
    return [
        Warning(f"{name} is set but no longer read: {instead}.", id="project.W001")
        for name, instead in RETIRED_SETTINGS.items()
        if name in os.environ
    ]
