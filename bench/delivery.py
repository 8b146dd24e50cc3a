"""Benchmark: prepare and dispatch a broadcast delivery on DynamoDB Local.

    .venv/bin/python bench/delivery.py                     # 3,000 targets (about 3 minutes on 2 shared cores)
    .venv/bin/python bench/delivery.py --targets 100000    # a large broadcast

Every target's feed is full (FEED_MAX_ENTRIES entries) before dispatch, as on a
site in use. For 1, 2 and 4 dispatcher threads (what `dispatch_deliveries --workers N`
runs): wall time and targets per second of prepare and of dispatch, and the read and
write capacity units per delivered target (ReturnConsumedCapacity). Beside them the
floor: the raw calls the operation needs, one thread, same batch size: a consistent
BatchGetItem of the batch's feeds, then one transact_write_items with per target the
delete of its target item (condition: exists), the put of its full feed (condition:
the version read) and the unread count update, then the batch's `delivery_received`
activity lines (BatchWriteItem). And the peak Python memory of prepare
at a tenth of the audience and at the full audience (tracemalloc).
"""

from __future__ import annotations

import argparse
import threading
import time
import tracemalloc

from _setup import bench_environment, capacity_meter, units
from django.conf import settings
from django.contrib.auth import get_user_model

from delivery import preparation, services
from delivery.dispatch import delivery_dispatch
from delivery.models import Delivery
from project.dynamo import clients as dynamo


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
    preparation.delivery_prepare(delivery_id=delivery_id)
    elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    services.delivery_cancel(delivery_id=delivery_id)  # its targets stay unsent; not part of later runs
    return elapsed, peak, int(Delivery.get(delivery_id, consistent_read=True).total_targets)


def fill_feeds(user_ids: list[str]) -> dict:
    """Give every user a full feed (FEED_MAX_ENTRIES message entries); returns one such item (raw)."""
    import uuid

    from notifications.feed import merge as feed_merge
    from notifications.feed import services as feed_services
    from notifications.feed.events import FeedEvent

    feed_services.feed_append(
        user_id="template", event=FeedEvent("seed", "message", None, None, delivery_id=uuid.uuid4().hex)
    )
    for n in range(feed_merge.feed_max_entries() - 1):
        feed_services.feed_append(
            user_id="template", event=FeedEvent(f"fill{n}", "message", None, None, delivery_id=uuid.uuid4().hex)
        )
    client = dynamo.client()
    table = dynamo.table_name("feed")
    template = client.get_item(TableName=table, Key={"user_id": {"S": "template"}}, ConsistentRead=True)["Item"]
    for start in range(0, len(user_ids), 25):
        requests = [
            {"PutRequest": {"Item": {**template, "user_id": {"S": uid}}}} for uid in user_ids[start : start + 25]
        ]
        while requests:
            answer = client.batch_write_item(RequestItems={table: requests})
            requests = answer.get("UnprocessedItems", {}).get(table, [])
    return template


