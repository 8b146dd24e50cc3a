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
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from unittest import mock

# A file, not :memory:: the HTTP server's process must see the users and tokens made here.
os.environ.setdefault("DATABASE_URL", f"sqlite:///{tempfile.mkdtemp(prefix='bench-likes-')}/db.sqlite3")

from _setup import bench_environment, percentiles, row, timed

from project import dynamo

TEMPLATE_USER = "template-liker-0f1e2d3c"
WARM_UP = 10  # HTTP likes before those measured


def capture_like_transaction(*, comment_id: str, user_id: str = TEMPLATE_USER) -> dict:
    """The exact TransactWriteItems request `like_add` sends (like row, one count shard,
    the like's event); the fold is not part of it (it runs after the answer)."""
    from botocore.client import BaseClient

    from actions.likes import like_add

    captured = []
    real = BaseClient._make_api_call

    def spy(self, operation_name, api_params):
        if operation_name == "TransactWriteItems":
            captured.append(copy.deepcopy(api_params))
        return real(self, operation_name, api_params)

    with mock.patch.object(BaseClient, "_make_api_call", spy):
        like_add(comment_id=comment_id, user_id=user_id)
    return {"TransactItems": captured[0]["TransactItems"], "comment_id": comment_id}


WRITES = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}


@contextlib.contextmanager
def capacity_meter():
    """Write units of likes (their TransactWriteItems) and of folds (every other write), and how
    many of each (a fold is counted by its BatchWriteItem deleting events)."""
    from botocore.client import BaseClient

    from notifications.models import LikeEvent

    real = BaseClient._make_api_call
    events_table = LikeEvent.Meta.table_name
    totals = {"like_wcu": 0.0, "likes": 0, "fold_wcu": 0.0, "folds": 0}
    lock = threading.Lock()

    def metered(self, operation_name, api_params):
        if operation_name not in WRITES:
            return real(self, operation_name, api_params)
        answer = real(self, operation_name, {**api_params, "ReturnConsumedCapacity": "TOTAL"})
        consumed = answer.get("ConsumedCapacity") or []
        units = sum(item.get("CapacityUnits", 0.0) for item in (consumed if isinstance(consumed, list) else [consumed]))
        like = operation_name == "TransactWriteItems"
        fold_end = operation_name == "BatchWriteItem" and events_table in api_params.get("RequestItems", {})
        with lock:
            totals["like_wcu" if like else "fold_wcu"] += units
            totals["likes"] += like
            totals["folds"] += fold_end
        return answer

    with mock.patch.object(BaseClient, "_make_api_call", metered):
        yield totals


@contextlib.contextmanager
def folder_process():
    """`manage.py fold_like_events --loop` in its own process against the bench's DynamoDB Local,
    as in production (a worker beside the web processes)."""
    from notifications.models import LikeEvent

    prefix = LikeEvent.Meta.table_name[: -len("like_events")]
    env = {
        **os.environ,
        "DYNAMODB_HOST": LikeEvent.Meta.host,
        "DYNAMODB_TABLE_PREFIX": prefix,
        "DATABASE_URL": "sqlite:///:memory:",
        "LOG_LEVEL": "WARNING",
    }
    manage = Path(__file__).resolve().parent.parent / "manage.py"
    process = subprocess.Popen([sys.executable, str(manage), "fold_like_events", "--loop"], env=env)
    try:
        yield process
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)


