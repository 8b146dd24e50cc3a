"""/healthz and /readyz: what a load balancer and an orchestrator probe."""

import contextlib
import io

import pytest
from django.core.management import CommandError, call_command
from django.test import RequestFactory

from project.dynamo import clients as dynamo
from project.dynamo.local import free_port
from project.dynamo.schema import drift
from project.operations import health
from project.testing.harness import in_threads

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_checks(settings):
    settings.READYZ_MIN_INTERVAL = 0  # every request computes readiness, unless a test says otherwise
    health.remembered.forget()
    health.latest.forget()
    yield
    health.remembered.forget()
    health.latest.forget()


@contextlib.contextmanager
def pointed_at(host, prefix=None):
    before = dynamo.endpoint()
    dynamo.point_models_at(host, prefix=prefix)
    try:
        yield
    finally:
        dynamo.point_models_at(before.host, prefix=before.prefix)


def test_healthz_answers_for_any_host_without_touching_dynamodb(client):
    with pointed_at(f"http://127.0.0.1:{free_port()}"):
        answer = client.get("/healthz", HTTP_HOST="10.1.2.3")
    assert answer.status_code == 200
    assert answer.json() == {"status": "ok"}
    assert answer["Cache-Control"] == "no-store"


def test_readyz_is_ready_when_every_table_index_and_migration_is_there(client):
    answer = client.get("/readyz", HTTP_HOST="10.1.2.3")
    assert answer.status_code == 200, answer.content
    assert answer.json() == {"status": "ready"}
    assert health.readiness_check().checks == {"dynamodb": "ok", "tables": "ok", "migrations": "ok"}


OPERATOR = {"HTTP_AUTHORIZATION": "Bearer operator-token"}


@pytest.fixture
def operator(settings):
    """Requests with OPERATOR's headers are an operator's (the /metrics rule)."""
    settings.METRICS_TOKEN = "operator-token"
    settings.METRICS_ALLOWED_IPS = []


def test_readyz_tells_strangers_only_that_the_process_is_unavailable(client, operator):
    """What fails, and how (a host, a table), is the operator's: a stranger gets the bare status,
    whether from another address or with a wrong token."""
    port = free_port()
    with pointed_at(f"http://127.0.0.1:{port}"):
        strangers = [
            client.get("/readyz"),
            client.get("/readyz", HTTP_AUTHORIZATION="Bearer guess"),
            client.get("/readyz", REMOTE_ADDR="203.0.113.9"),
        ]
        answer = client.get("/readyz", **OPERATOR)
    assert [stranger.status_code for stranger in strangers] == [503, 503, 503]
    assert all(stranger.json() == {"status": "unavailable"} for stranger in strangers)
    assert all(stranger["Retry-After"] for stranger in strangers)
    assert answer.status_code == 503
    assert answer.json()["failing"] == ["dynamodb", "tables"]
    assert answer.json()["checks"]["dynamodb"].startswith(f"no answer from http://127.0.0.1:{port}")


def test_readyz_tells_an_operator_allowed_by_address_what_fails(client, settings):
    settings.METRICS_ALLOWED_IPS = ["198.51.100.0/24"]
    with pointed_at(dynamo.endpoint().host, prefix="absent_"):
        stranger = client.get("/readyz", REMOTE_ADDR="203.0.113.9")
        answer = client.get("/readyz", REMOTE_ADDR="198.51.100.20")
    assert stranger.json() == {"status": "unavailable"}
    assert answer.json()["failing"] == ["tables"] and "absent_likes missing" in answer.json()["checks"]["tables"]


def test_readyz_names_dynamodb_when_it_does_not_answer(client, operator):
    with pointed_at(f"http://127.0.0.1:{free_port()}"):
        answer = client.get("/readyz", **OPERATOR)
    assert answer.status_code == 503
    assert answer["Retry-After"]
    assert answer.json()["failing"] == ["dynamodb", "tables"]
    with pointed_at(f"http://127.0.0.1:{free_port()}"):
        checks = health.readiness_check().checks
    assert checks["dynamodb"].startswith("no answer from http://127.0.0.1:")
    assert checks["migrations"] == "ok"


