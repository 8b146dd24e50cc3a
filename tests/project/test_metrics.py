"""/metrics: Prometheus text for requests by route, DynamoDB calls per table, and the workers."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from prometheus_client import CollectorRegistry, multiprocess
from prometheus_client.parser import text_string_to_metric_families
from pynamodb.exceptions import GetError, TransactWriteError

from actions.comments import comment_create
from project.clock import clock
from project.dynamo.clients import connection
from project.dynamo.transactions import LabelledTransactWrite
from project.operations import metrics
from project.operations.backlog import Backlog
from project.operations.health_services import heartbeat_write
from project.testing.harness import dynamodb_error, dynamodb_wire
from social.models import Comment
from tests.project.test_serving import settings_in_subprocess

pytestmark = pytest.mark.django_db
TOKEN = {"HTTP_AUTHORIZATION": "Bearer tests-metrics-token"}


def sample(name: str, **labels) -> float:
    """The sum over every process's files, as /metrics reports it."""
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    return registry.get_sample_value(name, labels) or 0.0


def scrape(client) -> dict[tuple, float]:
    answer = client.get("/metrics", **TOKEN)
    assert answer.status_code == 200 and answer["Content-Type"].startswith("text/plain")
    return {
        (found.name, tuple(sorted(found.labels.items()))): found.value
        for family in text_string_to_metric_families(answer.content.decode())
        for found in family.samples
    }


def test_off_unless_a_token_or_an_address_is_set(client, settings):
    settings.METRICS_TOKEN = ""
    settings.METRICS_ALLOWED_IPS = []
    assert client.get("/metrics", **TOKEN).status_code == 404


def test_a_token_or_an_allowed_address_is_needed(client, settings):
    assert client.get("/metrics").status_code == 403
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 403
    assert client.get("/metrics", **TOKEN).status_code == 200
    settings.METRICS_TOKEN = ""
    settings.METRICS_ALLOWED_IPS = ["10.1.0.0/16", "192.0.2.7"]
    assert client.get("/metrics", REMOTE_ADDR="10.1.200.3").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="192.0.2.7").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="10.2.0.1").status_code == 403


def test_a_scraper_on_plain_http_is_not_redirected_when_the_site_redirects_to_https(client, settings):
    production = settings_in_subprocess("print(s.SECURE_SSL_REDIRECT, s.SECURE_REDIRECT_EXEMPT)", SECRET_KEY="k" * 50)
    assert production.stdout.strip() == "True ['^metrics$']", production.stderr
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_REDIRECT_EXEMPT = ["^metrics$"]
    assert client.get("/metrics", **TOKEN).status_code == 200
    assert client.get("/popular/").status_code == 301


def test_requests_are_counted_and_timed_by_route_name_never_by_path(client):
    before = sample("http_requests_total", route="api-comment", method="GET", status="404")
    timed = sample("http_request_duration_seconds_count", route="api-comment", method="GET")
    for _ in range(2):
        assert client.get("/api/comments/no-such-comment-4711/").status_code == 404
    assert sample("http_requests_total", route="api-comment", method="GET", status="404") == before + 2
    assert sample("http_request_duration_seconds_count", route="api-comment", method="GET") == timed + 2
    text = client.get("/metrics", **TOKEN).content.decode()
    assert "no-such-comment-4711" not in text and 'route="api-comment"' in text


def test_dynamodb_requests_and_capacity_per_table():
    calls = sample("dynamodb_requests_total", table="comments", operation="GetItem", outcome="ok")
    capacity = sample("dynamodb_consumed_capacity_total", table="comments", operation="GetItem")
    comment = comment_create(author_id="1", body="counted")
    Comment.get(comment.comment_id)
    assert sample("dynamodb_requests_total", table="comments", operation="GetItem", outcome="ok") >= calls + 1
    assert sample("dynamodb_consumed_capacity_total", table="comments", operation="GetItem") > capacity


def test_a_cancelled_transaction_counts_its_reason_on_the_action_s_table():
    comment = comment_create(author_id="1", body="there")
    before = sample("dynamodb_transaction_cancellations_total", table="comments", reason="ConditionalCheckFailed")
    with pytest.raises(TransactWriteError):  # DynamoDB Local's own answer: the comment exists
        with LabelledTransactWrite(connection=connection()) as transaction:
            transaction.condition_check(Comment, comment.comment_id, condition=Comment.comment_id.does_not_exist())
    after = sample("dynamodb_transaction_cancellations_total", table="comments", reason="ConditionalCheckFailed")
    assert after == before + 1


