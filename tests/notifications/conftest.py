"""Fixtures for notification tests."""

from __future__ import annotations

import pytest

from tests.notifications.push_helpers import push_service  # noqa: F401  (a fixture)


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
