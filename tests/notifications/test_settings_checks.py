"""Settings are validated by Django's system checks, at startup, not when a feed is written."""

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import override_settings


def test_a_sane_feed_size_passes_the_checks():
    call_command("check")


@pytest.mark.parametrize("value", [0, 10**6, "50"])
def test_a_feed_size_beyond_the_item_budget_stops_manage_py(value):
    with override_settings(FEED_MAX_ENTRIES=value), pytest.raises(SystemCheckError, match="FEED_MAX_ENTRIES"):
        call_command("check")
