"""Activity log: what logging adds to a like, the daily rollup's speed and memory, and the
spread of one day's writes over the `by_day` partitions.

    .venv/bin/python bench/activity.py [--likes 300] [--items 200000] [--users 10000]

1. A like and its fold (which writes the liker's activity line) vs the same without the
   line (interleaved, so background load hits both alike), and the write units DynamoDB
   reports for each.
3. One day of `--items` log items from `--users` users, loaded with BatchWriteItem from
   threads (set-up, not measured), counted by the rollup: items/s, and tracemalloc's
   peak at a tenth of the items vs all of them (flat: about 1).
2. The by_day partitions' load for `--users` users (Django pks "1".."N") writing one day:
   largest / mean partition, beside the seed's ASCII-sum suffix for comparison.
"""

from __future__ import annotations

import argparse
import random
import statistics
import threading
import time
import tracemalloc
import uuid
import zlib
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import date, datetime
from unittest import mock
from zoneinfo import ZoneInfo

from _setup import bench_environment, percentiles

from project.dynamo import clients as dynamo

DAY = date(2026, 11, 18)


WRITES = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}


def like_with_fold(comment_id: str, user_id: str) -> None:
    """A like and its fold (where the liker's activity line is written), done now."""
    from actions.likes import like_add
    from notifications.like_fold import like_events_fold

    like_add(comment_id=comment_id, user_id=user_id)
    like_events_fold(comment_id=comment_id)


def write_units_of_like(comment_id: str, user_id: str) -> dict[str, float]:
    """Write capacity units of one like and its fold, per table, as DynamoDB reports them."""
    from project.dynamo import wire

    reported: Counter[str] = Counter()
    real = wire.make_api_call

    def spy(self, operation, params):
        if operation not in WRITES:
            return real(self, operation, params)
        answer = real(self, operation, {**params, "ReturnConsumedCapacity": "INDEXES"})
        consumed = answer.get("ConsumedCapacity", [])
        for entry in [consumed] if isinstance(consumed, dict) else consumed:
            reported[entry["TableName"].split("_", 2)[-1]] += entry.get("CapacityUnits", 0.0)
        return answer

    with mock.patch.object(wire, "make_api_call", spy):
        like_with_fold(comment_id, user_id)
    return dict(reported)


def bench_like(count: int) -> None:
    from django.contrib.auth import get_user_model

    from actions.comments import comment_create

    author = get_user_model().objects.create_user(username="author", password="x")
    comments = [comment_create(author_id=str(author.pk), body=f"c{i}").comment_id for i in range(count)]
    with_log, without_log = [], []
    # The fold writes the likers' activity lines beside the notification (social/fold_effects.py).
    no_log = mock.patch("social.fold_effects.activity_record_keyed", lambda *args, **kwargs: 0)
    for _ in range(20):  # warm-up
        like_with_fold(random.choice(comments), uuid.uuid4().hex)
    for n in range(count):
        for logged in (True, False) if n % 2 else (False, True):
            user_id, comment_id = uuid.uuid4().hex, random.choice(comments)
            started = time.perf_counter()
            if logged:
                like_with_fold(comment_id, user_id)
            else:
                with no_log:
                    like_with_fold(comment_id, user_id)
            (with_log if logged else without_log).append(time.perf_counter() - started)
    a, b = percentiles(with_log), percentiles(without_log)
    print(f"1. A like and its fold, {count} each way, interleaved (DynamoDB Local, one process)")
    print(f"   without the log line   p50 {b['p50']:6.2f} ms  mean {b['mean']:6.2f} ms  p99 {b['p99']:6.2f} ms")
    print(f"   with the log line      p50 {a['p50']:6.2f} ms  mean {a['mean']:6.2f} ms  p99 {a['p99']:6.2f} ms")
    print(
        f"   added: p50 {100 * (a['p50'] / b['p50'] - 1):+.1f}%  mean {100 * (a['mean'] / b['mean'] - 1):+.1f}%"
        "  (the like's answer itself carries no log line: it is written by the fold)"
    )
    logged = write_units_of_like(comments[0], uuid.uuid4().hex)
    with no_log:
        unlogged = write_units_of_like(comments[1], uuid.uuid4().hex)
    print(
        f"   write units of a like and its fold: {sum(unlogged.values()):.1f} without, {sum(logged.values()):.1f} with"
    )
    print(f"   (per table with the log: {', '.join(f'{k} {v:g}' for k, v in sorted(logged.items()))})")


