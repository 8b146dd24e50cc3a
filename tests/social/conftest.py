"""Fixtures the social tests share: two people (a module may define its own variant)."""

import pytest


@pytest.fixture
def alice(make_user):
    return make_user("alice", display_name="Alice")


@pytest.fixture
def bob(make_user):
    return make_user("bob", display_name="Bob")
