"""Likes: throughput and latency of the like service and of `PUT /api/comments/<id>/like/`
served by gunicorn as `make run` serves it (its own process; a new connection per like,
and one keep-alive connection) beside the raw DynamoDB floor, the fold lag from a like's
answer to its author's badge (the fold runs once the answer is sent), comment-read
latency with 10^2 vs 10^5 likes on the comment, and a like storm on one hot comment vs
the same likes spread over 32 comments under AWS's transaction conflict rules
(project/testing/aws_conflicts.py), with fold lag, given-up likes and the write
capacity units of a like and of its fold, and how fast one folder drains a hot comment's backlog.

    .venv/bin/python bench/likes.py [--likes 400] [--big 100000] [--storm 640] [--only-storm]
                                    [--skip-storm] [--only-backlog]
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import http.client
import json
import os
import random
import tempfile
import time
import uuid
from pathlib import Path
from unittest import mock

# A file, not :memory:: the HTTP server's process must see the users and tokens made here.
os.environ.setdefault("DATABASE_URL", f"sqlite:///{tempfile.mkdtemp(prefix='bench-likes-')}/db.sqlite3")

from _like_storm import fold_throughput, hot_vs_spread
from _setup import bench_environment, percentiles, row, timed

from project.dynamo import clients as dynamo
from project.testing.harness import gunicorn_served, served_environment

TEMPLATE_USER = "template-liker-0f1e2d3c"
WARM_UP = 10  # HTTP likes before those measured


def capture_like_transaction(*, comment_id: str, user_id: str = TEMPLATE_USER) -> dict:
    """The exact TransactWriteItems request `like_add` sends (like row, one count shard,
    the like's event); the fold is not part of it (it runs after the answer)."""
    from actions.likes import like_add
    from project.dynamo import wire

    captured = []
    real = wire.make_api_call

    def spy(self, operation_name, api_params):
        if operation_name == "TransactWriteItems":
            captured.append(copy.deepcopy(api_params))
        return real(self, operation_name, api_params)

    with mock.patch.object(wire, "make_api_call", spy):
        like_add(comment_id=comment_id, user_id=user_id)
    return {"TransactItems": captured[0]["TransactItems"], "comment_id": comment_id}


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
    parser.add_argument("--storm", type=int, default=640, help="likes in each storm (hot vs spread)")
    parser.add_argument("--only-storm", action="store_true", help="run only the hot-vs-spread storm")
    parser.add_argument("--skip-storm", action="store_true", help="skip the hot-vs-spread storm")
    parser.add_argument("--only-backlog", action="store_true", help="run only the folder's backlog throughput")
    options = parser.parse_args()

    with bench_environment():
        if options.only_backlog:
            print(f"  {fold_throughput(author_id='backlog-author', repeat=5)}")
            return
        if not options.skip_storm:
            hot_vs_spread(options)
        if not options.only_storm:
            single_likes(options)


@contextlib.contextmanager
def http_server():
    """The site served as `make run` serves it: gunicorn (`gunicorn -c config/gunicorn.py`, one
    worker process, production settings over plain HTTP on the loopback address, write limits
    off) in its own process, on a free port, against the bench's DynamoDB Local tables and its
    SQLite file (the users and tokens made here). The fold after the answer runs in that
    process, as in production. Yields the port."""
    from project.dynamo import local as dynamo_local
    from social.models import Comment

    folder = Path(tempfile.mkdtemp(prefix="bench-likes-web-"))
    port = dynamo_local.free_port()
    env = served_environment(
        dynamodb_host=Comment.Meta.host,
        table_prefix=Comment.Meta.table_name[: -len("comments")],
        database_url=os.environ["DATABASE_URL"],
        RATE_LIMITS_ENABLED="False",
        WEB_CONCURRENCY="1",
        PROMETHEUS_MULTIPROC_DIR=str(folder / "prometheus"),
        HOST="127.0.0.1",
        PORT=str(port),
        LOG_LEVEL="WARNING",
    )
    with gunicorn_served(env=env, port=port, log_path=folder / "gunicorn.log", stop_seconds=30):
        yield port


def http_healthz(*, port: int, repeat: int, keep_alive: bool) -> list[float]:
    """GET /healthz (answered by the first middleware, no DynamoDB, no database): the round
    trip through gunicorn and Django's request handling that every request pays."""
    samples = []
    connection = http.client.HTTPConnection("127.0.0.1", port)
    for _ in range(repeat):
        if not keep_alive:
            connection = http.client.HTTPConnection("127.0.0.1", port)
        started = time.perf_counter()
        connection.request("GET", "/healthz")
        answer = connection.getresponse()
        answer.read()
        samples.append(time.perf_counter() - started)
        assert answer.status == 200
        if not keep_alive:
            connection.close()
    connection.close()
    return samples


def http_likes(
    *, port: int, token: str, comments: list[str], authors: dict[str, str], floor, keep_alive: bool
) -> tuple[list[float], list[float], list[float]]:
    """PUT each comment's like over HTTP, one at a time: on a new connection each, or all on one
    keep-alive connection (what a browser does); then wait for the author's badge to count it,
    and for the fold to finish, so each like meets a quiet site. The floor's round trips run
    right before each like (the same load). Returns (answer latencies, fold lags, floor
    latencies). Each comment has an author of its own, so the badge polled stays one item.
    The like commits in the server's process, where this bench cannot time it:
    the lag runs from the answer's arrival (a little after the commit) to the badge showing it."""
    from notifications import selectors
    from notifications.models import LikeEvent

    latencies, lags, floors = [], [], []
    connection = http.client.HTTPConnection("127.0.0.1", port)
    for comment_id in comments:
        floors += timed(floor, 1)
        if not keep_alive:
            connection = http.client.HTTPConnection("127.0.0.1", port)
        started = time.perf_counter()
        connection.request("PUT", f"/api/comments/{comment_id}/like/", headers={"Authorization": f"Token {token}"})
        answer = connection.getresponse()
        body = answer.read()
        answered = time.perf_counter()
        latencies.append(answered - started)
        assert answer.status == 200, body
        if not keep_alive:
            connection.close()
        while selectors.unread_count(user_id=authors[comment_id]) < 1:
            time.sleep(0.002)
        lags.append(time.perf_counter() - answered)
        while list(LikeEvent.query(comment_id, limit=1)):  # the fold's last step done
            time.sleep(0.002)
    connection.close()
    return latencies, lags, floors


def single_likes(options) -> None:
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from actions.comments import comment_create
    from actions.likes import like_add
    from social import selectors

    client = dynamo.client()
    author = get_user_model().objects.create_user(username="author", password="x")
    liker = get_user_model().objects.create_user(username="liker", password="x")
    token = Token.objects.create(user=liker)
    n = options.likes
    comments = [comment_create(author_id=str(author.pk), body=f"c{i}").comment_id for i in range(n)]
    # The HTTP likes' comments, each by an author of its own (whose badge the lag waits for).
    get_user_model().objects.bulk_create(
        get_user_model()(username=f"http-author-{i}", password="!") for i in range(2 * n + WARM_UP)
    )
    authors = {
        comment_create(author_id=str(pk), body=f"h{pk}").comment_id: str(pk)
        for pk in get_user_model().objects.filter(username__startswith="http-author-").values_list("pk", flat=True)
    }
    comments += list(authors)  # the floor likes only the first n: no events of its own on these
    users = iter(str(uuid.uuid4()) for _ in range(10 * n))

    print(f"Likes: {n} per method, each a new (comment, user) pair, DynamoDB Local")
    template = capture_like_transaction(comment_id=comments[0])
    print(f"  a like is one TransactWriteItems of {len(template['TransactItems'])} actions")
    floor_tx = timed(
        lambda: raw_like_transaction(client, template, comment_id=random.choice(comments[:n]), user_id=next(users)), n
    )
    floor_all = timed(
        lambda: raw_like_roundtrips(client, template, comment_id=random.choice(comments[:n]), user_id=next(users)), n
    )
    from django.test import override_settings

    with override_settings(LIKE_FOLD_AFTER_RESPONSE=False):  # outside a request it would fold inline
        service = timed(lambda: like_add(comment_id=random.choice(comments[:n]), user_id=next(users)), n)

    def floor_round():
        raw_like_roundtrips(client, template, comment_id=random.choice(comments[:n]), user_id=next(users))

    http_runs = {}
    with http_server() as port:
        # Not measured: the worker's first likes and folds (imports, connections) on their own comments.
        http_likes(
            port=port, token=token.key, comments=comments[3 * n :], authors=authors, floor=floor_round,
            keep_alive=True,
        )  # fmt: skip
        for keep_alive, chosen in ((False, comments[n : 2 * n]), (True, comments[2 * n : 3 * n])):
            http_runs[keep_alive] = http_likes(
                port=port, token=token.key, comments=chosen, authors=authors, floor=floor_round,
                keep_alive=keep_alive,
            )  # fmt: skip
        healthz = {keep_alive: http_healthz(port=port, repeat=n, keep_alive=keep_alive) for keep_alive in (False, True)}
    print(row("floor: raw transact_write_items", floor_tx))
    print(row("floor: raw get + transact + query", floor_all, floor_tx))
    print(row("like_add() service, in this process (no fold)", service, floor_tx))
    floor_p50 = sorted(floor_all)[n // 2]
    print(f"  service p50 / round-trip floor p50: {sorted(service)[n // 2] / floor_p50:.2f}x")
    print("  HTTP: gunicorn -c config/gunicorn.py in its own process, 1 worker, DEBUG=False, fold after the answer;")
    print("  (*) each HTTP like right after one floor round, on a quiet site")
    for keep_alive, label in ((False, "a new connection per like"), (True, "one keep-alive connection")):
        http, lags, http_floor = http_runs[keep_alive]
        print(f"  {label}:")
        print(row("  floor: raw get + transact + query (*)", http_floor, floor_tx))
        print(row("  PUT .../like/ over HTTP (*)", http, floor_tx))
        print(row("  GET /healthz over HTTP (the server's own)", healthz[keep_alive]))
        print(
            f"    HTTP p50 / round-trip floor p50 beside it: {sorted(http)[n // 2] / sorted(http_floor)[n // 2]:.2f}x"
        )
        lag = percentiles(lags)
        print(
            f"    fold lag, answer received -> author's badge shows it (the commit is a little earlier; "
            f"it happens in the server): p50 {lag['p50']:.1f} ms  p95 {sorted(lags)[int(0.95 * len(lags))] * 1000:.1f} ms  "
            f"max {max(lags) * 1000:.1f} ms"
        )

    print(f"\nComment read (GET one comment with count and the viewer's like state), {n} reads each")
    small = comment_create(author_id=str(author.pk), body="small").comment_id
    big = comment_create(author_id=str(author.pk), body="big").comment_id
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
