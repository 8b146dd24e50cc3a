"""Prometheus metrics: `/metrics` (docs/how-to/operate.md "Health, workers and metrics").

Off unless METRICS_TOKEN or METRICS_ALLOWED_IPS is set: then nothing is recorded (the
middleware removes itself, no botocore hook is added) and /metrics answers 404.

On, every process of the machine (gunicorn's workers and the polling workers) records
into its own files under PROMETHEUS_MULTIPROC_DIR (prometheus-client's multiprocess
mode), and /metrics on any web process sums them:

- `http_requests_total{route,method,status}` and `http_request_duration_seconds{route,method}`:
  `route` is the resolved URL name (`api-comment-like`, `admin:dynamo-system`), never the path;
  requests no URL pattern took (static files, 404s) are `(unmatched)`.
- `dynamodb_consumed_capacity_by_route_total{route,kind}` (`read`, `write`): the units AWS
  bills, charged to the route or `worker:<name>` that caused them (project.operations.usage, when
  USAGE_ENABLED is on too).
- `dynamodb_requests_total{table,operation,outcome}` (each HTTP attempt, retries included,
  once per table it touches; outcome `ok`, the error code, or `connection_error`), `dynamodb_consumed_capacity_total
  {table,operation}`, `dynamodb_throttles_total{table,operation}` and
  `dynamodb_transaction_cancellations_total{table,reason}`: from botocore event hooks on every
  DynamoDB client (project.dynamo.clients.client_hook_add). `table` is the logical table name.
- `dynamodb_fast_path_fallbacks_total{operation,reason}`: calls project.dynamo.wire tried and
  handed to botocore (`fallback_count`); a steady rate of `failed` means the fast path cannot
  reach the endpoint that botocore reaches, and every such call is paid twice.
- `worker_backlog`, `worker_lag_seconds`, `worker_heartbeat_age_seconds{worker,instance}` and
  `worker_up{worker}`: read from the heartbeats when scraped (one small Query per worker of
  project.operations.health_selectors.WORKERS a scrape);
  `worker_heartbeats_readable` is 0 when they could not be read (DynamoDB unreachable).

Per request the cost is two label lookups and three increments of a memory-mapped file.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import threading
import time
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from django.conf import settings
from django.core.exceptions import MiddlewareNotUsed
from django.http import Http404, HttpResponse

from project.dynamo.clients import endpoint

if TYPE_CHECKING:
    from collections.abc import Callable
    from ipaddress import IPv4Network, IPv6Network

    from django.http import HttpRequest
    from prometheus_client.core import Metric

logger = logging.getLogger(__name__)

THROTTLE_CODES = {
    "ThrottlingException",
    "ProvisionedThroughputExceededException",
    "RequestLimitExceeded",
    "ThrottlingError",  # a transaction's cancellation reason
    "ProvisionedThroughputExceeded",
}
METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
UNMATCHED = "(unmatched)"


def metrics_enabled() -> bool:
    return bool(settings.METRICS_TOKEN or settings.METRICS_ALLOWED_IPS)


_metrics_made: Any = None
_metrics_lock = threading.Lock()


def _metrics() -> Any:
    """The metric objects, made once, on first use (prometheus-client is imported only when on).

    Under a lock: a process's first requests may be served by several threads at once, and a
    second registration of the same name raises `DuplicateTimeseries` (an lru_cache would let
    every thread that missed it build its own)."""
    global _metrics_made
    if _metrics_made is None:
        with _metrics_lock:
            if _metrics_made is None:
                _metrics_made = _metrics_build()
    return _metrics_made


def _metrics_build() -> Any:
    from prometheus_client import Counter, Histogram

    class Metrics:
        requests = Counter("http_requests", "HTTP requests answered", ["route", "method", "status"])
        latency = Histogram(
            "http_request_duration_seconds",
            "Time to answer an HTTP request",
            ["route", "method"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
        )
        dynamodb_requests = Counter(
            "dynamodb_requests", "DynamoDB HTTP requests (retries included)", ["table", "operation", "outcome"]
        )
        capacity = Counter(
            "dynamodb_consumed_capacity", "Capacity units DynamoDB reported consumed", ["table", "operation"]
        )
        throttles = Counter("dynamodb_throttles", "DynamoDB requests refused for throughput", ["table", "operation"])
        cancellations = Counter(
            "dynamodb_transaction_cancellations", "Transaction actions cancelled, by reason", ["table", "reason"]
        )
        fallbacks = Counter(
            "dynamodb_fast_path_fallbacks",
            "DynamoDB calls the fast path tried and handed to botocore, by reason",
            ["operation", "reason"],
        )
        capacity_by_route = Counter(
            "dynamodb_consumed_capacity_by_route",
            "Capacity units billed, by the route (or worker:<name>) that caused them",
            ["route", "kind"],
        )

    return Metrics


def fallback_count(operation: str, reason: str) -> None:
    """A DynamoDB call project.dynamo.wire handed to botocore: `hooked` (a handler of botocore's
    request is registered), `failed` (no answer, or a garbled one), `error_code` (a 4xx botocore
    may retry, throttling), `server_error` (a 5xx). Free when metrics are off."""
    if metrics_enabled():
        try:
            _metrics().fallbacks.labels(operation, reason).inc()
        except Exception:  # a metric must never fail a DynamoDB call
            logger.exception("recording a DynamoDB fallback failed")


# --- requests ---------------------------------------------------------------------


class RequestMetricsMiddleware:
    """Counts and times every answer by route (the URL name), method and status."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        if not metrics_enabled():
            raise MiddlewareNotUsed
        self.get_response = get_response
        self.metrics = _metrics()

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        route = match.view_name if match is not None else UNMATCHED
        method = request.method if request.method in METHODS else "other"
        self.metrics.latency.labels(route, method).observe(time.perf_counter() - started)
        self.metrics.requests.labels(route, method, str(response.status_code)).inc()
        return response


