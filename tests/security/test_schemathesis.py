"""Schemathesis against the API, in process (WSGI), as anonymous, user and staff.

Bounded so it fits the suite: a fixed seed (derandomized), a few examples per
operation, no shrinking. Every answer must be no 5xx and conform to the schema
(status code, content type, body).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from actions.comments import comment_create

pytestmark = pytest.mark.django_db

EXAMPLES_PER_OPERATION = 6
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture
def wsgi_app():
    """The project's WSGI app, sharing the test's database connection (as Django's test client does)."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield get_wsgi_application()
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


def _headers(user) -> dict[str, str]:
    """The user's token, a new one after DELETE /api/auth/token/ logged the last one out."""
    if user is None:
        return {}
    token, _ = Token.objects.get_or_create(user=user)
    return {"Authorization": f"Token {token.key}"}


def _fuzz(operation, headers: Callable[[], dict[str, str]], failures: list[str], statuses: list[int]) -> None:
    @given(case=operation.as_strategy())
    @hypothesis_settings(
        max_examples=EXAMPLES_PER_OPERATION,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    def run(case):
        response = case.call(headers=headers())
        statuses.append(response.status_code)
        try:
            case.validate_response(response, checks=CHECKS)
        except Exception as error:  # collect every operation's failure, report them together
            failures.append(f"{operation.label}: {type(error).__name__}: {str(error)[:600]}")

    run()


@pytest.mark.parametrize("who", ["anonymous", "user", "staff"])
def test_no_server_error_and_answers_conform_to_the_schema(wsgi_app, make_user, who):
    user = {"anonymous": None, "user": make_user("member"), "staff": make_user("boss", is_staff=True)}[who]
    author = user or make_user("author")
    comment_create(author_id=str(author.pk), body="Something to find")
    headers = functools.partial(_headers, user)
    schema = schemathesis.openapi.from_wsgi("/api/schema/", wsgi_app)
    failures: list[str] = []
    statuses: list[int] = []

    for result in schema.get_all_operations():
        _fuzz(result.ok(), headers, failures, statuses)
    operations = len(list(schema.get_all_operations()))
    assert len(statuses) >= 2 * operations  # it did run (a few examples per operation)
    print(f"{who}: {len(statuses)} requests, statuses {sorted(set(statuses))}")
    assert failures == [], "\n\n".join(failures[:10])