def test_readyz_names_the_missing_tables(client, operator):
    with pointed_at(dynamo.endpoint().host, prefix="absent_"):
        answer = client.get("/readyz", **OPERATOR)
    assert answer.status_code == 503
    assert answer.json()["status"] == "unavailable" and answer.json()["failing"] == ["tables"]
    with pointed_at(dynamo.endpoint().host, prefix="absent_"):
        checks = health.readiness_check().checks
    assert "absent_likes missing" in checks["tables"]
    assert checks["tables"].endswith("(run create_tables)")


def test_readyz_names_a_missing_index(client, monkeypatch, operator):
    declared = drift.declared_indexes

    def with_an_extra_index(model):
        indexes = declared(model)
        if model.Meta.logical_name == "comments":
            indexes["by_mood"] = {"kind": "GSI", "keys": [], "projection": "ALL"}
        return indexes

    monkeypatch.setattr(drift, "declared_indexes", with_an_extra_index)
    assert client.get("/readyz", **OPERATOR).json()["failing"] == ["tables"]
    assert "comments index by_mood missing" in health.readiness_check().checks["tables"]


def test_readyz_names_unapplied_migrations(client, monkeypatch, operator):
    monkeypatch.setattr(health.MigrationExecutor, "migration_plan", lambda self, targets: [("social", "0099_x")])
    assert client.get("/readyz", **OPERATOR).json()["failing"] == ["migrations"]
    assert health.readiness_check().checks["migrations"] == "1 migration(s) not applied (run migrate)"


def test_a_passing_table_check_is_remembered_briefly_but_dynamodb_is_asked_every_time(client, monkeypatch):
    calls = {"describe": 0}
    real = health._tables_active

    def counted():
        calls["describe"] += 1
        return real()

    monkeypatch.setattr(health, "_tables_active", counted)
    assert client.get("/readyz").status_code == 200
    assert client.get("/readyz").status_code == 200
    assert calls["describe"] == 1
    with pointed_at(f"http://127.0.0.1:{free_port()}"):
        assert client.get("/readyz").status_code == 503  # the outage shows at once


def test_health_answers_even_when_the_process_is_saturated(client, settings):
    from project.serving.shedding import in_flight

    settings.WEB_MAX_IN_FLIGHT = 1
    settings.WEB_QUEUE_TIMEOUT = settings.WEB_QUEUE_TARGET = 0  # refused at once, no wait for the slot
    in_flight.count = 1  # one request already being worked on
    try:
        assert client.get("/healthz").status_code == 200
        assert client.get("/readyz").status_code == 200
        assert client.get("/api/comments/").status_code == 503
    finally:
        in_flight.count = 0


def test_a_flood_of_readyz_asks_dynamodb_at_most_once_per_interval(settings, monkeypatch):
    """Strangers polling /readyz cannot spend the account's control-plane calls (ListTables
    is limited per account on AWS) nor make the instance look unready by throttling it."""
    settings.READYZ_MIN_INTERVAL = 3600
    calls = []
    real = health._dynamodb_answers
    monkeypatch.setattr(health, "_dynamodb_answers", lambda: calls.append(1) or real())
    monkeypatch.setattr(health, "_migrations_applied", lambda: "ok")  # no database in the threads
    probe = health.HealthMiddleware(lambda request: None)
    answers = in_threads(lambda index: [probe(RequestFactory().get("/readyz")).status_code for _ in range(5)], 8)
    assert [status for statuses in answers for status in statuses] == [200] * 40
    assert len(calls) == 1


def test_check_ready_prints_what_is_wrong_for_the_operator():
    with pointed_at(dynamo.endpoint().host, prefix="absent_"), pytest.raises(CommandError, match="not ready: tables"):
        out = io.StringIO()
        try:
            call_command("check_ready", stdout=out)
        finally:
            assert "absent_likes missing" in out.getvalue() and "dynamodb: ok" in out.getvalue()
