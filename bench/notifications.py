"""Like notifications: unread badge, inbox API and mark-read, each beside the floor of the
raw DynamoDB calls it needs (botocore, timed in the same run).

    .venv/bin/python bench/notifications.py

1. Unread count for a user with 10, 1,000 and 10,000 comments of which only 5 have
   unread likes: one LSI Query (`count > 0`) must keep it flat (ratio 10,000/10).
2. GET /api/notifications/?limit=100 with 100 unread notifications (token auth,
   DRF, likers' names from the relational database).
3. Mark read of 50 notifications: BatchGet + 2 TransactWriteItems (33 + 17
   comments, 3 actions each).
"""

from __future__ import annotations

import re
import time
import uuid
from unittest import mock

from _setup import bench_environment, capacity_meter, measured, percentiles, row, timed

UNREAD_REPEAT = 200
INBOX_REPEAT = 30
MARK_READ_REPEAT = 8


def make_users(prefix: str, count: int):
    from social.models import User

    return [User.objects.create(username=f"{prefix}{n}", display_name=f"{prefix.title()} {n}") for n in range(count)]


def seed_comments_without_likes(*, author_id: str, count: int, unread: int) -> None:
    """What `comment_create` leaves per comment (empty like_unread + unread_counts at 0),
    written in batches; `unread` of them then get 3 unread likes each."""
    from notifications.models import LikeUnread, UnreadCount

    now = "2026-01-01T00:00:00.000000Z"
    with LikeUnread.batch_write() as unread_batch, UnreadCount.batch_write() as count_batch:
        for n in range(count):
            comment_id = str(uuid.uuid4())
            likers = ["1", "2", "3"] if n < unread else []
            unread_batch.save(
                LikeUnread(author_id, comment_id, liker_ids=likers, num_likes=len(likers), updated_at=now)
            )
            count_batch.save(UnreadCount(author_id, f"like#{comment_id}", count=len(likers)))


def bench_unread_count(client) -> None:
    from notifications import selectors

    print("== unread count (badge): 5 comments with unread likes among N")
    sizes = (10, 1_000, 10_000)
    for comments in sizes:
        started = time.perf_counter()
        seed_comments_without_likes(author_id=f"badge-{comments}", count=comments, unread=5)
        print(f"   seeded {comments:>6} comments in {time.perf_counter() - started:.1f}s")

    def floor_call(author_id):
        raw_badge_query(client, author_id)

    # Warm DynamoDB Local's JVM up on every size first, so no size pays for it alone.
    for comments in sizes:
        assert selectors.unread_count(user_id=f"badge-{comments}") == 5  # 5 comments of 3 likes each
        timed(lambda comments=comments: selectors.unread_count(user_id=f"badge-{comments}"), 50)
    # Interleaved (floor, service, every size in turn): the machine's load hits all alike.
    floors = {comments: [] for comments in sizes}
    samples = {comments: [] for comments in sizes}
    for _ in range(UNREAD_REPEAT):
        for comments in sizes:
            author_id = f"badge-{comments}"
            floors[comments] += timed(lambda author_id=author_id: floor_call(author_id), 1)
            samples[comments] += timed(lambda author_id=author_id: selectors.unread_count(user_id=author_id), 1)
    p50s = {}
    for comments in sizes:
        p50s[comments] = percentiles(samples[comments])["p50"]
        author_id = f"badge-{comments}"
        units_of = measured(lambda author_id=author_id: selectors.unread_count(user_id=author_id))[1:]
        floor_units = measured(lambda author_id=author_id: floor_call(author_id))[1:]
        print(row(f"unread_count, {comments:>6} comments", samples[comments], floors[comments], capacity=units_of))
        print(row(f"  floor: 1 LSI Query, {comments:>6} comments", floors[comments], capacity=floor_units))
    print(f"ratio p50 10,000 / 10 comments: {p50s[10_000] / p50s[10]:.2f}")


def bench_inbox(client) -> None:
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    from actions.comments import comment_create
    from actions.likes import like_add
    from notifications.models import LikeRead, LikeUnread

    print("== inbox API: GET /api/notifications/?limit=100 with 100 unread notifications")
    author, *likers = make_users("inbox", 3)
    author_id = str(author.pk)
    for n in range(100):
        comment_id = comment_create(author_id=author_id, body=f"comment {n}").comment_id
        for liker in likers:
            like_add(comment_id=comment_id, user_id=str(liker.pk))
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=author).key}")
    answer = api.get("/api/notifications/", {"limit": 100}).json()
    assert len(answer["results"]) == 100 and answer["unread_count"] == 200, answer["unread_count"]

    def floor_call():
        client.query(
            TableName=LikeUnread.Meta.table_name,
            IndexName="by_num_likes",
            KeyConditionExpression="user_id = :u AND num_likes > :z",
            ExpressionAttributeValues={":u": {"S": author_id}, ":z": {"N": "0"}},
            ConsistentRead=True,
        )
        client.query(
            TableName=LikeRead.Meta.table_name,
            KeyConditionExpression="user_id = :u AND read_key > :k",
            ExpressionAttributeValues={":u": {"S": author_id}, ":k": {"S": "0"}},
            ConsistentRead=True,
            ScanIndexForward=False,
            Limit=102,
        )
        raw_badge_query(client, author_id)

    timed(floor_call, 3)  # warm-up
    floor, samples = [], []
    for _ in range(INBOX_REPEAT):  # interleaved, so load on the machine hits both alike
        floor += timed(floor_call, 1)
        samples += timed(lambda: api.get("/api/notifications/", {"limit": 100}), 1)
    inbox_units = measured(lambda: api.get("/api/notifications/", {"limit": 100}))[1:]
    print(row("GET /api/notifications/ (100 unread)", samples, floor, capacity=inbox_units))
    print(row("  floor: 3 Queries (unread LSI, read, counts LSI)", floor, capacity=measured(floor_call)[1:]))


