"""Test settings: the production settings (DEBUG=False) with a test key and plain HTTP."""

import atexit
import os
import shutil
import tempfile

os.environ.setdefault("SECRET_KEY", "tests-only-secret-key-not-for-production-0123456789")
os.environ.setdefault("SECURE_SSL_REDIRECT", "False")
# Metrics on, as in production, each test run counting into its own folder.
os.environ.setdefault("METRICS_TOKEN", "tests-metrics-token")
if "PROMETHEUS_MULTIPROC_DIR" not in os.environ:
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="metrics-")
    atexit.register(shutil.rmtree, os.environ["PROMETHEUS_MULTIPROC_DIR"], ignore_errors=True)
# Write limits and API throttles lifted: tests that are about them turn them on (settings fixture).
os.environ.setdefault("RATE_LIMITS_ENABLED", "False")

from project.settings import *  # noqa: F403

# Static files straight from the apps, never a copy an earlier `make run` collected.
STATIC_ROOT = BASE_DIR / "var" / "tests-no-collected-static"  # noqa: F405
WHITENOISE_USE_FINDERS = True
# One test process plays many clients at once (the concurrency tests): no per-process shedding
# (the shedding tests turn it on; a served gunicorn reads its own environment).
WEB_MAX_IN_FLIGHT = 0
