"""The like storm of bench/likes.py: many people liking one hot comment vs the same likes
spread over 32 comments, under AWS's transaction conflict rules (project/testing/aws_conflicts.py),
with `fold_like_events --loop` in its own process; the fold's write units per like; how fast one
folder drains a hot comment's backlog. Run through `bench/likes.py` (`--only-storm`, `--only-backlog`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from unittest import mock

from _setup import percentiles

WRITES = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}


@contextlib.contextmanager
def capacity_meter():
    """Write units of likes (their TransactWriteItems) and of folds (every other write), and how
    many of each (a fold is counted by its BatchWriteItem deleting events)."""
    from notifications.models import LikeEvent
    from project.dynamo import wire

    real = wire.make_api_call
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

    with mock.patch.object(wire, "make_api_call", metered):
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
    from project.serving.after_response import AfterResponseMiddleware
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
        if shown_at is None:  # counted before the call returned: its fold runs after the answer, inside the call
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
        with override_settings(HOLD_FOR_REVIEW_ENABLED=False):  # the same body five times: held, else
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