def load_day(model, *, users: int, items: int, start_index: int, threads: int = 8) -> float:
    """Put `items` log items of DAY for `users` users with BatchWriteItem from threads."""
    from social.activity.models import ACTIONS
    from social.activity.periods import day_bounds, day_key
    from social.activity.services import at_key

    client = dynamo.client()
    table = model.Meta.table_name
    day_start, _ = day_bounds(DAY)
    generator = random.Random(start_index)

    def item(n: int) -> dict:
        user_id = str(generator.randrange(1, users + 1))
        millis = round((day_start + generator.uniform(0, 86399.999)) * 1000)
        return {
            "user_id": {"S": user_id},
            "at_key": {"S": at_key(millis)},
            "day_key": {"S": day_key(day=DAY, user_id=user_id)},
            "action": {"S": ACTIONS[n % len(ACTIONS)]},
            "object_id": {"S": f"object-{n % 5000}"},
        }

    batches = [
        [{"PutRequest": {"Item": item(n)}} for n in range(first, min(first + 25, start_index + items))]
        for first in range(start_index, start_index + items, 25)
    ]

    def send(batch):
        while batch:
            answer = client.batch_write_item(RequestItems={table: batch})
            batch = answer.get("UnprocessedItems", {}).get(table, [])

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(send, batches))
    return time.perf_counter() - started


def day_read_capacity(model) -> float:
    """Read capacity units of reading the whole day through by_day (Select=COUNT, same cost)."""
    from social.activity.periods import day_partitions

    client = dynamo.client()
    total = 0.0
    for partition in day_partitions(DAY):
        kwargs = {
            "TableName": model.Meta.table_name,
            "IndexName": "by_day",
            "KeyConditionExpression": "day_key = :p",
            "ExpressionAttributeValues": {":p": {"S": partition}},
            "ReturnConsumedCapacity": "TOTAL",
        }
        while True:
            page = client.query(**kwargs, Select="COUNT")
            total += page.get("ConsumedCapacity", {}).get("CapacityUnits", 0.0)
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    return total


def measure_rollup(day) -> tuple[float, int, int]:
    """(items/s, items, peak bytes): the rate without tracemalloc, then the peak with it."""
    from social.activity.rollup import activity_day_count

    started = time.perf_counter()
    count = activity_day_count(day=day)
    elapsed = time.perf_counter() - started
    tracemalloc.start()
    activity_day_count(day=day)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return count.items / elapsed, count.items, peak


def bench_rollup(items: int, users: int) -> None:
    from social.activity.month_tables import activity_model_ready

    model = activity_model_ready(month=f"{DAY:%Y%m}")
    small = items // 10
    print(f"\n3. Rollup of one day: {small:,} then {items:,} items from {users:,} users")
    loaded = load_day(model, users=users, items=small, start_index=0)
    print(f"   loaded {small:,} items in {loaded:.1f}s ({small / loaded:,.0f} items/s, BatchWriteItem x 8 threads)")
    rate_small, counted_small, peak_small = measure_rollup(DAY)
    assert counted_small == small, counted_small
    loaded = load_day(model, users=users, items=items - small, start_index=small)
    print(f"   loaded {items - small:,} more in {loaded:.1f}s ({(items - small) / loaded:,.0f} items/s)")
    rate_all, counted_all, peak_all = measure_rollup(DAY)
    assert counted_all == items, counted_all
    print(f"   {small:>9,} items: {rate_small:8,.0f} items/s, peak {peak_small / 2**20:6.2f} MiB (tracemalloc)")
    print(f"   {items:>9,} items: {rate_all:8,.0f} items/s, peak {peak_all / 2**20:6.2f} MiB (target >= 5,000/s)")
    print(f"   peak {items:,} / peak {small:,}: {peak_all / peak_small:.2f}x (flat = about 1)")
    print(f"   write capacity units to load: about {2 * items:,} (1 per item + 1 for its by_day entry, < 1 KB)")
    print(f"   read capacity units of one rollup (as reported): {day_read_capacity(model):,.1f}")


def bench_spread(users: int) -> None:
    from social.activity.periods import day_shard

    def spread(shard_of) -> tuple[float, Counter]:
        load = Counter()
        generator = random.Random(3)
        for user in range(1, users + 1):
            load[shard_of(str(user))] += generator.randint(1, 20)  # users act unequally
        return max(load.values()) / statistics.fmean(load.values()), load

    ours, load = spread(day_shard)
    crc, _ = spread(lambda user_id: zlib.crc32(user_id.encode()) % 10 + 1)
    print(f"\n2. One day's writes of {users:,} users (1..20 actions each) over the by_day partitions")
    print(f"   ASCII-sum suffix (the seed's, ours): largest / mean = {ours:.3f}  (target <= 1.3)")
    print(f"   per partition: {sorted(load.values())}")
    print(f"   a crc32 suffix, for comparison: {crc:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--likes", type=int, default=300)
    parser.add_argument("--items", type=int, default=200_000)
    parser.add_argument("--users", type=int, default=10_000)
    options = parser.parse_args()
    with bench_environment():
        from django.conf import settings

        from social.activity import services as activity

        settings.TIME_ZONE = "UTC"
        # The likes are logged on another day than the one the rollup counts.
        noon = datetime(DAY.year, DAY.month, DAY.day - 7, 12, tzinfo=ZoneInfo("UTC")).timestamp()
        lock = threading.Lock()
        ticks = iter(range(10**9))

        def clock() -> float:
            with lock:
                return noon + next(ticks) / 1000

        with mock.patch.object(activity, "clock", clock):
            bench_like(options.likes)
        bench_spread(options.users)
        bench_rollup(options.items, options.users)


if __name__ == "__main__":
    main()