def test_throttled_attempts_are_counted_per_table():
    """DynamoDB Local never throttles: its answer is injected at the HTTP layer, where AWS's would arrive."""
    comment = comment_create(author_id="1", body="busy")
    throttled = dynamodb_error("ProvisionedThroughputExceededException", "slow")

    before = sample("dynamodb_throttles_total", table="comments", operation="GetItem")
    with dynamodb_wire(lambda operation, body: throttled if operation == "GetItem" else None):
        with pytest.raises(GetError):
            Comment.get(comment.comment_id)
    attempts = 1 + Comment.Meta.max_retry_attempts + 1  # the fast path's, then botocore's with its retries
    assert sample("dynamodb_throttles_total", table="comments", operation="GetItem") == before + attempts
    outcome = "ProvisionedThroughputExceededException"
    assert sample("dynamodb_requests_total", table="comments", operation="GetItem", outcome=outcome) >= attempts


def test_calls_the_fast_path_hands_to_botocore_are_counted_by_reason():
    """A throttled GetItem is tried by the fast path and handed to botocore once (its own retries
    are botocore's); an ordinary call is not counted."""
    comment = comment_create(author_id="1", body="busy")
    throttled = dynamodb_error("ProvisionedThroughputExceededException", "slow")

    before = sample("dynamodb_fast_path_fallbacks_total", operation="GetItem", reason="error_code")
    Comment.get(comment.comment_id)
    assert sample("dynamodb_fast_path_fallbacks_total", operation="GetItem", reason="error_code") == before
    with dynamodb_wire(lambda operation, body: throttled if operation == "GetItem" else None):
        with pytest.raises(GetError):
            Comment.get(comment.comment_id)
    assert sample("dynamodb_fast_path_fallbacks_total", operation="GetItem", reason="error_code") == before + 1


def test_workers_backlog_lag_and_up_from_their_heartbeats(client):
    now = clock.now()
    heartbeat_write(
        worker="fold_like_events",
        instance="web-1:10",
        started_at=now,
        now=now,
        cycle_at=now,
        cycle_seconds=0.1,
        backlog=Backlog(label="pending like events", count=17, oldest_at=now - 12),
    )
    found = scrape(client)
    labels = (("instance", "web-1:10"), ("worker", "fold_like_events"))
    assert found[("worker_backlog", labels)] == 17
    assert found[("worker_lag_seconds", labels)] == pytest.approx(12)
    assert found[("worker_up", (("worker", "fold_like_events"),))] == 1
    assert found[("worker_up", (("worker", "rollup_activity"),))] == 0  # no heartbeat at all


def test_gunicorn_child_exit_hook_accepts_a_dead_worker():
    metrics.child_exit(server=None, worker=SimpleNamespace(pid=999_999))


def test_metrics_dir_prepare_drops_only_files_of_processes_no_longer_running(tmp_path, monkeypatch):
    import os

    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path / "prometheus"))
    (tmp_path / "prometheus").mkdir()
    mine = tmp_path / "prometheus" / f"counter_{os.getpid()}.db"
    gone = tmp_path / "prometheus" / "histogram_999999999.db"  # above any pid_max: no such process
    mine.write_bytes(b"")
    gone.write_bytes(b"")
    metrics.metrics_dir_prepare()
    assert mine.exists() and not gone.exists()


def test_a_scrape_still_answers_when_the_heartbeats_cannot_be_read(client):
    from botocore.exceptions import EndpointConnectionError

    def refused(operation, body):
        if operation == "Query":
            raise EndpointConnectionError(endpoint_url="dynamodb")

    with dynamodb_wire(refused):
        found = scrape(client)
    assert found[("worker_heartbeats_readable", ())] == 0
    assert not any(name == "worker_up" for name, _ in found)


FIRST_USE_RACE = """
import threading
from project.operations import metrics
barrier = threading.Barrier(16)
made, failures = [], []
def first_request():
    barrier.wait()
    try:
        made.append(metrics._metrics())
    except Exception as error:
        failures.append(repr(error))
threads = [threading.Thread(target=first_request) for _ in range(16)]
for thread in threads: thread.start()
for thread in threads: thread.join()
print(len({id(m) for m in made}), len(failures), failures[:1])
"""


def test_a_process_s_first_requests_on_many_threads_at_once_share_one_set_of_metrics(tmp_path):
    shown = settings_in_subprocess(
        f"exec({FIRST_USE_RACE!r})",
        SECRET_KEY="k" * 50,
        METRICS_TOKEN="t",
        PROMETHEUS_MULTIPROC_DIR=str(tmp_path),
    )
    assert shown.stdout.split(maxsplit=2)[:2] == ["1", "0"], shown.stdout + shown.stderr
