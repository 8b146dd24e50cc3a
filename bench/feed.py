"""Feed appends: one writer, then 8 concurrent writers on the same feed, against the floor.

The floor is what any optimistic-locking feed write needs at least: a consistent
GetItem of the feed item and a PutItem conditioned on its version, as raw client
calls on an item of the same size. feed_append adds the merge/cap in Python, the
unread_counts update in the same TransactWriteItems, and the retries. Read and write
units per operation (ReturnConsumedCapacity) beside each latency; then the inbox of
a full feed read from today's compact item and from the same feed in the map
format (entries with their text inline).

    .venv/bin/python bench/feed.py
"""

from __future__ import annotations

import logging
import threading
import time
import uuid

from _setup import bench_environment, capacity_meter, percentiles, row

logging.getLogger("notifications").setLevel(logging.ERROR)  # queued events are counted below

SINGLE_APPENDS = 200
WRITERS = 8
CONCURRENT_APPENDS = 20  # per writer


def main() -> None:
    with bench_environment():
        from notifications.feed import services as feed_services
        from notifications.feed.events import FeedEvent
        from notifications.models import Feed
        from project.dynamo.clients import client

        def event(tag: str, n: int) -> FeedEvent:
            """A reply notification: each a new entry (its own parent), the text left in the reply."""
            return FeedEvent(
                event_id=f"{tag}-{n}",
                kind="reply",
                actor_id=str(1000 + n % 50),
                rollup_key=f"reply#{uuid.uuid4()}",
                object_id=str(uuid.uuid4()),
            )

        raw = client()
        table = Feed.Meta.table_name

        def floor_write(user_id: str, conflicts: list[int]) -> None:
            """Consistent get + version-conditioned put of the whole item, retried on a lost race."""
            while True:
                item = raw.get_item(TableName=table, Key={"user_id": {"S": user_id}}, ConsistentRead=True)["Item"]
                version = item["version"]["N"]
                item["version"] = {"N": str(int(version) + 1)}
                try:
                    raw.put_item(
                        TableName=table,
                        Item=item,
                        ConditionExpression="#v = :v",
                        ExpressionAttributeNames={"#v": "version"},
                        ExpressionAttributeValues={":v": {"N": version}},
                    )
                    return
                except raw.exceptions.ConditionalCheckFailedException:
                    conflicts.append(1)

        # --- one writer -------------------------------------------------------------
        samples = []
        meters = []
        for n in range(SINGLE_APPENDS):
            with capacity_meter() as meter:
                start = time.perf_counter()
                result = feed_services.feed_append(user_id="single", event=event("single", n))
                samples.append(time.perf_counter() - start)
            meters.append((meter.read, meter.write))
            assert result.status == feed_services.APPLIED
        size = len(Feed.get("single", consistent_read=True).entries)
        # The floor works on a copy of the full (capped) feed item.
        copy = raw.get_item(TableName=table, Key={"user_id": {"S": "single"}}, ConsistentRead=True)["Item"]
        copy["user_id"] = {"S": "floor"}
        raw.put_item(TableName=table, Item=copy)
        floor = []
        with capacity_meter() as floor_meter:
            for _ in range(SINGLE_APPENDS):
                start = time.perf_counter()
                floor_write("floor", [])
                floor.append(time.perf_counter() - start)
        item_bytes = sum(len(value.get("B", b"")) for value in copy.values()) + 100
        print(f"feed item: {size} entries (cap), about {item_bytes / 1024:.1f} KB")

        def mean_units(pairs):
            return sum(r for r, _ in pairs) / len(pairs), sum(w for _, w in pairs) / len(pairs)

        print(row("floor: GetItem + conditional PutItem", floor, capacity=floor_meter.per(SINGLE_APPENDS)))
        print(row("feed_append into an empty feed (first)", samples[:1], capacity=meters[0]))
        print(row("feed_append into a feed of 50 entries", samples[50:51], capacity=meters[50]))
        print(row("feed_append, one writer, first 100 (growing)", samples[:100], capacity=mean_units(meters[:100])))
        print(row("feed_append, one writer, at the cap (100)", samples[100:], floor, capacity=mean_units(meters[100:])))
        inbox_compare(author_count=size)

        # --- 8 writers on one feed -------------------------------------------------------
        def concurrent(work) -> tuple[list[float], float]:
            latencies: list[float] = []
            lock = threading.Lock()

            def writer(number: int) -> None:
                for n in range(CONCURRENT_APPENDS):
                    start = time.perf_counter()
                    work(number, n)
                    elapsed = time.perf_counter() - start
                    with lock:
                        latencies.append(elapsed)

            threads = [threading.Thread(target=writer, args=(number,)) for number in range(WRITERS)]
            began = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            return latencies, time.perf_counter() - began

        floor_conflicts: list[int] = []
        floor_latencies, floor_wall = concurrent(lambda number, n: floor_write("floor", floor_conflicts))

        results = []

        def append(number: int, n: int) -> None:
            results.append(feed_services.feed_append(user_id="shared", event=event(f"w{number}", n)))

        # Start from a full feed, as the single writer did.
        raw.put_item(TableName=table, Item={**copy, "user_id": {"S": "shared"}})
        latencies, wall = concurrent(append)
        queued = sum(1 for result in results if result.status == feed_services.QUEUED)
        drained = feed_services.feed_retries_process(limit=1000, now_ms=int(time.time() * 1000) + 3_600_000)
        writes = WRITERS * CONCURRENT_APPENDS
        conflicts = sum(result.conflicts for result in results)

        def line(label, samples, wall_seconds, extra):
            stats = percentiles(samples)
            return (
                f"{label:<44} {writes / wall_seconds:8.0f}/s  p50 {stats['p50']:7.2f} ms  "
                f"p99 {stats['p99']:7.2f} ms  {extra}"
            )

        print(f"{WRITERS} writers x {CONCURRENT_APPENDS} appends on one feed:")
        print(
            line(
                "floor: get + conditional put, retried",
                floor_latencies,
                floor_wall,
                f"{len(floor_conflicts) / writes:.2f} conflict retries/write",
            )
        )
        print(
            line(
                "feed_append",
                latencies,
                wall,
                f"{conflicts / writes:.2f} conflict retries/write, {queued} queued "
                f"(drained: {drained.applied} applied)",
            )
        )
        statuses = [result.status for result in results]
        applied = statuses.count(feed_services.APPLIED) + drained.applied + drained.already_applied
        kept = len(Feed.get("shared", consistent_read=True).entries)
        print(f"check: {applied}/{writes} events applied exactly once, {kept} entries kept (cap)")


