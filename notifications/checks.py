"""System checks of the notifications' settings: a bad value stops `manage.py` at startup."""

from django.conf import settings
from django.core.checks import Error, register

# The feed budgets FEED_ENTRY_MAX_BYTES per entry and FEED_ITEM_BUDGET_BYTES per item,
# far below DynamoDB's 400 KB item limit.


@register()
def feed_max_entries_check(app_configs, **kwargs):
    from notifications.feed import FEED_ENTRY_MAX_BYTES, FEED_ITEM_BUDGET_BYTES

    limit = settings.FEED_MAX_ENTRIES
    most = FEED_ITEM_BUDGET_BYTES // FEED_ENTRY_MAX_BYTES
    if not isinstance(limit, int) or not 1 <= limit <= most:
        return [
            Error(
                f"FEED_MAX_ENTRIES={limit!r} must be an integer between 1 and {most}, so that a full feed "
                "stays far below DynamoDB's 400 KB item limit.",
                id="notifications.E001",
            )
        ]
    return []
