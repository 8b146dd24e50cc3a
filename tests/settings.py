"""Test settings: the production settings (DEBUG=False) with a test key and plain HTTP, on PostgreSQL."""

import atexit
import os
import shutil
import sys
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
# Holding comments for review off too (a fresh test account posting a link would wait for staff):
# the spam defence's tests turn it on.
os.environ.setdefault("HOLD_FOR_REVIEW_ENABLED", "False")

from config.settings import *  # noqa: F403

# Django's test client names itself `testserver`: the processes a test starts with these
# settings (outside pytest-django, which adds it itself) use it too.
ALLOWED_HOSTS = [*ALLOWED_HOSTS, "testserver"]  # noqa: F405

# Every read fresh: a test sees what another test user just did on list pages too; the
# shared reads' own tests turn them on (tests/project/test_shared_reads.py).
SHARED_READ_SECONDS = 0.0

# The suite's relational store is PostgreSQL, as in production: TEST_DATABASE_URL's server, or a
# throwaway one started here (project/testing/postgres.py) and stopped when pytest exits;
# pytest-django creates its test database there. Here because pytest-django imports these
# settings before it sets Django up and before any conftest.py is loaded, so no connection can
# have been made to another database yet. Only under pytest: others import these settings too
# (mypy's Django plugin, which needs only their names; the processes a test starts with
# DJANGO_SETTINGS_MODULE=tests.settings, which name their own DATABASE_URL).
if "pytest" in sys.modules:
    from project.testing.postgres import suite_database_url

    DATABASES["default"] = {  # noqa: F405
        **env.db_url_config(suite_database_url()),  # noqa: F405
        "CONN_MAX_AGE": DATABASES["default"]["CONN_MAX_AGE"],  # noqa: F405
        "CONN_HEALTH_CHECKS": True,
    }

# Static files straight from the apps, never a copy an earlier `make run` collected.
STATIC_ROOT = BASE_DIR / "var" / "tests-no-collected-static"  # noqa: F405
WHITENOISE_USE_FINDERS = True
# One test process plays many clients at once (the concurrency tests): no per-process shedding
# (the shedding tests turn it on; a served gunicorn reads its own environment).
WEB_MAX_IN_FLIGHT = 0
# No usage flusher thread in the test process: a test writes the tallies with `usage_flush()`.
USAGE_FLUSH_SECONDS = 0.0