def bench_mark_read(client) -> None:
    from actions.comments import comment_create
    from actions.likes import like_add
    from notifications import services as notification_services
    from project.dynamo import wire

    print("== mark read of 50 notifications (BatchGet + 2 TransactWriteItems)")
    author, *likers = make_users("reader", 1 + MARK_READ_REPEAT + 1)
    author_id = str(author.pk)
    comment_ids = [comment_create(author_id=author_id, body=f"c{n}").comment_id for n in range(50)]

    def like_all(liker):
        for comment_id in comment_ids:
            like_add(comment_id=comment_id, user_id=str(liker.pk))

    # Warm-up run, recording the calls the service makes: the floor replays them raw.
    like_all(likers[-1])
    recorded = []
    real = wire.make_api_call

    def recording(self, operation_name, api_params):
        recorded.append((operation_name, api_params))
        return real(self, operation_name, api_params)

    with mock.patch.object(wire, "make_api_call", recording):
        assert notification_services.like_notifications_mark_read(user_id=author_id, comment_ids=comment_ids) == 50
    shapes = [
        f"{name}({len(params['TransactItems'])})" if name == "TransactWriteItems" else name for name, params in recorded
    ]
    print("   calls:", ", ".join(shapes))

    def mentions(expression, placeholder):
        return re.search(re.escape(placeholder) + r"(?![0-9])", expression) is not None

    def strip_conditions(params):
        items = []
        for item in params["TransactItems"]:
            ((kind, body),) = item.items()
            body = {k: v for k, v in body.items() if k != "ConditionExpression"}
            used = str(body.get("UpdateExpression", ""))
            names = {k: v for k, v in body.get("ExpressionAttributeNames", {}).items() if mentions(used, k)}
            values = {k: v for k, v in body.get("ExpressionAttributeValues", {}).items() if mentions(used, k)}
            body.pop("ExpressionAttributeNames", None)
            body.pop("ExpressionAttributeValues", None)
            if names:
                body["ExpressionAttributeNames"] = names
            if values:
                body["ExpressionAttributeValues"] = values
            items.append({kind: body})
        return {"TransactItems": items}

    replay = [(name, strip_conditions(params) if name == "TransactWriteItems" else params) for name, params in recorded]

    def floor_call():
        for name, params in replay:
            if name == "TransactWriteItems":
                client.transact_write_items(**params)
            elif name == "BatchGetItem":
                client.batch_get_item(**params)

    floor, samples = [], []
    with capacity_meter() as floor_meter:
        floor += timed(floor_call, 1)  # units of one replay
    mark_units = (0.0, 0.0)
    for liker in likers[:MARK_READ_REPEAT]:
        floor += timed(floor_call, 1)  # (its unconditional resets come before the new likes)
        like_all(liker)
        with capacity_meter() as meter:
            started = time.perf_counter()
            marked = notification_services.like_notifications_mark_read(user_id=author_id, comment_ids=comment_ids)
            samples.append(time.perf_counter() - started)
        mark_units = (meter.read, meter.write)
        assert marked == 50
    print(row("like_notifications_mark_read, 50 comments", samples, floor, capacity=mark_units))
    print(row("  floor: the same calls, raw", floor, capacity=(floor_meter.read, floor_meter.write)))


def raw_badge_query(client, author_id: str) -> None:
    """The badge's floor: one strongly consistent Query on the `by_count` LSI."""
    from notifications.models import UnreadCount

    client.query(
        TableName=UnreadCount.Meta.table_name,
        IndexName="by_count",
        KeyConditionExpression="user_id = :u AND #c > :z",
        ExpressionAttributeNames={"#c": "count"},
        ExpressionAttributeValues={":u": {"S": author_id}, ":z": {"N": "0"}},
        ConsistentRead=True,
    )


def main() -> None:
    with bench_environment():
        from django.conf import settings

        from project.dynamo import clients as dynamo

        settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
        client = dynamo.client()
        started = time.perf_counter()
        bench_unread_count(client)
        bench_inbox(client)
        bench_mark_read(client)
        print(f"(total {time.perf_counter() - started:.0f}s)")


if __name__ == "__main__":
    main()
