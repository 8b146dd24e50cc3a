"""What a DynamoDB call costs the calling process: botocore's whole machinery against the fast
path the app sends its usual calls on (project/dynamo/wire.py), the same calls in one run.

    .venv/bin/python bench/wire.py [--calls 2000]

For each kind of call (a GetItem of a small item, a Query of a page of 20 items, a PutItem, a
conditional PutItem that fails): CPU of this process per call, and latency p50 / p99, one
call at a time against DynamoDB Local. The rounds alternate between the two paths so both meet
the same machine; CPU is what matters (it is what a web process spends per call), latency
includes DynamoDB Local's own time on the same cores.
"""

from __future__ import annotations

import argparse
import time

from _setup import bench_environment, percentiles

from project.dynamo import clients as dynamo
from project.dynamo import wire
from social.models import CounterShard

ROUNDS = 4


def measure(send, operation: str, params: dict, count: int) -> tuple[float, list[float]]:
    """CPU ms per call and each call's latency (s)."""
    samples = []
    cpu = time.process_time()
    for _ in range(count):
        start = time.perf_counter()
        send(operation, params)
        samples.append(time.perf_counter() - start)
    return (time.process_time() - cpu) / count * 1000, samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000, help="calls of each kind per path (default 2000)")
    calls = parser.parse_args().calls
    with bench_environment():
        client = dynamo.client()
        table = CounterShard.Meta.table_name
        for shard in range(20):
            client.put_item(
                TableName=table, Item={"counter_key": {"S": "page"}, "shard": {"N": str(shard)}, "count": {"N": "7"}}
            )
        kinds = {
            "GetItem (one small item)": (
                "GetItem",
                {"TableName": table, "Key": {"counter_key": {"S": "page"}, "shard": {"N": "1"}}},
            ),
            "Query (a page of 20 items)": (
                "Query",
                {
                    "TableName": table,
                    "KeyConditionExpression": "counter_key = :k",
                    "ExpressionAttributeValues": {":k": {"S": "page"}},
                },
            ),
            "PutItem": ("PutItem", {"TableName": table, "Item": {"counter_key": {"S": "put"}, "shard": {"N": "1"}}}),
            "PutItem, its condition failing": (
                "PutItem",
                {
                    "TableName": table,
                    "Item": {"counter_key": {"S": "page"}, "shard": {"N": "1"}},
                    "ConditionExpression": "attribute_not_exists(counter_key)",
                },
            ),
        }

        def sender(path):
            def send(operation, params):
                try:
                    path(client, operation, dict(params))
                except client.exceptions.ConditionalCheckFailedException:
                    pass

            return send

        paths = {"botocore": sender(wire._botocore_call), "fast path": sender(wire.make_api_call)}
        print(f"{calls} calls of each kind per path, in {ROUNDS} alternating rounds, one at a time")
        print(f"{'call':<34} {'path':<10} {'CPU/call':>9} {'p50':>8} {'p99':>8}")
        for label, (operation, params) in kinds.items():
            cpu: dict[str, list[float]] = {name: [] for name in paths}
            latency: dict[str, list[float]] = {name: [] for name in paths}
            for send in paths.values():
                measure(send, operation, params, 50)  # warm: connections, caches
            for _ in range(ROUNDS):
                for name, send in paths.items():
                    spent, samples = measure(send, operation, params, calls // ROUNDS)
                    cpu[name].append(spent)
                    latency[name].extend(samples)
            for name in paths:
                stats = percentiles(latency[name])
                mean_cpu = sum(cpu[name]) / ROUNDS
                print(f"{label:<34} {name:<10} {mean_cpu:7.3f} ms {stats['p50']:5.2f} ms {stats['p99']:5.2f} ms")
            ratio = (sum(cpu["botocore"]) / sum(cpu["fast path"])) if sum(cpu["fast path"]) else float("inf")
            print(f"{'':<34} botocore spends {ratio:.1f}x the fast path's CPU")


if __name__ == "__main__":
    main()
