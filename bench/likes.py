"""Likes: throughput and latency of the like service and endpoint beside the raw
DynamoDB floor, and comment-read latency with 10^2 vs 10^5 likes on the comment.

    .venv/bin/python bench/likes.py [--likes 400] [--big 100000]
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import time
import uuid
from unittest import mock

from _setup import bench_environment, row, timed

from project import dynamo

TEMPLATE_USER = "template-liker-0f1e2d3c"


def capture_like_transaction(*, comment_id: str, user_id: str = TEMPLATE_USER) -> dict:
    """The exact TransactWriteItems request `like_add` sends (comment check, like row,
    count shard, due flag, the author's unread notification and badge)."""
    from botocore.client import BaseClient

    from social import services

    captured = {}
    real = BaseClient._make_api_call

    def spy(self, operation_name, api_params):
        if operation_name == "TransactWriteItems":
            captured.update(copy.deepcopy(api_params))
        return real(self, operation_name, api_params)

    with mock.patch.object(BaseClient, "_make_api_call", spy):
        services.like_add(comment_id=comment_id, user_id=user_id)
    return {"TransactItems": captured["TransactItems"], "comment_id": comment_id}


def raw_like_transaction(client, template: dict, *, comment_id: str, user_id: str) -> None:
    """The same request for another (comment, liker), sent raw with botocore: the floor."""
    text = json.dumps(template).replace(TEMPLATE_USER, user_id).replace(template["comment_id"], comment_id)
    request = json.loads(text)
    client.transact_write_items(TransactItems=request["TransactItems"])


def raw_like_roundtrips(client, template: dict, *, comment_id: str, user_id: str) -> None:
    """Every round trip the like service makes, raw: get the comment, transact, read the count."""
    from social.models import Comment, CounterShard

    client.get_item(TableName=Comment.Meta.table_name, Key={"comment_id": {"S": comment_id}}, ConsistentRead=True)
    raw_like_transaction(client, template, comment_id=comment_id, user_id=user_id)
    client.query(
        TableName=CounterShard.Meta.table_name,
        KeyConditionExpression="counter_key = :k",
        ExpressionAttributeValues={":k": {"S": f"like#{comment_id}"}},
        ConsistentRead=True,
    )


def load_likes(comment_id: str, count: int) -> None:
    """Put `count` like rows and the matching count with BatchWriteItem (set-up, not measured)."""
    from social.counters import LIKES, counter_key
    from social.models import CounterShard, Like

    with Like.batch_write() as batch:
        for n in range(count):
            batch.save(Like(comment_id, f"bulk{n}"))
    CounterShard(counter_key(kind=LIKES, object_id=comment_id), 0, count=count).save()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--likes", type=int, default=400, help="likes measured per method")
    parser.add_argument("--big", type=int, default=100_000, help="likes on the big comment")
    options = parser.parse_args()

    with bench_environment():
        from django.contrib.auth import get_user_model
        from rest_framework.authtoken.models import Token
        from rest_framework.test import APIClient

        from social import selectors, services

        client = dynamo.client()
        author = get_user_model().objects.create_user(username="author", password="x")
        liker = get_user_model().objects.create_user(username="liker", password="x")
        token = Token.objects.create(user=liker)
        n = options.likes
        comments = [services.comment_create(author_id=str(author.pk), body=f"c{i}").comment_id for i in range(n)]
        users = iter(str(uuid.uuid4()) for _ in range(10 * n))

        print(f"Likes: {n} per method, each a new (comment, user) pair, one process, DynamoDB Local")
        template = capture_like_transaction(comment_id=comments[0])
        print(f"  a like is one TransactWriteItems of {len(template['TransactItems'])} actions")
        floor_tx = timed(
            lambda: raw_like_transaction(client, template, comment_id=random.choice(comments), user_id=next(users)), n
        )
        floor_all = timed(
            lambda: raw_like_roundtrips(client, template, comment_id=random.choice(comments), user_id=next(users)), n
        )
        service = timed(lambda: services.like_add(comment_id=random.choice(comments), user_id=next(users)), n)
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        order = iter(comments)

        def http_like():
            answer = api.put(f"/api/comments/{next(order)}/like/")
            assert answer.status_code == 200, answer.content

        http = timed(http_like, n)
        print(row("floor: raw transact_write_items", floor_tx))
        print(row("floor: raw get + transact + query", floor_all, floor_tx))
        print(row("like_add() service", service, floor_tx))
        print(row("PUT /api/comments/<id>/like/ (in-process)", http, floor_tx))
        print(f"  service p50 / floor(all round trips) p50: {sorted(service)[n // 2] / sorted(floor_all)[n // 2]:.2f}x")

        print(f"\nComment read (GET one comment with count and the viewer's like state), {n} reads each")
        small = services.comment_create(author_id=str(author.pk), body="small").comment_id
        big = services.comment_create(author_id=str(author.pk), body="big").comment_id
        started = time.perf_counter()
        load_likes(small, 100)
        load_likes(big, options.big)
        print(f"  (loaded {options.big + 100} like rows in {time.perf_counter() - started:.1f}s)")
        viewer = str(liker.pk)
        small_reads, big_reads = [], []
        timed(lambda: selectors.comment_get(comment_id=small, viewer_id=viewer), 50)  # warm-up
        for _ in range(n):  # interleaved, so background load hits both alike
            small_reads += timed(lambda: selectors.comment_get(comment_id=small, viewer_id=viewer), 1)
            big_reads += timed(lambda: selectors.comment_get(comment_id=big, viewer_id=viewer), 1)
        assert selectors.comment_get(comment_id=big, viewer_id=viewer).like_count == options.big
        floor_read = timed(
            lambda: (
                client.get_item(TableName=f"{dynamo.table_name('comments')}", Key={"comment_id": {"S": big}}),
                client.query(
                    TableName=dynamo.table_name("counters"),
                    KeyConditionExpression="counter_key = :k",
                    ExpressionAttributeValues={":k": {"S": f"like#{big}"}},
                    ConsistentRead=True,
                ),
                client.get_item(
                    TableName=dynamo.table_name("likes"), Key={"comment_id": {"S": big}, "user_id": {"S": viewer}}
                ),
            ),
            n,
        )
        print(row("floor: raw get + query + get", floor_read))
        print(row("comment_get, 10^2 likes", small_reads, floor_read))
        print(row(f"comment_get, {options.big:,} likes", big_reads, floor_read))
        ratio = sorted(big_reads)[n // 2] / sorted(small_reads)[n // 2]
        print(f"  p50 ratio {options.big:,} likes / 100 likes: {ratio:.2f}x (flat = about 1)")


if __name__ == "__main__":
    main()
