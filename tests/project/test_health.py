"""/healthz and /readyz: what a load balancer and an orchestrator probe."""

import contextlib

import pytest

from project import dynamo, health
from project.dynamo_local import free_port

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_checks():
    health.remembered.forget()
    yield
    health.remembered.forget()


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
    assert answer.json() == {"status": "ready", "checks": {"dynamodb": "ok", "tables": "ok", "migrations": "ok"}}


def test_readyz_names_dynamodb_when_it_does_not_answer(client):
    with pointed_at(f"http://127.0.0.1:{free_port()}"):
        answer = client.get("/readyz")
    assert answer.status_code == 503
    assert answer["Retry-After"]
    body = answer.json()
    assert body["failing"] == ["dynamodb", "tables"]
    assert body["checks"]["dynamodb"].startswith("no answer from http://127.0.0.1:")
    assert body["checks"]["migrations"] == "ok"


def test_readyz_names_the_missing_tables(client):
    with pointed_at(dynamo.endpoint().host, prefix="absent_"):
        answer = client.get("/readyz")
    assert answer.status_code == 503
    body = answer.json()
    assert body["failing"] == ["tables"]
    assert "absent_likes missing" in body["checks"]["tables"]
    assert body["checks"]["tables"].endswith("(run create_tables)")


def test_readyz_names_a_missing_index(client, monkeypatch):
    declared = dynamo._declared_indexes

    def with_an_extra_index(model):
        indexes = declared(model)
        if model.Meta.logical_name == "comments":
            indexes["by_mood"] = {"kind": "GSI", "keys": [], "projection": "ALL"}
        return indexes

    monkeypatch.setattr(dynamo, "_declared_indexes", with_an_extra_index)
    body = client.get("/readyz").json()
    assert body["failing"] == ["tables"]
    assert "comments index by_mood missing" in body["checks"]["tables"]


def test_readyz_names_unapplied_migrations(client, monkeypatch):
    monkeypatch.setattr(health.MigrationExecutor, "migration_plan", lambda self, targets: [("social", "0099_x")])
    body = client.get("/readyz").json()
    assert body["failing"] == ["migrations"]
    assert body["checks"]["migrations"] == "1 migration(s) not applied (run migrate)"


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
    from project.shedding import in_flight

    settings.WEB_MAX_IN_FLIGHT = 1
    in_flight.count = 1  # one request already being worked on
    try:
        assert client.get("/healthz").status_code == 200
        assert client.get("/readyz").status_code == 200
        assert client.get("/api/comments/").status_code == 503
    finally:
        in_flight.count = 0
