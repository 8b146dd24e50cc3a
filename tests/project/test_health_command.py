"""`manage.py health`: the workers' heartbeats for an operator or a script, exit 1 when one is not up."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from project.clock import ManualClock, clock_override
from project.models import WorkerHeartbeat
from project.operations.backlog import Backlog
from project.operations.health_selectors import WORKERS
from project.operations.health_services import heartbeat_write
from project.testing.harness import dynamodb_wire

T0 = 1_900_000_000.0


def beat(worker: str, *, at: float, backlog: Backlog | None = None, instance: str = "web-1:10") -> None:
    heartbeat_write(
        worker=worker, instance=instance, started_at=at, now=at, cycle_at=at, cycle_seconds=0.25, backlog=backlog
    )


def all_up(at: float) -> None:
    for worker in WORKERS:
        beat(worker, at=at, backlog=Backlog(label="pending things", count=4, capped=worker == "fold_like_events"))


def test_all_workers_up_exits_0_and_prints_each(capsys):
    with clock_override(ManualClock(T0)):
        all_up(T0 - 2)
        call_command("health")
    out = capsys.readouterr().out
    for worker in WORKERS:
        assert worker in out
    assert "4+ pending things" in out and "2.0s ago" in out
    assert f"All {len(WORKERS)} worker process(es) are up." in out


def test_a_stale_or_missing_worker_exits_1_and_is_named(capsys, settings):
    settings.WORKER_STALE_SECONDS = 60
    with clock_override(ManualClock(T0)):
        all_up(T0 - 2)
        beat("rollup_activity", at=T0 - 61)  # its only process went quiet a minute ago
        WorkerHeartbeat("dispatch_deliveries", "web-1:10").delete()
        with pytest.raises(CommandError, match="dispatch_deliveries missing, rollup_activity stale") as failure:
            call_command("health")
    assert failure.value.returncode == 1
    out = capsys.readouterr().out
    assert "STALE" in out and "MISSING" in out and "never" in out


def test_json_for_scripts(capsys, settings):
    settings.WORKER_STALE_SECONDS = 60
    with clock_override(ManualClock(T0)):
        all_up(T0 - 2)
        beat(
            "fold_like_events", at=T0 - 90, instance="web-2:7", backlog=Backlog(label="x", count=1, oldest_at=T0 - 120)
        )
        with pytest.raises(CommandError):
            call_command("health", "--json")
    document = json.loads(capsys.readouterr().out)
    assert document["healthy"] is False and document["stale_seconds"] == 60
    fold = [row for row in document["workers"] if row["worker"] == "fold_like_events"]
    assert [(row["instance"], row["state"]) for row in fold] == [("web-1:10", "ok"), ("web-2:7", "stale")]
    assert fold[1]["lag_seconds"] == 30 and fold[1]["backlog"] == 1  # measured at its heartbeat


@pytest.fixture
def heartbeats_unreachable():
    """DynamoDB not answering the heartbeat Queries (a connection refused, injected where it would happen)."""
    from botocore.exceptions import EndpointConnectionError

    def refused(operation, body):
        if operation == "Query" and WorkerHeartbeat.Meta.table_name.encode() in body:
            raise EndpointConnectionError(endpoint_url="dynamodb")

    with dynamodb_wire(refused):
        yield


def test_unreadable_heartbeats_exit_2_with_the_reason(heartbeats_unreachable):
    with pytest.raises(CommandError, match="cannot read the heartbeats") as failure:
        call_command("health")
    assert failure.value.returncode == 2
