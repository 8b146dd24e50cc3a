"""The suite runs on PostgreSQL (never silently on SQLite), the migrations match the models,
and they build a fresh PostgreSQL database from nothing."""

import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.loader import MigrationLoader

from project.dynamo import clients as dynamo
from project.testing.harness import served_environment
from project.testing.postgres import postgres_database_drop, postgres_database_url

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_the_suite_runs_on_postgresql():
    assert connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        cursor.execute("SELECT version()")
        assert cursor.fetchone()[0].startswith("PostgreSQL ")


@pytest.mark.django_db
def test_the_migrations_match_the_models(capsys):
    try:
        call_command("makemigrations", "--check", "--dry-run", verbosity=1)
    except SystemExit:
        pytest.fail(f"models changed without a migration:\n{capsys.readouterr().out}")


def test_migrate_builds_a_fresh_database(dynamodb):
    url = postgres_database_url(f"fresh_{uuid.uuid4().hex[:12]}")
    try:
        env = served_environment(dynamodb_host=dynamodb, table_prefix=dynamo.endpoint().prefix, database_url=url)
        done = subprocess.run(
            [sys.executable, "manage.py", "migrate", "--no-input"], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        with psycopg.connect(url) as fresh:
            applied = set(fresh.execute("SELECT app, name FROM django_migrations").fetchall())
            [index] = fresh.execute(
                "SELECT indexdef FROM pg_indexes WHERE indexname = 'social_user_username_ci_unique'"
            ).fetchone()
        assert applied == set(MigrationLoader(None, ignore_no_migrations=True).disk_migrations)
        assert "UNIQUE" in index and "lower((username)::text)" in index
    finally:
        postgres_database_drop(url)
