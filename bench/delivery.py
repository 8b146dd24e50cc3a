"""Benchmark: prepare and dispatch a broadcast delivery on DynamoDB Local.

    .venv/bin/python bench/delivery.py                     # 3,000 targets (about 3 minutes on 2 shared cores)
    .venv/bin/python bench/delivery.py --targets 100000    # the issue's size

For 1, 2 and 4 dispatcher threads (what `dispatch_deliveries --workers N` runs):
wall time and targets per second of prepare and of dispatch. Beside them the floor:
raw `transact_write_items` of the same actions per target (delete the target item
on condition it exists, put a feed item, update the unread count) in the same batch
size, one thread, no reads. And the peak Python memory of prepare at a tenth of the
audience and at the full audience (tracemalloc): streaming means it does not grow.
"""

from __future__ import annotations

import argparse
import threading
import time
import tracemalloc

from _setup import bench_environment
from django.conf import settings
from django.contrib.auth import get_user_model

from delivery import services
from delivery.models import Delivery
from project import dynamo


def make_users(count: int) -> list[str]:
    User = get_user_model()
    existing = User.objects.count()
    User.objects.bulk_create(
        [User(username=f"bench{n}", password="!", display_name=f"Bench {n}") for n in range(existing, count)],
        batch_size=2000,
    )
    staff, _ = User.objects.get_or_create(username="bench-staff", defaults={"is_staff": True, "password": "!"})
    return staff


def create(staff, *, kind="all", group=None) -> str:
    audience = services.Audience(kind=kind, group=group)
    return services.delivery_create(
        title="Bench", body="Benchmark message", url=None, audience=audience, created_by=staff
    ).delivery_id


def prepare_memory(staff, group_name: str | None) -> tuple[float, int, int]:
    delivery_id = create(staff, kind="group" if group_name else "all", group=group_name)
    tracemalloc.start()
    started = time.perf_counter()
    services.delivery_prepare(delivery_id=delivery_id)
    elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    services.delivery_cancel(delivery_id=delivery_id)  # its targets stay unsent; not part of later runs
    return elapsed, peak, int(Delivery.get(delivery_id, consistent_read=True).total_targets)


def dispatch(delivery_id: str, workers: int, batch_size: int) -> tuple[float, int]:
    delivered = []
    lock = threading.Lock()

    def run(number):
        report = services.delivery_dispatch(
            delivery_id=delivery_id, owner=f"bench:{number}", batch_size=batch_size, lease_seconds=120
        )
        with lock:
            delivered.append(report.delivered)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(workers)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started, sum(delivered)


