"""What a limit check costs: latency and units of `limit_hit` beside the floor (one raw UpdateItem).

    .venv/bin/python bench/limits.py [--repeat 300]

Rows: a one-rule limit (the API throttles), a three-rule write limit ("5/min,60/hour,
200/day"), the live poll's leased check (LIMIT_LIVE_BLOCK units per write), a refused
check (answered from memory after the first), and a view mark (conditional put).
"""

from __future__ import annotations

import argparse
import os

os.environ["RATE_LIMITS_ENABLED"] = "True"  # this bench measures the limits themselves

from _setup import bench_environment, capacity_meter, row, timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=300)
    args = parser.parse_args()
    repeat = args.repeat

    with bench_environment():
        from project.dynamo import clients as dynamo
        from project.limits import store as limits
        from project.models import LimitCounter

        client = dynamo.client()
        table = LimitCounter.Meta.table_name
        counter = iter(range(10**9))

        def floor():
            client.update_item(
                TableName=table,
                Key={"key": {"S": f"floor#{next(counter) % 50}"}},
                UpdateExpression="ADD #c :one",
                ConditionExpression="attribute_not_exists(#c) OR #c < :limit",
                ExpressionAttributeNames={"#c": "count"},
                ExpressionAttributeValues={":one": {"N": "1"}, ":limit": {"N": "1000000"}},
            )

        floor_samples = timed(floor, repeat)
        print(row("floor: one conditional UpdateItem", floor_samples))

        def measure(label, call):
            with capacity_meter() as meter:
                samples = timed(call, repeat)
            print(row(label, samples, floor_samples, capacity=meter.per(repeat)))

        measure(
            "limit_hit, one rule (API throttle)",
            lambda: limits.limit_hit(name="b1", subject=f"s{next(counter) % 50}", rules="1000000/min"),
        )
        measure(
            "limit_hit, three rules (comment)",
            lambda: limits.limit_hit(
                name="b3", subject=f"s{next(counter) % 50}", rules="10000/min,60000/hour,900000/day"
            ),
        )
        measure(
            "limit_hit, leased by 10 (live poll)",
            lambda: limits.limit_hit(name="live", subject=f"s{next(counter) % 5}", rules="1000000/min", block=10),
        )
        limits.limit_hit(name="full", subject="s", rules="1/hour")
        measure("limit_hit, refused", lambda: limits.limit_hit(name="full", subject="s", rules="1/hour"))
        measure(
            "once_per_window (view mark)",
            lambda: limits.once_per_window(name="view", subject=f"v{next(counter)}", seconds=3600),
        )


if __name__ == "__main__":
    main()