# --- DynamoDB -----------------------------------------------------------------------


def _logical(table: str) -> str:
    return table.removeprefix(endpoint().prefix)


def _note_tables(
    params: dict[str, Any] | None = None, model: Any = None, context: dict[str, Any] | None = None, **_: Any
) -> None:
    """`before-parameter-build.dynamodb`: remember which tables a call touches (its answer may not say)."""
    if context is None or params is None:
        return
    context["metrics_operation"] = model.name if model is not None else "?"
    if "TableName" in params:
        context["metrics_tables"] = [_logical(params["TableName"])]
    elif "TransactItems" in params:  # in request order: the cancellation reasons follow it
        context["metrics_actions"] = [
            _logical(next(iter(action.values()))["TableName"]) for action in params["TransactItems"]
        ]
        context["metrics_tables"] = sorted(set(context["metrics_actions"]))
    elif "RequestItems" in params:
        context["metrics_tables"] = sorted(_logical(name) for name in params["RequestItems"])


def _count_response(
    parsed_response: dict[str, Any] | None = None,
    context: dict[str, Any] | None = None,
    exception: BaseException | None = None,
    **_: Any,
) -> None:
    """`response-received.dynamodb`: every attempt's outcome, capacity, throttles, cancellations."""
    if context is None or "metrics_operation" not in context:
        return
    try:
        metrics = _metrics()
        operation = context["metrics_operation"]
        tables = context.get("metrics_tables") or ["-"]
        code = "connection_error" if exception is not None else (parsed_response or {}).get("Error", {}).get("Code")
        for table in tables:
            metrics.dynamodb_requests.labels(table, operation, code or "ok").inc()
            if code in THROTTLE_CODES:
                metrics.throttles.labels(table, operation).inc()
        if not parsed_response:
            return
        consumed = parsed_response.get("ConsumedCapacity")
        for entry in [consumed] if isinstance(consumed, dict) else consumed or []:
            if "TableName" in entry and entry.get("CapacityUnits"):
                metrics.capacity.labels(_logical(entry["TableName"]), operation).inc(entry["CapacityUnits"])
        actions = context.get("metrics_actions") or []
        for number, reason in enumerate(parsed_response.get("CancellationReasons") or []):
            reason_code = reason.get("Code", "None")
            if reason_code == "None":
                continue
            table = actions[number] if number < len(actions) else "-"
            metrics.cancellations.labels(table, reason_code).inc()
            if reason_code in THROTTLE_CODES:
                metrics.throttles.labels(table, operation).inc()
    except Exception:  # a metric must never fail a DynamoDB call
        logger.exception("recording DynamoDB metrics failed")


_route_counters: dict[tuple[str, str], Any] = {}


def route_capacity_count(route: str, read: float, write: float) -> None:
    """`dynamodb_consumed_capacity_by_route_total{route,kind}`: units project.operations.usage charged to a route.

    Called for every DynamoDB call of a worker: each label pair's child is looked up once."""
    for kind, units in (("read", read), ("write", write)):
        if units:
            counter = _route_counters.get((route, kind))
            if counter is None:
                counter = _route_counters.setdefault((route, kind), _metrics().capacity_by_route.labels(route, kind))
            counter.inc(units)


