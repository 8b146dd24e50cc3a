"""Test settings: the production settings (DEBUG=False) with a test key and plain HTTP."""

import os
import tempfile

os.environ.setdefault("SECRET_KEY", "tests-only-secret-key-not-for-production-0123456789")
os.environ.setdefault("SECURE_SSL_REDIRECT", "False")
# Metrics on, as in production, each test run counting into its own folder.
os.environ.setdefault("METRICS_TOKEN", "tests-metrics-token")
os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="metrics-"))

from project.settings import *  # noqa: F403