def storm(*, comment_ids: list[str], author_id: str, likes: int, people: int = 32) -> dict:
    """`likes` likes from `people` threads, round-robin over `comment_ids`, each by a new user,
    under the modelled AWS conflict rules, with `fold_like_events --loop` running in its own
    process. Fold lag: from a like's answer to the moment the author's notifications count
    that many likes (polled every 20 ms). Returns rate, latencies, lags, given up, capacity."""
    from django.core.signals import request_finished

    from actions.likes import like_add
    from notifications.models import LikeUnread
    from project.after_response import AfterResponseMiddleware
    from project.testing.aws_conflicts import aws_conflict_model

    latencies, failures, answered = [], [], []
    seen: list[tuple[float, int]] = []
    stop = threading.Event()

    def monitor():
        keys = [(author_id, comment_id) for comment_id in comment_ids]
        while True:
            total = sum(int(item.num_likes) for item in LikeUnread.batch_get(keys, consistent_read=True))
            seen.append((time.perf_counter(), total))
            if stop.is_set() and total >= likes - len(failures):
                return
            time.sleep(0.02)

    def person(index: int) -> None:
        for n in range(index, likes, people):
            comment_id = comment_ids[n % len(comment_ids)]
            started = time.perf_counter()
            try:
                # As a web request: answered when like_add returns, its fold run after that.
                AfterResponseMiddleware(
                    lambda request, comment_id=comment_id: like_add(
                        comment_id=comment_id, user_id=f"storm-{uuid.uuid4().hex[:10]}"
                    )
                )(None)
                answered.append(time.perf_counter())
            except Exception as error:
                failures.append(type(error).__name__)
            latencies.append(time.perf_counter() - started)
            request_finished.send(sender=None)

    watcher = threading.Thread(target=monitor, daemon=True)
    with folder_process(), aws_conflict_model() as conflicts, capacity_meter() as capacity:
        watcher.start()
        started = time.perf_counter()
        with ThreadPoolExecutor(people) as pool:
            list(pool.map(person, range(people)))
        elapsed = time.perf_counter() - started
        stop.set()
        watcher.join(timeout=120)
    lags = []
    answered.sort()
    for k, done_at in enumerate(answered, start=1):
        shown_at = next((at for at, total in seen if total >= k and at >= done_at), None)
        if shown_at is None:  # counted before this answer returned (the in-request fold)
            shown_at = done_at
        lags.append(shown_at - done_at)
    return {
        "rate": likes / elapsed,
        "latency": percentiles(latencies),
        "lag": percentiles(lags),
        "folded": len(answered),
        "failures": failures,
        "conflicts": conflicts,
        "capacity": capacity,
    }


def fold_cost(*, author_id: str) -> str:
    """Write capacity of folding 45 likes of one comment (one fold), per like."""
    from django.test import override_settings

    from actions.comments import comment_create
    from actions.likes import like_add
    from notifications import like_fold

    comment_id = comment_create(author_id=author_id, body="fold cost").comment_id
    with override_settings(LIKE_FOLD_AFTER_RESPONSE=False):
        for n in range(like_fold.FOLD_EVENTS_MAX):
            like_add(comment_id=comment_id, user_id=f"fold-{n}")
    with capacity_meter() as capacity:
        folded = like_fold.like_events_fold(comment_id=comment_id)
    return (
        f"fold: {capacity['fold_wcu'] / folded:.1f} WCU per like as DynamoDB Local reports it "
        f"({capacity['folds']} fold(s) for {folded} likes)"
    )


def fold_throughput(*, author_id: str, events: int = 450, repeat: int = 3) -> str:
    """How fast one folder drains a hot comment's backlog (`events` likes of one comment, folded by
    `like_events_fold` in this process): what bounds a hot comment's fold lag. Best and median of `repeat`."""
    from django.test import override_settings

    from actions.comments import comment_create
    from actions.likes import like_add
    from notifications import like_fold

    rates = []
    for _ in range(repeat):
        comment_id = comment_create(author_id=author_id, body="backlog").comment_id
        with override_settings(LIKE_FOLD_AFTER_RESPONSE=False):
            for _ in range(events):
                like_add(comment_id=comment_id, user_id=f"backlog-{uuid.uuid4().hex[:10]}")
        started = time.perf_counter()
        folded = like_fold.like_events_fold(comment_id=comment_id)
        rates.append(folded / (time.perf_counter() - started))
        assert folded == events, folded
    rates.sort()
    return (
        f"folder throughput, a backlog of {events} likes on one comment: {rates[len(rates) // 2]:.0f} events/s "
        f"median, {rates[-1]:.0f} best of {repeat} ({like_fold.FOLD_EVENTS_MAX} a batch)"
    )