def metrics_install() -> None:
    """Start recording (at start-up, when metrics are on): hooks on every DynamoDB client."""
    if not metrics_enabled():
        return
    from project.dynamo.clients import client_hook_add

    client_hook_add("before-parameter-build.dynamodb", _note_tables)
    client_hook_add("response-received.dynamodb", _count_response)
    from project.operations.usage import recorder

    recorder.capacity_listener = route_capacity_count


# --- workers (from their heartbeats) --------------------------------------------------


class WorkerCollector:
    """Each worker's backlog, lag, heartbeat age and up (0/1), read from the heartbeats per scrape."""

    def collect(self) -> list[Metric]:
        from prometheus_client.core import GaugeMetricFamily

        from project.operations.health_selectors import worker_statuses

        backlog = GaugeMetricFamily("worker_backlog", "Items waiting for the worker", labels=["worker", "instance"])
        lag = GaugeMetricFamily(
            "worker_lag_seconds", "Age of the oldest waiting item at the last heartbeat", labels=["worker", "instance"]
        )
        age = GaugeMetricFamily(
            "worker_heartbeat_age_seconds", "Seconds since the last heartbeat", labels=["worker", "instance"]
        )
        up = GaugeMetricFamily("worker_up", "1 when a process of the worker has a fresh heartbeat", labels=["worker"])
        readable = GaugeMetricFamily("worker_heartbeats_readable", "1 when the heartbeats could be read")
        try:
            statuses = worker_statuses()
        except Exception as error:  # the scrape still answers, with the request and DynamoDB counts
            logger.warning("metrics: reading the heartbeats failed (%s)", type(error).__name__)
            readable.add_metric([], 0)
            return [readable]
        readable.add_metric([], 1)
        fresh: dict[str, int] = {}
        for status in statuses:
            fresh[status.worker] = max(fresh.get(status.worker, 0), int(status.healthy))
            if status.instance is None:
                continue
            # A row with an instance has its heartbeat's age.
            age.add_metric([status.worker, status.instance], cast(float, status.age_seconds))
            if status.backlog is not None:
                backlog.add_metric([status.worker, status.instance], status.backlog)
            if status.lag_seconds is not None:
                lag.add_metric([status.worker, status.instance], status.lag_seconds)
        for worker, value in fresh.items():
            up.add_metric([worker], value)
        return [backlog, lag, age, up, readable]


# --- exposition -------------------------------------------------------------------------


def is_operator(request: HttpRequest) -> bool:
    """An operator's request: a METRICS_TOKEN bearer token, or a client address in
    METRICS_ALLOWED_IPS. Who may read /metrics, and /readyz's details."""
    from project.http.security import client_ip

    token = settings.METRICS_TOKEN
    header = request.META.get("HTTP_AUTHORIZATION", "")
    if token and header.startswith("Bearer ") and hmac.compare_digest(header[7:].encode(), token.encode()):
        return True
    networks = _networks(tuple(settings.METRICS_ALLOWED_IPS))
    try:
        address = ipaddress.ip_address(client_ip(request))
    except ValueError:
        return False
    return any(address in network for network in networks)


@lru_cache(maxsize=4)
def _networks(entries: tuple[str, ...]) -> list[IPv4Network | IPv6Network]:
    return [ipaddress.ip_network(entry, strict=False) for entry in entries]


def metrics_view(request: HttpRequest) -> HttpResponse:
    """GET /metrics: 404 when metrics are off, 403 for a caller without the token or address."""
    if not metrics_enabled():
        raise Http404
    if not is_operator(request):
        return HttpResponse(
            "Forbidden: a METRICS_TOKEN bearer token or an address in METRICS_ALLOWED_IPS.\n",
            status=403,
            content_type="text/plain",
        )
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest, multiprocess

    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    registry.register(WorkerCollector())
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)


# --- the process manager's hooks --------------------------------------------------------


def child_exit(server: Any, worker: Any) -> None:
    """gunicorn's `child_exit` hook: a dead web worker's live gauges leave the sums."""
    if metrics_enabled():
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)


def metrics_dir_prepare() -> None:
    """Before the processes start (gunicorn's `on_starting`): create PROMETHEUS_MULTIPROC_DIR and
    remove the files of processes no longer running (their counts would be added forever)."""
    folder = Path(os.environ.get("PROMETHEUS_MULTIPROC_DIR", settings.PROMETHEUS_MULTIPROC_DIR))
    folder.mkdir(parents=True, exist_ok=True)
    for path in folder.glob("*.db"):
        pid = path.stem.rpartition("_")[2]
        if pid.isdigit() and not _running(int(pid)):
            path.unlink(missing_ok=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
