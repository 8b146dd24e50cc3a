"""What each route costs: requests and DynamoDB units per route, shared across machines.

Every DynamoDB call a process makes is charged to the route that caused it:

- a web request's calls to its URL name (`api-live`, `comment-detail`, `admin:dynamo-system`;
  `(unmatched)` when no pattern took it), its middleware's and what it does once answered
  (`project.serving.after_response`) included, and the calls of the tasks it hands to the
  process's thread pools (`project.serving.pools` runs each in its submitter's context);
- a polling worker's to `worker:<name>` (`worker_loop` names its thread);
- anything else in a process (start-up, a shell, a one-shot command) to `(background)`, and
  this module's own writes to `(usage)`.

Units are what DynamoDB reports (PynamoDB asks every call for its ConsumedCapacity; the
hook asks the raw client calls too), corrected to what AWS bills where DynamoDB Local
reports less (`aws_units`: a read that finds nothing, a refused conditional write).

Each process keeps running totals per route in two buckets at a time, the current
five-minute slot and the current hour, and the signed-in people it saw (project.operations.usage_people: hashes,
or a HyperLogLog once many, so that processes' and buckets' sets merge without keeping ids). A daemon thread writes the
buckets that changed to the `usage` table at most every USAGE_FLUSH_SECONDS, one put per
bucket (project.models.UsageTally), off the request path; the process's last changes are
written when it exits (atexit, and at the end of a worker's loop). The admin System page
(`project.operations.usage_selectors.usage_summary`) sums every process's items of the last hour and day.

Per request this costs a context variable, a few dict updates under a lock and, for a
signed-in person, one 8-byte hash; per DynamoDB call two dict look-ups and an addition.
"""

from __future__ import annotations

import atexit
import logging
import os
import secrets
import socket
import threading
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import MiddlewareNotUsed

from project.clock import clock
from project.errors import CONDITION_FAILED
from project.models import UsageTally
from project.operations.usage_people import People, person_hash

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.http import HttpRequest, HttpResponse

logger = logging.getLogger(__name__)

UNMATCHED = "(unmatched)"  # as in project.operations.metrics: a request no URL pattern took
BACKGROUND = "(background)"
USAGE = "(usage)"
WORKER_PREFIX = "worker:"

SLOT_SECONDS = 300  # the last hour is read from twelve of these
HOUR_SECONDS = 3600
SLOT_KEPT_SECONDS = 2 * 86400  # TTL: the page reads an hour of slots
HOUR_KEPT_SECONDS = 8 * 86400  # and a day of hours; a week of them stays for a look back
BUCKETS_HELD_MAX = 16  # a process that cannot write keeps this many buckets, then drops the oldest

READ_OPERATIONS = frozenset({"GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems"})
WRITE_OPERATIONS = frozenset({"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"})
SINGLE_WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem"})


# --- what AWS bills -----------------------------------------------------------------------


def aws_units(operation: str, params: dict[str, Any], answer: dict[str, Any], *, table: str, reported: float) -> float:
    """The units AWS bills for one table's part of a call DynamoDB reported `reported` for.

    DynamoDB Local reports nothing for what a read does not find; AWS charges it ("a read
    operation on an item that doesn't exist still consumes read throughput"), and the
    benchmarks meter with this too (bench/_setup.py): a Query or Scan that finds nothing costs the
    minimum (0.5 eventually consistent, 1 strongly consistent), every key of a BatchGetItem
    that finds no item as much as an item under 4 KB. (A GetItem that finds nothing is
    reported at the minimum already.) Other calls are taken as reported.
    """
    if operation in {"Query", "Scan"}:
        return max(reported, 1.0 if params.get("ConsistentRead") else 0.5)
    if operation == "BatchGetItem":
        request = params.get("RequestItems", {}).get(table, {})
        found = len(answer.get("Responses", {}).get(table, []))
        unprocessed = len(answer.get("UnprocessedKeys", {}).get(table, {}).get("Keys", []))
        missing = len(request.get("Keys", [])) - found - unprocessed
        return reported + max(0, missing) * (1.0 if request.get("ConsistentRead") else 0.5)
    return reported


