"""Shared start-up for benchmarks: Django settings, an in-memory DynamoDB Local on a
free port (or BENCH_DYNAMODB_HOST), fresh tables, and small timing helpers.

    from _setup import bench_environment, percentiles
    with bench_environment() as host:
        ...
"""

from __future__ import annotations

import contextlib
import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DATABASE_URL", "sqlite:///:memory:")
os.environ.setdefault("LOG_LEVEL", "WARNING")
os.environ.setdefault("DEBUG", "True")  # development settings: the defaults are production-safe
os.environ.setdefault("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")  # Django's test Client is `testserver`
os.environ.setdefault("RATE_LIMITS_ENABLED", "False")  # measure the work, not the write limits
os.environ.setdefault("HOLD_FOR_REVIEW_ENABLED", "False")  # new accounts' posts published, not held for review
os.environ.setdefault("USAGE_ENABLED", "False")  # no usage tallies into tables the bench drops at exit

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402

from project.dynamo import tables as dynamo  # noqa: E402
from project.operations.usage import aws_units  # noqa: E402


@contextlib.contextmanager
def bench_environment():
    """DynamoDB Local (in memory) with every table created, and a migrated in-memory SQLite."""
    with dynamo.scratch_tables(prefix="bench_", external_host=os.environ.get("BENCH_DYNAMODB_HOST")) as host:
        call_command("migrate", verbosity=0)
        yield host


def percentiles(samples: list[float]) -> dict[str, float]:
    """p50 / p99 / mean of latencies in seconds, returned in milliseconds."""
    ordered = sorted(samples)

    def at(fraction):
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000

    return {"p50": at(0.50), "p99": at(0.99), "mean": statistics.fmean(ordered) * 1000}


def timed(call, repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return samples


def row(
    label: str, samples: list[float], floor: list[float] | None = None, capacity: tuple[float, float] | None = None
) -> str:
    """Rate, p50, p99 of `samples`; the ratio to the floor's p50; units of one operation (read, write)."""
    stats = percentiles(samples)
    rate = len(samples) / sum(samples) if sum(samples) else float("inf")
    text = f"{label:<44} {rate:8.0f}/s  p50 {stats['p50']:7.2f} ms  p99 {stats['p99']:7.2f} ms"
    if floor:
        floor_stats = percentiles(floor)
        text += f"  ({stats['p50'] / floor_stats['p50']:.2f}x floor p50)"
    if capacity is not None:
        text += f"  {units(*capacity)}"
    return text


# --- capacity units ----------------------------------------------------------------
# On-demand prices, USD per million request units: the settings the admin System page uses.
PRICE_PER_MILLION_WRITES = settings.DYNAMODB_PRICE_PER_MILLION_WRITES
PRICE_PER_MILLION_READS = settings.DYNAMODB_PRICE_PER_MILLION_READS
READ_OPERATIONS = {"GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems"}
WRITE_OPERATIONS = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}


class Capacity:
    """Read and write units DynamoDB reported (ReturnConsumedCapacity) while metering, with
    what AWS charges for reads that find nothing (project/operations/usage.py `aws_units`, as the admin
    System page counts them)."""

    def __init__(self):
        self.read = 0.0
        self.write = 0.0
        self.calls = 0
        # "<operation> <table>[ consistent]" -> [calls, units]: where the units go (costs.py --detail).
        self.by_call: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def add(self, operation: str, units: float, *, table: str = "", consistent: bool = False) -> None:
        with self._lock:
            self.calls += 1
            if operation in READ_OPERATIONS:
                self.read += units
            else:
                self.write += units
            entry = self.by_call.setdefault(f"{operation} {table}{' consistent' if consistent else ''}", [0, 0.0])
            entry[0] += 1
            entry[1] += units

    def per(self, operations: int) -> tuple[float, float]:
        return self.read / max(1, operations), self.write / max(1, operations)


@contextlib.contextmanager
def capacity_meter():
    """Ask every read and write for its ConsumedCapacity (all threads) and add it up."""
    from unittest import mock

    from project.dynamo import wire

    meter = Capacity()
    real = wire.make_api_call

    def metered(self, operation, params):
        if operation not in READ_OPERATIONS | WRITE_OPERATIONS:
            return real(self, operation, params)
        answer = real(self, operation, {**params, "ReturnConsumedCapacity": "TOTAL"})
        consumed = answer.get("ConsumedCapacity") or []
        for entry in consumed if isinstance(consumed, list) else [consumed]:
            table = entry.get("TableName", "")
            batch = params.get("RequestItems", {}).get(table)  # BatchGetItem: a dict; BatchWriteItem: a list
            consistent = params.get("ConsistentRead") or (isinstance(batch, dict) and batch.get("ConsistentRead"))
            reported = float(entry.get("CapacityUnits", 0.0))
            charged = aws_units(operation, params, answer, table=table, reported=reported)
            meter.add(operation, charged, table=table, consistent=bool(consistent))
        return answer

    with mock.patch.object(wire, "make_api_call", metered):
        yield meter


def measured(call) -> tuple[float, float, float]:
    """Run `call()` once: (seconds, read units, write units)."""
    with capacity_meter() as meter:
        start = time.perf_counter()
        call()
        seconds = time.perf_counter() - start
    return seconds, meter.read, meter.write


def units(read: float, write: float) -> str:
    """`1.0 RCU  14.0 WCU  $8.88/M`: units of one operation and what a million of them cost on demand."""
    dollars = read * PRICE_PER_MILLION_READS + write * PRICE_PER_MILLION_WRITES
    return f"{read:5.1f} RCU {write:5.1f} WCU  ${dollars:7.2f}/M ops"
