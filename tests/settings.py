"""Test settings: the production settings (DEBUG=False) with a test key and plain HTTP."""

import os

os.environ.setdefault("SECRET_KEY", "tests-only-secret-key-not-for-production-0123456789")
os.environ.setdefault("SECURE_SSL_REDIRECT", "False")

from project.settings import *  # noqa: F403

# Static files straight from the apps, never a copy an earlier `make run` collected.
STATIC_ROOT = BASE_DIR / "var" / "tests-no-collected-static"  # noqa: F405
WHITENOISE_USE_FINDERS = True