def _call_units(operation: str, params: dict[str, Any], answer: dict[str, Any]) -> float:
    error = answer.get("Error", {}).get("Code")
    if error:
        # "If the condition expression evaluates to false, DynamoDB still consumes write
        # capacity": the existing item's size, at least 1 unit (the size is not known here).
        return 1.0 if error == CONDITION_FAILED and operation in SINGLE_WRITES else 0.0
    consumed = answer.get("ConsumedCapacity")
    entries = [consumed] if isinstance(consumed, dict) else consumed or []
    if not entries and operation in {"Query", "Scan"}:  # a call that asked for no report
        entries = [{"TableName": params.get("TableName", ""), "CapacityUnits": 0.0}]
    return sum(
        aws_units(
            operation, params, answer, table=entry.get("TableName", ""), reported=float(entry.get("CapacityUnits", 0))
        )
        for entry in entries
    )


# --- the running totals of one process -------------------------------------------------


@dataclass
class _Tab:
    """A request's units until its route is known (the URL is resolved inside the view stack)."""

    route: str | None = None
    units: list[tuple[float, float]] = field(default_factory=list)  # appended from pool threads too


_tab: ContextVar[_Tab | None] = ContextVar("usage_tab", default=None)


@dataclass
class _Bucket:
    kind: str  # "slot" or "hour"
    start: int
    routes: dict[str, list[float]] = field(default_factory=dict)  # route -> [requests, read, write]
    people: People = field(default_factory=People)
    dirty: bool = False
    written_at: float = 0.0  # when this process last put it


