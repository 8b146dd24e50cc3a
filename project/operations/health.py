"""`GET /healthz` (the process answers) and `GET /readyz` (it can serve: DynamoDB answers,
every table and index is there and ACTIVE, migrations are applied).

Both are answered by `HealthMiddleware`, first in MIDDLEWARE: before the HTTPS redirect,
the host check, sessions and load shedding, so a load balancer or an orchestrator can
probe a process by its address over plain HTTP, and a busy process still says it is
alive. /readyz answers 200 `{"status": "ready"}` or 503 `{"status": "unavailable"}` with
`Retry-After`: the status code is all a load balancer needs. What is wrong is for the
operator, not for strangers: an operator's request (project.operations.metrics.is_operator:
the METRICS_TOKEN bearer token or an address in METRICS_ALLOWED_IPS, as for /metrics) also
gets `"failing": [names]` and `"checks": {name: "ok" or what is wrong}` (a host, a table, an
index); it goes to the log (a warning when the answer changes), and `python manage.py
check_ready` prints it.

Cheap whoever polls it, and never a lever on DynamoDB: a process computes readiness at
most once every READYZ_MIN_INTERVAL seconds (1), one request at a time; requests meanwhile
get the last answer. So a flood of /readyz from the internet costs each process at most
one ListTables a second (AWS limits that control-plane call per account) and never takes
the instance out of its load balancer. The DynamoDB check is one ListTables call tried once
with short timeouts (an outage shows within that second); the table and migration checks
are remembered for READYZ_CACHE_SECONDS in this process once they pass (a passing check
is per-process health, not shared state).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor
from django.http import JsonResponse

from project.dynamo import clients as dynamo
from project.dynamo.schema.check import table_problems
from project.dynamo.schema.registry import registered_models
from project.errors import retry_after_set
from project.operations.metrics import is_operator

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.http import HttpRequest, HttpResponse

logger = logging.getLogger(__name__)

HEALTH_PATHS = ("/healthz", "/readyz")
NOT_CHECKED = "not checked (DynamoDB does not answer)"


@dataclass
class Readiness:
    checks: dict[str, str] = field(default_factory=dict)  # name -> "ok" or what is wrong

    @property
    def failing(self) -> list[str]:
        return [name for name, result in self.checks.items() if result != "ok"]

    @property
    def ready(self) -> bool:
        return not self.failing


def _dynamodb_answers() -> str:
    try:
        dynamo.probe_client().list_tables(Limit=1)
    except Exception as error:
        return f"no answer from {dynamo.endpoint().host or 'AWS DynamoDB'}: {type(error).__name__}"
    return "ok"


def _tables_active() -> str:
    """Every registered model's table ACTIVE, with each declared index present (GSIs ACTIVE)."""
    problems = [problem for model in registered_models() for problem in table_problems(model)]
    return "ok" if not problems else "; ".join(problems) + " (run create_tables)"


def _migrations_applied() -> str:
    connection = connections[DEFAULT_DB_ALIAS]
    try:
        executor = MigrationExecutor(connection)
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except Exception as error:
        return f"database unavailable: {type(error).__name__}"
    return "ok" if not plan else f"{len(plan)} migration(s) not applied (run migrate)"


class _Remembered:
    """Passing results of the slower checks, for READYZ_CACHE_SECONDS (this process only)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._passed_at: dict[str, float] = {}

    def check(self, name: str, run: Callable[[], str]) -> str:
        with self._lock:
            passed_at = self._passed_at.get(name)
        if passed_at is not None and time.monotonic() - passed_at < settings.READYZ_CACHE_SECONDS:
            return "ok"
        result = run()
        with self._lock:
            if result == "ok":
                self._passed_at[name] = time.monotonic()
            else:
                self._passed_at.pop(name, None)
        return result

    def forget(self) -> None:
        with self._lock:
            self._passed_at.clear()


remembered = _Remembered()


def readiness_check() -> Readiness:
    readiness = Readiness()
    readiness.checks["dynamodb"] = _dynamodb_answers()
    if readiness.checks["dynamodb"] == "ok":
        readiness.checks["tables"] = remembered.check("tables", _tables_active)
    else:
        readiness.checks["tables"] = NOT_CHECKED
    readiness.checks["migrations"] = remembered.check("migrations", _migrations_applied)
    return readiness


class _Latest:
    """This process's last readiness, computed by one request at a time at most once every
    READYZ_MIN_INTERVAL seconds; the others answer what it found."""

    def __init__(self) -> None:
        self._computing = threading.Lock()
        self._readiness: Readiness | None = None
        self._at = 0.0

    def _fresh(self) -> Readiness | None:
        if self._readiness is not None and time.monotonic() - self._at < settings.READYZ_MIN_INTERVAL:
            return self._readiness
        return None

    def get(self) -> Readiness:
        if fresh := self._fresh():
            return fresh
        before = self._readiness
        if not self._computing.acquire(blocking=before is None):
            return cast(Readiness, before)  # another request is computing it: the last answer meanwhile
        try:
            if fresh := self._fresh():  # computed while this request waited for the first answer
                return fresh
            readiness = readiness_check()
            if readiness.checks != (before.checks if before else None) and not (before is None and readiness.ready):
                log = logger.info if readiness.ready else logger.warning
                log("readiness: %s", "ready" if readiness.ready else readiness.checks)
            self._readiness, self._at = readiness, time.monotonic()
            return readiness
        finally:
            self._computing.release()

    def forget(self) -> None:
        self._readiness = None


latest = _Latest()


def _answer(body: dict[str, Any], status: int) -> JsonResponse:
    response = JsonResponse(body, status=status)
    response["Cache-Control"] = "no-store"
    return retry_after_set(response, "5" if status == 503 else None)


class HealthMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = request.path_info.rstrip("/")
        if path not in HEALTH_PATHS or request.method not in ("GET", "HEAD"):
            return self.get_response(request)
        if path == "/healthz":
            return _answer({"status": "ok"}, 200)
        readiness = latest.get()
        body: dict[str, Any] = {"status": "ready" if readiness.ready else "unavailable"}
        if is_operator(request):
            body.update(failing=readiness.failing, checks=readiness.checks)
        return _answer(body, 200 if readiness.ready else 503)
