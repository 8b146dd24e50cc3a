"""Fixtures for notification tests."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Users are made by the handful here; PBKDF2 would dominate the suite's time."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def people(make_user):
    """An author and four likers with display names the texts use."""
    return {
        "author": make_user("author", display_name="Author"),
        "alice": make_user("alice", display_name="Alice"),
        "bob": make_user("bob", display_name="Bob"),
        "carol": make_user("carol", display_name="Carol"),
        "dave": make_user("dave", display_name="Dave"),
    }


@pytest.fixture
def fold_by_the_worker(settings):
    """Likes reach notifications through the folder (helpers.fold), not the fold after the response, so a
    test drives the fold deterministically (the like-notification test modules use this)."""
    settings.LIKE_FOLD_AFTER_RESPONSE = False


@pytest.fixture
def push_service(settings):
    """A local push-service stand-in (tests/notifications/push_service.py) the site may send to:
    a VAPID key of the test's, plain HTTP to 127.0.0.1 allowed as `make run` allows it."""
    from notifications.push.keys import vapid_key_generate, vapid_public_key
    from tests.notifications.push_service import push_service_start

    settings.VAPID_PRIVATE_KEY = vapid_key_generate()
    settings.VAPID_SUBJECT = "mailto:staff@example.com"
    settings.LOCAL_PLAIN_HTTP = True
    settings.PUSH_SERVICE_HOSTS = ["127.0.0.1"]
    service, server = push_service_start(vapid_public_key=vapid_public_key())
    yield service
    server.shutdown()
    server.server_close()
