"""What the workers' heartbeats cost: each backlog measurement, the heartbeat put, and the
health read, in DynamoDB calls, capacity units and milliseconds, beside the floor.

    .venv/bin/python bench/health.py [--repeat 20]

Each backlog is measured on an empty queue and on one far beyond its cap (2,000 pending
like events, 2,000 counters due, 200 feed retries due, 40 queued deliveries), so the line
shows that the cost stays bounded whatever the backlog. The floor is the same bounded
Queries sent with the bare botocore client and `Select=COUNT` (no PynamoDB, no items
returned). Capacity is what DynamoDB Local reports (ReturnConsumedCapacity); it reports 0
for a Query that reads nothing, where AWS bills 0.5 RCU (eventually consistent) per Query.
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid

from _setup import bench_environment, capacity_meter


def measure(call, repeat: int) -> tuple[float, float, float, float]:
    """(median ms, calls, read units, write units) of one `call()`."""
    samples = []
    with capacity_meter() as meter:
        for _ in range(repeat):
            start = time.perf_counter()
            call()
            samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000, meter.calls / repeat, meter.read / repeat, meter.write / repeat


def line(name: str, figures, floor=None) -> None:
    ms, calls, read, write = figures
    text = f"  {name:<44} {ms:7.1f} ms {calls:5.1f} calls {read:6.1f} RCU {write:4.1f} WCU"
    if floor is not None:
        text += f"   floor {floor[0]:6.1f} ms {floor[2]:6.1f} RCU"
    print(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=20)
    repeat = parser.parse_args().repeat

    with bench_environment():
        from django.conf import settings

        from delivery.models import QUEUE, Delivery, DeliveryQueueEntry
        from delivery.selectors import deliveries_backlog
        from notifications.feed import events as feed_events
        from notifications.feed import services as feed_services
        from notifications.feed.events import FEED_RETRY_SHARDS
        from notifications.feed.selectors import feed_retries_backlog
        from notifications.models import FeedRetry, LikeEvent
        from notifications.selectors import like_events_backlog
        from project.clock import clock
        from project.dynamo.clients import client, table_name
        from project.operations.backlog import BACKLOG_CAP
        from project.operations.health_selectors import worker_statuses
        from project.operations.health_services import heartbeat_write
        from social.activity.rollup import activity_days_backlog
        from social.aggregation import counters_due_backlog
        from social.models import CounterTotal

        raw = client()

        def count_floor(table: str, index: str, key: str, parts: int, cap: int, condition: str = "", values=None):
            def run():
                for part in range(parts):
                    raw.query(
                        TableName=table_name(table),
                        IndexName=index,
                        KeyConditionExpression="#k = :p" + condition,
                        ExpressionAttributeNames={"#k": key},
                        ExpressionAttributeValues={":p": {"S": str(part)}, **(values or {})},
                        Select="COUNT",
                        Limit=-(-cap // parts),
                    )

            return run

        def scan_floor(table: str, cap: int):
            """One raw Scan page of the keys (the like events' table holds only pending events)."""

            def run():
                raw.scan(
                    TableName=table_name(table),
                    ProjectionExpression="comment_id, event_id",
                    Limit=cap,
                )

            return run

        def fill() -> None:
            now = clock.now()
            with LikeEvent.batch_write() as batch:
                for n in range(2000):
                    batch.save(
                        LikeEvent(
                            f"comment-{n % 50}",
                            f"{int((now - n) * 1e9):020d}#{uuid.uuid4().hex[:12]}",
                            author_id="1",
                            liker_id=str(n),
                            kind="like",
                            created_at=now - n,
                        )
                    )
            with CounterTotal.batch_write() as batch:
                for n in range(2000):
                    batch.save(
                        CounterTotal(
                            f"like#c{n}", due_part=str(n % settings.COUNTER_DUE_SHARDS), due_at=now - n, changed_at=now
                        )
                    )
            with FeedRetry.batch_write() as batch:
                for n in range(200):
                    event = feed_events.FeedEvent(f"e{n}", "message", None, None, title="Hello " * 15, body="x" * 300)
                    batch.save(feed_services.feed_retry_item(user_id=str(n), event=event))
            with Delivery.batch_write() as batch, DeliveryQueueEntry.batch_write() as queue:
                for _ in range(40):
                    delivery_id = str(uuid.uuid4())
                    at = clock.now_iso()
                    batch.save(
                        Delivery(
                            delivery_id,
                            title="t",
                            body="b",
                            audience_kind="all",
                            status="dispatching",
                            created_by_id="1",
                            created_by_name="staff",
                            created_at=at,
                            updated_at=at,
                            chunk_count=100,
                            chunks_done=10,
                        )
                    )
                    queue.save(DeliveryQueueEntry(QUEUE, delivery_id, created_at=at))

        due_now = {":now": {"N": str(int(time.time() * 1000) + 10**9)}}
        checks = [
            (
                "pending like events (fold_like_events)",
                like_events_backlog,
                scan_floor("like_events", BACKLOG_CAP),
            ),
            (
                "counters due (aggregate_counters)",
                lambda: counters_due_backlog(now=time.time() + 10),
                count_floor(
                    "counter_totals",
                    "due",
                    "due_part",
                    settings.COUNTER_DUE_SHARDS,
                    BACKLOG_CAP,
                    " AND due_at <= :now",
                    {":now": {"N": str(time.time() + 10)}},
                ),
            ),
            (
                "feed retries due (process_feed_retries)",
                lambda: feed_retries_backlog(now_ms=int(time.time() * 1000) + 10**9),
                count_floor("feed_retry", "by_due", "shard", FEED_RETRY_SHARDS, 100, " AND due_at <= :now", due_now),
            ),
            ("unfinished delivery chunks (dispatch_deliveries)", deliveries_backlog, None),
            ("days not rolled up (rollup_activity)", activity_days_backlog, None),
        ]
        for state in ("empty queues", "queues beyond their caps"):
            if state != "empty queues":
                fill()
            print(f"Backlog measurement, {state} (median of {repeat}):")
            for name, call, floor in checks:
                print(f"    -> {call()}")
                line(name, measure(call, repeat), measure(floor, repeat) if floor else None)

        now = clock.now()
        print("Heartbeat and health:")
        line(
            "heartbeat put (one worker)",
            measure(
                lambda: heartbeat_write(
                    worker="fold_like_events",
                    instance="bench:1",
                    started_at=now,
                    now=clock.now(),
                    cycle_at=now,
                    cycle_seconds=0.1,
                    backlog=None,
                ),
                repeat,
            ),
        )
        line("health read (every worker: manage.py health, /metrics)", measure(worker_statuses, repeat))


if __name__ == "__main__":
    main()
