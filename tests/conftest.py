"""Test fixtures: one in-memory DynamoDB Local for the session, clean tables per test.

DynamoDB Local is started on a free port, so the suite also runs while `make run`
is serving on 8765. Each test starts with empty tables (items are deleted, the
tables stay: creating them per test would cost seconds).
"""

from __future__ import annotations

import os

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from project.dynamo import clients as dynamo
from project.dynamo.schema import registry
from project.dynamo.schema.create import scratch_tables


@pytest.fixture(scope="session", autouse=True)
def dynamodb(django_db_blocker):
    with scratch_tables(prefix="test_", external_host=os.environ.get("TEST_DYNAMODB_HOST")) as host:
        yield host


@pytest.fixture(scope="session")
def django_db_keepdb(request):
    """The test database outlives the run only on the throwaway PostgreSQL server, which
    goes with its folder at exit: dropping it first would wait on (and warn about) the
    connections of threads that tests started. On TEST_DATABASE_URL's server, as pytest-django does."""
    return request.config.getvalue("reuse_db") or not os.environ.get("TEST_DATABASE_URL")


def truncate_tables() -> None:
    client = dynamo.client()
    for model in registry.registered_models():
        keys = [
            attribute.attr_name
            for attribute in (model._hash_key_attribute(), model._range_key_attribute())
            if attribute
        ]
        paginator = client.get_paginator("scan")
        pages = paginator.paginate(
            TableName=model.Meta.table_name,
            ProjectionExpression=", ".join(f"#k{i}" for i in range(len(keys))),
            ExpressionAttributeNames={f"#k{i}": key for i, key in enumerate(keys)},
            ConsistentRead=True,
        )
        items = [item for page in pages for item in page["Items"]]
        for start in range(0, len(items), 25):
            batch = [{"DeleteRequest": {"Key": item}} for item in items[start : start + 25]]
            while batch:
                answer = client.batch_write_item(RequestItems={model.Meta.table_name: batch})
                batch = answer.get("UnprocessedItems", {}).get(model.Meta.table_name, [])


@pytest.fixture(autouse=True)
def clean_state(dynamodb):
    from project.limits.store import limits_forget_memory
    from social import services
    from social.live import live_log_forget

    truncate_tables()
    services._day_shards.clear()
    live_log_forget()
    limits_forget_memory()
    cache.clear()
    yield


@pytest.fixture
def worker_environment(dynamodb):
    """The environment of a worker a test runs as its own process (`manage.py <name> --loop`):
    this session's DynamoDB Local tables and the suite's database
    (project.testing.harness.worker_environment). Call it with the test's own settings."""
    from django.db import connection

    from project.testing.harness import worker_environment
    from project.testing.postgres import suite_database_url

    def environment(*, drop: tuple[str, ...] = (), **settings: str) -> dict[str, str]:
        return worker_environment(
            dynamodb_host=dynamodb,
            table_prefix=dynamo.endpoint().prefix,
            database_url=suite_database_url(connection.settings_dict["NAME"]),
            drop=drop,
            **settings,
        )

    return environment


@pytest.fixture
def make_user(django_user_model):
    counter = {"n": 0}

    def make(username: str | None = None, *, display_name: str = "", is_staff: bool = False, password="pw-Secret-123"):
        counter["n"] += 1
        username = username or f"user{counter['n']}"
        return django_user_model.objects.create_user(
            username=username,
            password=password,
            display_name=display_name or username.capitalize(),
            is_staff=is_staff,
        )

    return make


@pytest.fixture
def api():
    """An API client; `api.as_user(user)` authenticates it with a token."""
    client = APIClient()

    def as_user(user):
        from rest_framework.authtoken.models import Token

        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        return client

    client.as_user = as_user
    return client


@pytest.fixture
def fold_likes():
    """Run the like folder now, synchronously, until no like event is pending; returns how many it folded."""
    from notifications.like_fold import like_events_fold_until_idle

    return like_events_fold_until_idle


@pytest.fixture
def aws_conflicts():
    """AWS's transaction conflict rules on DynamoDB Local (project/testing/aws_conflicts.py); yields the counts."""
    from project.testing.aws_conflicts import aws_conflict_model

    with aws_conflict_model() as stats:
        yield stats


@pytest.fixture
def aws_read_lag():
    """AWS's read lag on DynamoDB Local (project/testing/aws_read_lag.py): GSI reads and eventually
    consistent reads trail each write by up to 2 s; yields the counts of what was served stale."""
    from project.testing.aws_read_lag import aws_read_lag_model

    with aws_read_lag_model() as stats:
        yield stats