def floor(user_ids: list[str], batch_size: int) -> float:
    """Raw TransactWriteItems: per target delete (condition exists) + feed put (condition) + count update."""
    client = dynamo.client()
    targets = dynamo.table_name("delivery_targets")
    feed = dynamo.table_name("feed")
    counts = dynamo.table_name("unread_counts")
    floor_id = "f" * 32
    for start in range(0, len(user_ids), 25):
        client.batch_write_item(
            RequestItems={
                targets: [
                    {
                        "PutRequest": {
                            "Item": {"user_id": {"S": uid}, "delivery_id": {"S": floor_id}, "chunk_seq": {"N": "0"}}
                        }
                    }
                    for uid in user_ids[start : start + 25]
                ]
            }
        )
    entry = {
        "M": {
            "entry_id": {"S": "0123456789abcdef"},
            "kind": {"S": "message"},
            "title": {"S": "Bench"},
            "body": {"S": "Benchmark message"},
            "created_at": {"S": "2026-11-22T00:00:00.000000Z"},
            "updated_at": {"S": "2026-11-22T00:00:00.000000Z"},
            "read": {"BOOL": False},
        }
    }
    started = time.perf_counter()
    for start in range(0, len(user_ids), batch_size):
        actions = []
        for uid in user_ids[start : start + batch_size]:
            actions.append(
                {
                    "Delete": {
                        "TableName": targets,
                        "Key": {"user_id": {"S": uid}, "delivery_id": {"S": floor_id}},
                        "ConditionExpression": "attribute_exists(user_id)",
                    }
                }
            )
            actions.append(
                {
                    "Put": {
                        "TableName": feed,
                        "Item": {"user_id": {"S": f"floor{uid}"}, "entries": {"L": [entry]}, "version": {"N": "1"}},
                        "ConditionExpression": "attribute_not_exists(version)",
                    }
                }
            )
            actions.append(
                {
                    "Update": {
                        "TableName": counts,
                        "Key": {"user_id": {"S": f"floor{uid}"}, "source": {"S": "feed"}},
                        "UpdateExpression": "SET #c = :one",
                        "ExpressionAttributeNames": {"#c": "count"},
                        "ExpressionAttributeValues": {":one": {"N": "1"}},
                    }
                }
            )
        client.transact_write_items(TransactItems=actions)
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", type=int, default=3000, help="audience size (default 3,000; the issue: 100,000)")
    parser.add_argument("--workers", default="1,2,4", help="dispatcher thread counts to run (default 1,2,4)")
    parser.add_argument("--batch-size", type=int, default=services.BATCH_SIZE_MAX)
    args = parser.parse_args()
    workers = [int(w) for w in args.workers.split(",")]

    with bench_environment():
        from django.contrib.auth.models import Group

        started = time.perf_counter()
        staff = make_users(args.targets - 1)  # + the staff member = the audience
        tenth = Group.objects.create(name="tenth")
        tenth.user_set.add(*get_user_model().objects.order_by("pk")[: max(1, args.targets // 10)])
        print(
            f"{args.targets:,} users created in {time.perf_counter() - started:.1f}s; chunk size {services.chunk_size()}, "
            f"batch size {args.batch_size} ({args.batch_size * services.ACTIONS_PER_TARGET + 2} actions a transaction)"
        )
        print()
        print("prepare peak Python memory (tracemalloc):")
        for label, group in (("a tenth of the audience", "tenth"), ("the whole audience", None)):
            elapsed, peak, total = prepare_memory(staff, group)
            print(
                f"  {label:<26} {total:>8,} targets  {elapsed:7.1f}s  {total / elapsed:7.0f} targets/s  peak {peak / 1e6:6.2f} MB"
            )
        print()
        print(f"{'workers':<8} {'prepare':>9} {'prep/s':>8} {'dispatch':>9} {'targets/s':>10}  check")
        for count in workers:
            delivery_id = create(staff)
            started = time.perf_counter()
            services.delivery_prepare(delivery_id=delivery_id)
            prepare_seconds = time.perf_counter() - started
            seconds, delivered = dispatch(delivery_id, count, args.batch_size)
            stored = Delivery.get(delivery_id, consistent_read=True)
            ok = stored.status == "done" and stored.delivered_count == stored.total_targets == delivered == args.targets
            print(
                f"{count:<8} {prepare_seconds:8.1f}s {args.targets / prepare_seconds:8.0f} {seconds:8.1f}s "
                f"{delivered / seconds:10.0f}  {'exact' if ok else f'MISMATCH {stored.status} {stored.delivered_count}/{stored.total_targets} ran {delivered}'}"
            )
        user_ids = [str(pk) for pk in get_user_model().objects.order_by("pk").values_list("pk", flat=True)]
        seconds = floor(user_ids, args.batch_size)
        print(
            f"{'floor':<8} {'':>9} {'':>8} {seconds:8.1f}s {len(user_ids) / seconds:10.0f}  "
            "(raw transact_write_items, same 3 actions a target, same batch size, 1 thread, no reads)"
        )
        print()
        ids_bytes = sum(len(uid) + 1 for uid in user_ids) + 3
        print(
            f"seed alternative 'one list item per delivery': {len(user_ids):,} ids take ~{ids_bytes / 1024:.0f} KB "
            f"({'over' if ids_bytes > 400 * 1024 else 'under'} the 400 KB item limit), and every progress write "
            f"rewrites the whole item (~{ids_bytes / 1024:.0f} WCU a write on AWS, all on one partition)."
        )
        print(f"DYNAMODB_HOST={settings.DYNAMODB_HOST}")


if __name__ == "__main__":
    main()
