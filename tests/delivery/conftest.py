import pytest


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    """Many users per test: hashing their passwords with PBKDF2 would dominate the run time."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
