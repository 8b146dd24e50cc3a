"""What recording the cost of each route costs: the attribution's CPU per request and per
DynamoDB call, a flush's put, and the admin System page's read of a day of tallies.

    .venv/bin/python bench/usage.py [--processes 11] [--routes 40] [--people 300]

The table is filled as a site of `--processes` processes (web and workers) would leave it
after a day: each process flushed its five-minute slots and hours, each bucket with
`--routes` routes and up to `--people` signed-in people. Capacity is what DynamoDB Local
reports, with AWS's minimum for reads that find nothing (project/operations/usage.py `aws_units`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import timeit

os.environ.setdefault("USAGE_FLUSH_SECONDS", "0")  # no flusher thread: the bench flushes by hand
os.environ["USAGE_ENABLED"] = "True"  # what it measures (_setup turns it off for the other benches)

from _setup import bench_environment, capacity_meter

from project.clock import ManualClock, clock_override
from project.operations import usage
from project.operations.usage_people import person_hash
from project.operations.usage_selectors import usage_summary

T0 = 1_900_000_000.0  # 17:46 UTC


def attribution_overhead() -> None:
    """The work the middleware and the botocore hook add, timed alone (µs)."""
    from django.test import RequestFactory

    recorder = usage.recorder
    request = RequestFactory().get("/api/live/")

    class Match:
        view_name = "api-live"

    request.resolver_match = Match()  # type: ignore[attr-defined]
    middleware = usage.UsageMiddleware(lambda _: None)  # type: ignore[arg-type,return-value]
    repeat = 20_000
    per_request = min(timeit.repeat(lambda: middleware(request), number=repeat, repeat=5)) / repeat
    answer = {"ConsumedCapacity": {"TableName": "x_comments", "CapacityUnits": 0.5}, "Item": {}}

    class Model:
        name = "GetItem"

    def one_call() -> None:
        context: dict = {}
        usage._note_call(params={"TableName": "x_comments"}, model=Model, context=context)
        usage._count_call(answer, context)

    per_call = min(timeit.repeat(one_call, number=repeat, repeat=5)) / repeat
    people = [person_hash(number) for number in range(1000)]
    with_person = min(
        timeit.repeat(lambda: recorder.add("api-live", requests=1, person=people[7]), number=repeat, repeat=5)
    )
    hashing = min(timeit.repeat(lambda: person_hash(12345), number=repeat, repeat=5)) / repeat
    print("attribution, per request and per DynamoDB call (CPU, this machine):")
    print(f"  the middleware's own work (anonymous request)   {per_request * 1e6:6.1f} µs")
    print(
        f"  counting a signed-in person (hash + set)        {with_person / repeat * 1e6:6.1f} µs (hash {hashing * 1e6:.1f})"
    )
    print(f"  the hooks on one DynamoDB call                  {per_call * 1e6:6.1f} µs")
    usage.recorder._reset()


def fill(processes: int, routes: int, people: int) -> tuple[float, float, int]:
    """A day of tallies: every process's 12 slots of the last hour and 24 hours; (WCU per put, ms per put, puts)."""
    writes, puts, seconds = 0.0, 0, 0.0
    names = [f"route-{number:02d}-{'x' * 12}" for number in range(routes)]
    for process in range(processes):
        usage.recorder._reset()
        clock = ManualClock(T0 - 24 * 3600)
        with clock_override(clock):
            for step in range(24 * 12):  # a five-minute step a day long
                clock._now = T0 - 24 * 3600 + (step + 1) * 300
                for number, name in enumerate(names):
                    usage.recorder.add(name, requests=10 + number, read=5.0 * number, write=1.0 * (number % 5))
                for person in range(min(people, 20 + step)):
                    usage.recorder.add(names[0], person=person_hash((process, person)))
                if step >= 24 * 12 - 12 or step % 12 == 11:  # the last hour's slots, and each hour once
                    with capacity_meter() as meter:
                        started = time.perf_counter()
                        written = usage.usage_flush()
                        seconds += time.perf_counter() - started
                    writes += meter.write
                    puts += written
    usage.recorder._reset()
    return writes / max(1, puts), seconds / max(1, puts) * 1000, puts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", type=int, default=11, help="web and worker processes (default 11)")
    parser.add_argument("--routes", type=int, default=40, help="routes each process served (default 40)")
    parser.add_argument("--people", type=int, default=300, help="signed-in people a bucket saw, at most")
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    with bench_environment():
        attribution_overhead()
        per_put, put_ms, puts = fill(options.processes, options.routes, options.people)
        print(f"\na flush's put ({puts} puts of buckets of {options.routes} routes, people as hashes or registers):")
        print(f"  {per_put:5.1f} WCU and {put_ms:5.1f} ms a put; a busy process puts 1.2 a minute")
        per_day = per_put * 1.2 * 1440 * options.processes
        print(f"  {options.processes} processes busy all day: {per_day:,.0f} WCU, ${per_day * 0.625 / 1e6:.3f} a day")
        samples = []
        with clock_override(ManualClock(T0)), capacity_meter() as meter:
            for _ in range(options.repeat):
                started = time.perf_counter()
                windows = usage_summary(now=T0)
                samples.append(time.perf_counter() - started)
        hour, day = windows
        print(f"\nthe System page's usage read ({options.processes} processes, last hour and last day):")
        print(
            f"  {statistics.median(samples) * 1000:7.1f} ms  {meter.calls / options.repeat:4.0f} calls"
            f"  {meter.read / options.repeat:6.1f} RCU  (items: hour {hour.items}, day {day.items};"
            f" people: hour {hour.people}, day {day.people})"
        )
        top = day.routes[0]
        print(f"  day's dearest route: {top.route} {top.requests} requests, ${top.dollars:.4f}")


if __name__ == "__main__":
    main()