def inbox_compare(*, author_count: int) -> None:
    """The inbox of a full feed of replies, packed (today) vs the map format (text inline), which is still read."""
    from django.conf import settings
    from django.contrib.auth import get_user_model

    from actions.comments import comment_create
    from notifications.feed.events import feed_entry_id
    from notifications.models import Feed, LegacyFeedEntry
    from notifications.selectors import notification_inbox

    User = get_user_model()
    owner = User.objects.create_user(username="inbox-owner", password="!")
    # FEED_REPLIES_PER_PERSON replies each: a feed of that many entries per person, none rolled up.
    per_person = settings.FEED_REPLIES_PER_PERSON
    repliers = [
        User.objects.create_user(username=f"inbox-replier-{n}", password=None, display_name=f"Replier {n}")
        for n in range(-(-author_count // per_person))
    ]
    legacy_owner = User.objects.create_user(username="inbox-legacy", password="!")
    legacy = []
    for n in range(author_count):
        replier = repliers[n // per_person]
        parent = comment_create(author_id=str(owner.pk), body=f"Comment {n}")
        reply = comment_create(author_id=str(replier.pk), body="返信ありがとう。" * 15, parent_id=parent.comment_id)
        at = reply.created_at
        legacy.append(
            LegacyFeedEntry(
                entry_id=feed_entry_id(f"reply:{reply.comment_id}"),
                kind="reply",
                rollup_key=f"reply#{parent.comment_id}",
                actor_ids=[str(replier.pk)],
                actor_count=1,
                body=reply.body[:140],
                url=f"/c/{parent.comment_id}/#c-{reply.comment_id}",
                created_at=at,
                updated_at=at,
            )
        )
    Feed._get_connection().put_item(
        str(legacy_owner.pk),
        attributes={"entries": {"L": [{"M": entry.serialize(entry)} for entry in legacy]}, "version": {"N": "1"}},
    )
    for label, user in (("inbox page, compact feed (today)", owner), ("inbox page, old format", legacy_owner)):
        samples, pairs = [], []
        for _ in range(30):
            with capacity_meter() as meter:
                start = time.perf_counter()
                page = notification_inbox(user_id=str(user.pk), excerpts=True)
                samples.append(time.perf_counter() - start)
            pairs.append((meter.read, meter.write))
            assert len(page.results) > 0
        read = sum(r for r, _ in pairs) / len(pairs)
        print(row(label, samples, capacity=(read, 0.0)))


if __name__ == "__main__":
    main()