def print_storm(label: str, result: dict) -> None:
    capacity, latency, lag = result["capacity"], result["latency"], result["lag"]
    like_wcu = capacity["like_wcu"] / max(1, capacity["likes"])
    print(
        f"  {label:<28} {result['rate']:7.0f} likes/s  latency p50 {latency['p50']:6.1f} ms p99 {latency['p99']:7.1f} ms  "
        f"fold lag p50 {lag['p50']:6.0f} ms p99 {lag['p99']:6.0f} ms  given up {len(result['failures'])}"
    )
    print(
        f"  {'':<28} like {like_wcu:.1f} WCU per transaction attempt; fold "
        f"{capacity['fold_wcu'] / max(1, result['folded']):.1f} WCU per like; cancelled {result['conflicts'].cancelled} of {result['conflicts'].transactions} transactions"
    )


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


def hot_vs_spread(options) -> None:
    from django.contrib.auth import get_user_model

    from actions.comments import comment_create

    author = get_user_model().objects.create_user(username="storm-author", password="x")
    print(f"Like storm, 32 people, {options.storm} likes, modelled AWS conflict rules, folder running")
    hot = [comment_create(author_id=str(author.pk), body="hot").comment_id]
    spread = [comment_create(author_id=str(author.pk), body=f"s{i}").comment_id for i in range(32)]
    hot_result = storm(comment_ids=hot, author_id=str(author.pk), likes=options.storm)
    spread_result = storm(comment_ids=spread, author_id=str(author.pk), likes=options.storm)
    print_storm("one hot comment", hot_result)
    print_storm("spread over 32 comments", spread_result)
    print(f"  hot / spread: {hot_result['rate'] / spread_result['rate']:.2f}x")
    from notifications.models import LikeUnread
    from social.counters import LIKES, counter_key, counter_shard_count
    from social.models import Comment

    unread = LikeUnread.get(str(author.pk), hot[0], consistent_read=True)
    assert int(unread.num_likes) == options.storm - len(hot_result["failures"]), unread.num_likes
    shards = counter_shard_count(key=counter_key(kind=LIKES, object_id=hot[0]))
    carried = Comment.get(hot[0], consistent_read=True).like_shards
    print(
        f"  hot comment: notification counts {int(unread.num_likes)} likes; counter grew to {shards} shards "
        f"(the comment, which the next like reads, carries {carried})"
    )
    print(f"  {fold_cost(author_id=str(author.pk))}")
    print(f"  {fold_throughput(author_id=str(author.pk))}\n")


@contextlib.contextmanager
def http_server():
    """The site served as `make run` serves it: gunicorn (`gunicorn -c gunicorn.conf.py`, one
    worker process, production settings over plain HTTP on the loopback address, write limits
    off) in its own process, on a free port, against the bench's DynamoDB Local tables and its
    SQLite file (the users and tokens made here). The fold after the answer runs in that
    process, as in production. Yields the port."""
    from project import dynamo_local
    from social.models import Comment

    root = Path(__file__).resolve().parent.parent
    folder = Path(tempfile.mkdtemp(prefix="bench-likes-web-"))
    port = dynamo_local.free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DEBUG", "SECRET_KEY", "SECURE_"))},
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "ENV_FILE": "/dev/null",
        "DJANGO_SETTINGS_MODULE": "project.settings",
        "DEBUG": "False",
        "LOCAL_PLAIN_HTTP": "True",
        "RATE_LIMITS_ENABLED": "False",
        "WEB_CONCURRENCY": "1",
        "SECRET_KEY": "bench-" + uuid.uuid4().hex * 2,
        "DATABASE_URL": os.environ["DATABASE_URL"],
        "DYNAMODB_HOST": Comment.Meta.host,
        "DYNAMODB_TABLE_PREFIX": Comment.Meta.table_name[: -len("comments")],
        "PROMETHEUS_MULTIPROC_DIR": str(folder / "prometheus"),
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "WEB_ACCESS_LOG": "",
        "LOG_LEVEL": "WARNING",
    }
    log = open(folder / "gunicorn.log", "w")  # noqa: SIM115
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "-c", "gunicorn.conf.py"],
        cwd=root,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not healthy(port):
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"gunicorn did not start: see {folder / 'gunicorn.log'}")
            time.sleep(0.1)
        yield port
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def healthy(port: int) -> bool:
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        connection.request("GET", "/healthz")
        return connection.getresponse().status == 200
    except OSError:
        return False


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
    print("  HTTP: gunicorn -c gunicorn.conf.py in its own process, 1 worker, DEBUG=False, fold after the answer;")
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
