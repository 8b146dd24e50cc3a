"""Test settings: the production settings (DEBUG=False) with a test key and plain HTTP."""

import os

os.environ.setdefault("SECRET_KEY", "tests-only-secret-key-not-for-production-0123456789")
os.environ.setdefault("SECURE_SSL_REDIRECT", "False")
# Write limits and API throttles lifted: tests that are about them turn them on (settings fixture).
os.environ.setdefault("RATE_LIMITS_ENABLED", "False")

from project.settings import *  # noqa: F403
