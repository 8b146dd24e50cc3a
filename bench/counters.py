"""Sharded counters: write rate on one hot counter by shard count, aggregation lag, read cost.

    .venv/bin/python bench/counters.py

DynamoDB Local serialises transactions, so it never raises TransactionConflict.
For the transactional figures this script models AWS's rules with
project/testing/aws_conflicts.py (the model the tests use): a transaction that
touches an item another in-flight transaction holds is cancelled with
TransactionConflict before it reaches DynamoDB Local, and the service's retry
loop handles it as it would on AWS. Conflicts are counted.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from _setup import bench_environment, capacity_meter, measured, percentiles, row, timed, units
from django.conf import settings

from project.dynamo import transactions
from project.testing.aws_conflicts import aws_conflict_model

WRITERS = 8
OPS_PER_WRITER = 40
SHARD_COUNTS = (1, 10, 100)


def hammer(operation, writers=WRITERS, ops=OPS_PER_WRITER):
    """Run `operation(writer, n)` from `writers` threads; return (ops/s, failures)."""
    failures = []

    def writer(index):
        for n in range(ops):
            try:
                operation(index, n)
            except Exception as error:
                failures.append(type(error).__name__)

    started = time.perf_counter()
    with ThreadPoolExecutor(writers) as pool:
        list(pool.map(writer, range(writers)))
    elapsed = time.perf_counter() - started
    return writers * ops / elapsed, failures


def main():
    with bench_environment():
        from actions.comments import comment_create
        from actions.likes import like_add
        from project.dynamo.clients import client
        from project.dynamo.transactions import transact
        from social import aggregation, counters, ranking
        from social.counters import LIKES, VIEWS, counter_key
        from social.models import CounterShard, User

        author = User.objects.create_user(username="author", password="x")
        raw = client()
        shards_table = CounterShard.Meta.table_name

        print(f"{WRITERS} concurrent writers x {OPS_PER_WRITER} increments on one hot counter\n")
        print("floor: raw UpdateItem ADD on one item, 8 threads")
        floor_rate, _ = hammer(
            lambda w, n: raw.update_item(
                TableName=shards_table,
                Key={"counter_key": {"S": "floor#1"}, "shard": {"N": "0"}},
                UpdateExpression="ADD #c :one",
                ExpressionAttributeNames={"#c": "count"},
                ExpressionAttributeValues={":one": {"N": "1"}},
            )
        )
        print(f"  {'raw UpdateItem':<44} {floor_rate:8.0f}/s")
        print("views (counter_increment: UpdateItem on a random shard, the due flag reused per process)")
        for shards in SHARD_COUNTS:
            comment = comment_create(author_id=str(author.pk), body=f"views {shards}")
            key = counter_key(kind=VIEWS, object_id=comment.comment_id)
            counters.counter_set_shards(key=key, shards=shards)
            rate, failures = hammer(lambda w, n, key=key: counters.counter_increment(key=key))
            assert counters.counter_value(key=key) == WRITERS * OPS_PER_WRITER - len(failures)
            print(
                f"  {f'{shards} shard(s)':<44} {rate:8.0f}/s  ({rate / floor_rate:.2f}x floor)  failures {len(failures)}"
            )
        print("  (DynamoDB Local enforces no per-item throughput; on AWS one item takes ~1,000 writes/s,")
        print("   so N shards raise a view counter's ceiling ~N-fold.)\n")

        print(
            "transactions under the modelled AWS conflict rule "
            f"(retried with jittered backoff, {transactions.TRANSACTION_ATTEMPTS} attempts)"
        )
        print("floor: raw TransactWriteItems of one ADD on one item, 8 threads, no conflict model")
        floor_tx, _ = hammer(
            lambda w, n: raw.transact_write_items(
                TransactItems=[
                    {
                        "Update": {
                            "TableName": shards_table,
                            "Key": {"counter_key": {"S": "floor#tx"}, "shard": {"N": str(w)}},
                            "UpdateExpression": "ADD #c :one",
                            "ExpressionAttributeNames": {"#c": "count"},
                            "ExpressionAttributeValues": {":one": {"N": "1"}},
                        }
                    }
                ]
            )
        )
        print(f"  {'raw TransactWriteItems (no conflicts)':<44} {floor_tx:8.0f}/s")

        def shard_only(key):
            def build(transaction):
                shard = CounterShard(key, counters.counter_shard_for(key=key, member=f"{time.perf_counter_ns()}"))
                transaction.update(shard, actions=[CounterShard.count.add(1)])

            return lambda w, n: transact(build, what="bench")

        def with_flag(key):
            return lambda w, n: transact(
                lambda t: counters.counter_add(t, key=key, delta=1, member=f"{w}-{n}-{time.perf_counter_ns()}"),
                what="bench",
            )

        def like(comment_id):
            return lambda w, n: like_add(comment_id=comment_id, user_id=f"{w}-{n}")

        for label, make in (
            ("shard ADD only", shard_only),
            ("counter_add (shard ADD + due flag)", with_flag),
            ("like_add (like row + counter shard + event)", None),
        ):
            print(f"  {label}")
            for shards in SHARD_COUNTS:
                comment = comment_create(author_id=str(author.pk), body=f"{label} {shards}")
                key = counter_key(kind=LIKES, object_id=comment.comment_id)
                counters.counter_set_shards(key=key, shards=shards)
                operation = make(key) if make else like(comment.comment_id)
                with aws_conflict_model() as stats, capacity_meter() as meter:
                    rate, failures = hammer(operation)
                done = WRITERS * OPS_PER_WRITER - len(failures)
                per_op = meter.per(done)
                assert counters.counter_value(key=key) == done, (counters.counter_value(key=key), done)
                print(
                    f"    {f'{shards} shard(s)':<42} {rate:8.0f}/s  ({rate / floor_tx:.2f}x floor)  "
                    f"conflicts {stats.cancelled:4d} of {stats.transactions:4d} attempts, "
                    f"gave up {len(failures)}  {units(*per_op)}"
                )
        print()

        # Aggregation lag: from the last increment to the ranking showing it, aggregator in --loop.
        from social.management.commands.aggregate_counters import Command

        aggregation.counters_aggregate_pending(due_only=False)
        stop = threading.Event()
        aggregator = threading.Thread(
            target=Command().run_loop, kwargs={"stop": stop, "poll_seconds": 0.5}, daemon=True
        )
        aggregator.start()
        targets = [comment_create(author_id=str(author.pk), body=f"lag {n}") for n in range(20)]
        lags = []
        for round_number in range(3):
            expected, changed = {}, {}
            for n, comment in enumerate(targets):
                for extra in range(n % 3 + 1):
                    like_add(comment_id=comment.comment_id, user_id=f"r{round_number}-{extra}")
                expected[comment.comment_id] = (round_number + 1) * (n % 3 + 1)
                changed[comment.comment_id] = time.perf_counter()
                time.sleep(0.05)
            while expected:
                seen = {
                    entry.comment.id: entry.total
                    for entry in ranking.ranking_top(kind=LIKES, limit=100)
                    if entry.comment.id in expected
                }
                now = time.perf_counter()
                for comment_id, total in seen.items():
                    if total == expected[comment_id]:
                        lags.append(now - changed[comment_id])
                        del expected[comment_id]
                time.sleep(0.02)
        stop.set()
        aggregator.join()
        stats = percentiles(lags)
        print(
            f"aggregation lag, last like -> ranking shows it ({len(lags)} changes, "
            f"COUNTER_AGGREGATION_DELAY={settings.COUNTER_AGGREGATION_DELAY}s, poll 0.5s)"
        )
        print(
            f"  p50 {stats['p50']:.0f} ms  p99 {stats['p99']:.0f} ms  (floor: the delay, "
            f"{settings.COUNTER_AGGREGATION_DELAY * 1000:.0f} ms, + up to 500 ms poll)\n"
        )

        print("reading one count (strongly consistent Query over the shards), 200 reads")
        for shards in (1, 100):
            key = f"{VIEWS}#read-{shards}"
            for shard in range(shards):
                CounterShard(key, shard, count=1).save()
            assert counters.counter_value(key=key) == shards
            floor = timed(
                lambda key=key: raw.query(
                    TableName=shards_table,
                    KeyConditionExpression="counter_key = :k",
                    ExpressionAttributeValues={":k": {"S": key}},
                    ConsistentRead=True,
                ),
                200,
            )
            samples = timed(lambda key=key: counters.counter_value(key=key), 200)
            value_units = measured(lambda key=key: counters.counter_value(key=key))[1:]
            print("  " + row(f"counter_value, {shards} shard(s)", samples, floor, capacity=value_units))
            print("  " + row(f"floor: raw Query, {shards} shard(s)", floor))


if __name__ == "__main__":
    main()