def dispatch(delivery_id: str, workers: int, batch_size: int) -> tuple[float, int]:
    delivered = []
    lock = threading.Lock()

    def run(number):
        report = delivery_dispatch(
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


def floor(user_ids: list[str], batch_size: int, template: dict) -> tuple[float, tuple[float, float]]:
    """The raw calls a delivered batch needs: a consistent BatchGetItem of the feeds, then one
    transaction of delete target (condition exists) + put the full feed (condition on the
    version read) + unread count update per target, then the batch's activity log lines."""
    client = dynamo.client()
    targets = dynamo.table_name("delivery_targets")
    feed = dynamo.table_name("feed")
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
        feeds = [
            {"PutRequest": {"Item": {**template, "user_id": {"S": f"floor{uid}"}}}}
            for uid in user_ids[start : start + 25]
        ]
        client.batch_write_item(RequestItems={feed: feeds})
    with capacity_meter() as meter:
        started = time.perf_counter()
        _floor_batches(client, user_ids, batch_size, template, floor_id)
        seconds = time.perf_counter() - started
    return seconds, meter.per(len(user_ids))


def _activity_item(user_id: str, delivery_id: str) -> tuple[str, dict]:
    from social.activity.services import _item

    item = _item(user_id=user_id, action="delivery_received", object_id=delivery_id, millis=int(time.time() * 1000))
    return item.Meta.table_name, item.serialize()


def _floor_batches(client, user_ids: list[str], batch_size: int, template: dict, floor_id: str) -> None:
    targets = dynamo.table_name("delivery_targets")
    feed = dynamo.table_name("feed")
    counts = dynamo.table_name("unread_counts")
    for start in range(0, len(user_ids), batch_size):
        batch = user_ids[start : start + batch_size]
        read = client.batch_get_item(
            RequestItems={feed: {"Keys": [{"user_id": {"S": f"floor{uid}"}} for uid in batch], "ConsistentRead": True}}
        )
        versions = {item["user_id"]["S"]: item["version"]["N"] for item in read["Responses"][feed]}
        actions = []
        for uid in batch:
            version = versions[f"floor{uid}"]
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
                        "Item": {**template, "user_id": {"S": f"floor{uid}"}, "version": {"N": str(int(version) + 1)}},
                        "ConditionExpression": "#v = :v",
                        "ExpressionAttributeNames": {"#v": "version"},
                        "ExpressionAttributeValues": {":v": {"N": version}},
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
        # The activity log's delivery_received lines, BatchWriteItem 25 a request.
        lines = [_activity_item(uid, floor_id) for uid in batch]
        for part in range(0, len(lines), 25):
            table = lines[0][0]
            client.batch_write_item(
                RequestItems={table: [{"PutRequest": {"Item": item}} for _, item in lines[part : part + 25]]}
            )


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--targets", type=int, default=3000, help="audience size (default 3,000; 100,000 shows a large broadcast)"
    )
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
        user_ids = [str(pk) for pk in get_user_model().objects.order_by("pk").values_list("pk", flat=True)]
        started = time.perf_counter()
        template = fill_feeds(user_ids)
        print(
            f"every target's feed filled with {settings.FEED_MAX_ENTRIES} entries "
            f"({len(template['p']['B']):,} bytes of entries) in {time.perf_counter() - started:.1f}s"
        )
        print()
        print(
            f"{'workers':<8} {'prepare':>9} {'prep/s':>8} {'dispatch':>9} {'targets/s':>10}  check   units per delivered target"
        )
        for count in workers:
            delivery_id = create(staff)
            started = time.perf_counter()
            preparation.delivery_prepare(delivery_id=delivery_id)
            prepare_seconds = time.perf_counter() - started
            with capacity_meter() as meter:
                seconds, delivered = dispatch(delivery_id, count, args.batch_size)
            stored = Delivery.get(delivery_id, consistent_read=True)
            ok = stored.status == "done" and stored.delivered_count == stored.total_targets == delivered == args.targets
            print(
                f"{count:<8} {prepare_seconds:8.1f}s {args.targets / prepare_seconds:8.0f} {seconds:8.1f}s "
                f"{delivered / seconds:10.0f}  {'exact' if ok else f'MISMATCH {stored.status} {stored.delivered_count}/{stored.total_targets} ran {delivered}'}"
                f"   {units(*meter.per(delivered))}"
            )
        seconds, capacity = floor(user_ids, args.batch_size, template)
        print(
            f"{'floor':<8} {'':>9} {'':>8} {seconds:8.1f}s {len(user_ids) / seconds:10.0f}          {units(*capacity)}"
        )
        print(
            "  (floor: consistent BatchGetItem of the batch's feeds + one transaction of delete target, "
            "put full feed, count update per target + the activity lines; same batch size, 1 thread)"
        )
        print()
        ids_bytes = sum(len(uid) + 1 for uid in user_ids) + 3
        print(
            f"seed alternative 'one list item per delivery': {len(user_ids):,} ids take ~{ids_bytes / 1024:.0f} KB "
            f"({'over' if ids_bytes > 400 * 1024 else 'under'} the 400 KB item limit), and every progress write "
            f"rewrites the whole item (~{ids_bytes / 1024:.0f} WCU a write on AWS, all on one partition)."
        )
        print(f"DYNAMODB_HOST={dynamo.endpoint().host}")


if __name__ == "__main__":
    main()
