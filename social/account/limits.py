"""Write limits of an account: its own budget per named limit (settings.RATE_LIMITS), the
stricter `_NEW` rules while it is at the lowest trust level (social.spam.levels: new accounts
until they earn more by their conduct, whatever their age, and demoted ones).

Counted in the shared limit store (project/limits/store.py), so the budget holds across every
process and machine.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from django.conf import settings

from project.limits.store import limit_enforce, limit_rules

if TYPE_CHECKING:
    from collections.abc import Callable


def account_limit_enforce(*, name: str, user_id: str) -> None:
    """The write limit `name` for an account: its `_NEW` rules while at the lowest trust level."""
    count = account_limit_prepare(name=name, user_id=user_id)
    if count is not None:
        count()


def account_limit_prepare(*, name: str, user_id: str) -> Callable[[], None] | None:
    """`account_limit_enforce` in two halves: the account's rules are chosen here (its
    trust level, database reads in this thread), and the count itself (one conditional DynamoDB write,
    RateLimited when over) is returned to run where the caller likes, such as beside its own
    read. None when limits are off."""
    if not settings.RATE_LIMITS_ENABLED:
        return None
    return partial(
        limit_enforce, name=name, subject=user_id, rules=limit_rules(name, new_account=account_is_new(user_id=user_id))
    )


def account_is_new(*, user_id: str) -> bool:
    """Whether the account is at the lowest trust level (social.spam.levels), whose allowances are
    the `_NEW` write limits; an unknown account counts as new."""
    from social.spam.levels import NEW, trust_level

    return trust_level(user_id=user_id) == NEW
