import pytest

from project.clock import ManualClock, clock_override


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def limits(settings):
    """Small log-in limits, reached in a few attempts."""
    settings.LOGIN_FAILURE_LIMIT = 3
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 8
    settings.LOGIN_UNTRUSTED_FAILURES = 6
    settings.LOGIN_DEVICE_FAILURE_LIMIT = 4
    settings.LOGIN_NOTICE_FAILURES = 3
    return settings


@pytest.fixture
def manual_clock():
    """Time moves only when a test moves it: no window ends mid-test."""
    with clock_override(ManualClock(1_800_000_000.0)) as moved:
        yield moved