class UsageRecorder:
    """This process's totals per route, by bucket; thread-safe."""

    def __init__(self) -> None:
        self.process_route = BACKGROUND
        # Told every route's units as they are charged (project.operations.metrics, when /metrics is on).
        self.capacity_listener: Callable[[str, float, float], None] | None = None
        self._reset()
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        """A new process (and a forked child: gunicorn's workers): its own name and locks,
        none of the parent's totals, no flusher yet."""
        self._lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self._buckets: dict[tuple[str, int], _Bucket] = {}
        self.instance = _instance()
        self._flusher: threading.Thread | None = None

    def add(
        self, route: str, *, requests: int = 0, read: float = 0.0, write: float = 0.0, person: int | None = None
    ) -> None:
        if (read or write) and self.capacity_listener is not None:
            try:
                self.capacity_listener(route, read, write)
            except Exception:  # a metric never fails a request
                logger.exception("usage: counting the route's capacity for /metrics failed")
        now = clock.now()
        start_slot = int(now // SLOT_SECONDS) * SLOT_SECONDS
        start_hour = int(now // HOUR_SECONDS) * HOUR_SECONDS
        with self._lock:
            for kind, start in (("slot", start_slot), ("hour", start_hour)):
                bucket = self._buckets.get((kind, start))
                if bucket is None:
                    bucket = self._buckets[(kind, start)] = _Bucket(kind, start)
                    if len(self._buckets) > BUCKETS_HELD_MAX:  # writes keep failing: the oldest goes
                        oldest = min(self._buckets.values(), key=_bucket_end)
                        del self._buckets[(oldest.kind, oldest.start)]
                totals = bucket.routes.get(route)
                if totals is None:
                    totals = bucket.routes[route] = [0, 0.0, 0.0]
                totals[0] += requests
                totals[1] += read
                totals[2] += write
                if person is not None:
                    bucket.people.add(person)
                # This module's own writes alone do not make a bucket worth writing again:
                # an idle process writes nothing.
                bucket.dirty = bucket.dirty or route != USAGE
        return

    def consumed(self, read: float, write: float) -> None:
        """Units of one DynamoDB call, charged to the calling context's route."""
        tab = _tab.get()
        if tab is None:
            self.add(self.process_route, read=read, write=write)
        elif tab.route is None:
            tab.units.append((read, write))
        else:
            self.add(tab.route, read=read, write=write)

    # --- flushing ---------------------------------------------------------------------

    def flush(self, *, hour_every: float = 0.0) -> int:
        """Write every bucket that changed since its last write; the number of items written.

        With `hour_every` (the flusher thread: SLOT_SECONDS), the current hour's item is
        written at most that often (the last hour is read from the slots; the day can wait
        five minutes): 1.2 puts a minute instead of 2 for a busy process.

        Each item holds the bucket's running totals, so a put that runs twice writes the
        same item twice; a put that fails leaves the bucket marked and the next flush
        writes the totals, the lost part included; a process that dies loses what it
        counted since its last flush (at most USAGE_FLUSH_SECONDS of its usage). Only this
        process writes its items (`part` names it), and one flush runs at a time, so an
        older total never overwrites a newer one.
        """
        with self._flush_lock:
            now = clock.now()
            with self._lock:
                due = [
                    (
                        bucket.kind,
                        bucket.start,
                        {route: list(totals) for route, totals in bucket.routes.items()},
                        bucket.people.copy(),
                    )
                    for bucket in self._buckets.values()
                    if bucket.dirty and not _waits(bucket, now=now, hour_every=hour_every)
                ]
                for kind, start, _, _ in due:
                    self._buckets[(kind, start)].dirty = False
                    self._buckets[(kind, start)].written_at = now
                instance = self.instance
            written = 0
            token = _tab.set(_Tab(route=USAGE))
            try:
                for kind, start, routes, people in due:
                    try:
                        item = _tally(kind, start, instance)
                        item.routes = {
                            route: [int(t[0]), round(t[1], 2), round(t[2], 2)] for route, t in routes.items()
                        }
                        item.people = people.encode()
                        item.written_at = int(now)
                        item.save()
                        written += 1
                    except Exception as error:
                        logger.warning("usage: writing the %s of %d failed (%s)", kind, start, type(error).__name__)
                        with self._lock:
                            key = (kind, start)
                            if key in self._buckets:
                                self._buckets[key].dirty = True
            finally:
                _tab.reset(token)
            with self._lock:  # buckets that are over and written are done with
                for key, bucket in list(self._buckets.items()):
                    if not bucket.dirty and _bucket_end(bucket) <= now:
                        del self._buckets[key]
            return written

    def flusher_start(self) -> None:
        """Start this process's flusher thread once; nothing when USAGE_FLUSH_SECONDS is 0."""
        if self._flusher is not None:
            return
        interval = settings.USAGE_FLUSH_SECONDS
        if interval <= 0:
            return
        with self._lock:
            if self._flusher is not None:
                return
            self._flusher = threading.Thread(
                target=self._flush_every, args=(interval,), name="usage-flush", daemon=True
            )
            self._flusher.start()
        atexit.register(self.flush_quietly)

    def _flush_every(self, interval: float) -> None:
        idle = threading.Event()  # never set: the thread is a daemon and ends with its process
        while not idle.wait(interval):
            self.flush_quietly(hour_every=SLOT_SECONDS)

    def flush_quietly(self, *, hour_every: float = 0.0) -> None:
        try:
            self.flush(hour_every=hour_every)
        except Exception:  # never fails the request, the worker or the exit
            logger.exception("usage: flush failed")


def _waits(bucket: _Bucket, *, now: float, hour_every: float) -> bool:
    """An hour still running, written less than `hour_every` seconds ago, waits."""
    return bucket.kind == "hour" and _bucket_end(bucket) > now and now - bucket.written_at < hour_every


def _bucket_end(bucket: _Bucket) -> int:
    return bucket.start + (SLOT_SECONDS if bucket.kind == "slot" else HOUR_SECONDS)


def _instance() -> str:
    # The pid alone could be reused within a bucket on the same host: a random part keeps
    # each process's items its own.
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


def _tally(kind: str, start: int, instance: str) -> UsageTally:
    stamp = utc_stamp(start)
    if kind == "slot":
        bucket, part = f"slot#{stamp[:10]}", f"{stamp[10:12]}#{instance}"
        kept = SLOT_KEPT_SECONDS
    else:
        bucket, part = f"hour#{stamp[:8]}", f"{stamp[8:10]}#{instance}"
        kept = HOUR_KEPT_SECONDS
    return UsageTally(bucket, part, start=start, expires_at=datetime.fromtimestamp(start + kept, UTC))


def utc_stamp(seconds: float) -> str:
    """`yyyymmddhhmm` in UTC."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y%m%d%H%M")


recorder = UsageRecorder()


def usage_flush() -> int:
    """Write this process's changed tallies now (tests, a command's end); the items written."""
    return recorder.flush()


def usage_route_enter(route: str) -> Token[_Tab | None]:
    """Charge the calling thread's DynamoDB calls (and its pools') to `route` from now on (a
    worker's loop: `worker:<name>`), and start the process's flusher."""
    if settings.USAGE_ENABLED:
        recorder.flusher_start()
    return _tab.set(_Tab(route=route))


def usage_route_exit(token: Token[_Tab | None]) -> None:
    """The loop ended: back to the thread's previous route, and what the process counted since
    its last flush written (best effort; a worker exits without running atexit)."""
    _tab.reset(token)
    if settings.USAGE_ENABLED and settings.USAGE_FLUSH_SECONDS > 0:
        recorder.flush_quietly()


# --- requests -----------------------------------------------------------------------------


class UsageMiddleware:
    """Counts each request and the DynamoDB units it caused under its route (USAGE_ENABLED)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        if not settings.USAGE_ENABLED:
            raise MiddlewareNotUsed
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        recorder.flusher_start()
        tab = _Tab()
        _tab.set(tab)  # stays set after the answer: work after the response is this route's too
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        route = match.view_name if match is not None else UNMATCHED
        units = tab.units
        tab.route = route  # from here, calls are charged to the route directly
        read = sum(unit[0] for unit in units)
        write = sum(unit[1] for unit in units)
        recorder.add(route, requests=1, read=read, write=write, person=_person(request))
        return response


def _person(request: HttpRequest) -> int | None:
    """The signed-in person's hash, if the request already knew who they are (never a lookup of its own)."""
    from django.utils.functional import empty

    user = request.__dict__.get("user")
    if user is None:
        return None
    wrapped = getattr(user, "_wrapped", user)  # SimpleLazyObject: not evaluated -> not looked up
    if wrapped is empty or not getattr(wrapped, "is_authenticated", False):
        return None
    return person_hash(wrapped.pk)


# --- the botocore hooks --------------------------------------------------------------------


def _note_call(
    params: dict[str, Any] | None = None, model: Any = None, context: dict[str, Any] | None = None, **_: Any
) -> None:
    """`before-parameter-build.dynamodb`: ask a read or write for its consumed capacity."""
    if context is None or params is None or model is None:
        return
    operation = model.name
    if operation in READ_OPERATIONS or operation in WRITE_OPERATIONS:
        params.setdefault("ReturnConsumedCapacity", "TOTAL")
        context["usage_call"] = (operation, params)


def _count_call(parsed_response: dict[str, Any] | None = None, context: dict[str, Any] | None = None, **_: Any) -> None:
    """`response-received.dynamodb`: each attempt's billed units to the route (a throttled
    attempt or a connection error is not billed)."""
    if not parsed_response or context is None or "usage_call" not in context:
        return
    try:
        operation, params = context["usage_call"]
        units = _call_units(operation, params, parsed_response)
        if units:
            if operation in READ_OPERATIONS:
                recorder.consumed(units, 0.0)
            else:
                recorder.consumed(0.0, units)
    except Exception:  # counting must never fail a DynamoDB call
        logger.exception("usage: counting a DynamoDB call failed")


def usage_install() -> None:
    """At start-up: the hooks on every DynamoDB client (USAGE_ENABLED)."""
    if not settings.USAGE_ENABLED:
        return
    from project.dynamo.clients import client_hook_add

    client_hook_add("before-parameter-build.dynamodb", _note_call)
    client_hook_add("response-received.dynamodb", _count_call)
