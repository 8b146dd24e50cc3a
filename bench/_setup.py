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
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
os.environ.setdefault("DATABASE_URL", "sqlite:///:memory:")
os.environ.setdefault("LOG_LEVEL", "WARNING")
os.environ.setdefault("DEBUG", "True")  # development settings: the defaults are production-safe

import django

django.setup()

from django.core.management import call_command  # noqa: E402

from project import dynamo  # noqa: E402


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


def row(label: str, samples: list[float], floor: list[float] | None = None) -> str:
    stats = percentiles(samples)
    rate = len(samples) / sum(samples) if sum(samples) else float("inf")
    text = f"{label:<44} {rate:8.0f}/s  p50 {stats['p50']:7.2f} ms  p99 {stats['p99']:7.2f} ms"
    if floor:
        floor_stats = percentiles(floor)
        text += f"  ({stats['p50'] / floor_stats['p50']:.2f}x floor p50)"
    return text
