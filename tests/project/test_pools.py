"""The process's thread pools (project/serving/pools.py): tiers sized from POOL_THREADS, a task submits
only to lower tiers, tasks run in their submitter's context, nested use finishes with one
thread per tier, shutdown waits for queued and running work (up to its bound), and a forked
child makes pools of its own."""

import os
import subprocess
import sys
import threading
from concurrent.futures import CancelledError
from contextvars import ContextVar
from pathlib import Path

import pytest

from actions.likes import like_add
from notifications import like_fold
from notifications.like_fold import batches as fold_batches
from notifications.models import LikeEvent, LikeUnread
from project.serving import pools
from project.serving.pools import FINISH, READS, WRITES, TierOrderError, pool, pools_shutdown, tier_threads
from project.testing.harness import in_threads, wait_for
from social.models import Like
from tests.notifications.helpers import post, uid

ROOT = Path(__file__).resolve().parents[2]
WAIT = 300.0  # a hang guard only: every wait below ends on an event, never on time


@pytest.fixture
def one_thread_each(settings):
    """POOL_THREADS=1: one thread per tier (pools made anew under it, and after the test)."""
    pools_shutdown()
    settings.POOL_THREADS = 1
    yield
    pools_shutdown()


@pytest.fixture(autouse=True)
def fresh_pools():
    pools_shutdown()
    yield
    pools_shutdown()


def test_the_budget_is_split_by_tier_with_at_least_one_thread_each(settings):
    settings.POOL_THREADS = 32
    assert (tier_threads(READS), tier_threads(WRITES), tier_threads(FINISH)) == (20, 8, 4)
    settings.POOL_THREADS = 1
    assert (tier_threads(READS), tier_threads(WRITES), tier_threads(FINISH)) == (1, 1, 1)
    assert pool(READS)._max_workers == 1


def test_a_task_may_submit_only_to_a_lower_tier():
    def submit_to(tier: str) -> str:
        pool(tier).submit(lambda: None).result(WAIT)
        return tier

    assert pool(FINISH).submit(submit_to, WRITES).result(WAIT) == WRITES
    assert pool(FINISH).submit(submit_to, READS).result(WAIT) == READS
    for outer, inner in [(WRITES, FINISH), (READS, FINISH), (WRITES, WRITES), (WRITES, READS), (FINISH, FINISH)]:
        with pytest.raises(TierOrderError):
            pool(outer).submit(submit_to, inner).result(WAIT)
    # map submits too
    with pytest.raises(TierOrderError):
        pool(READS).submit(lambda: list(pool(READS).map(str, range(2)))).result(WAIT)


def test_nested_tasks_finish_with_one_thread_per_tier(one_thread_each):
    """Outer tasks that each wait on several inner ones, more of both than threads."""

    def finish(n: int) -> list[int]:
        inner = [pool(WRITES).submit(lambda m=m: n * 10 + m) for m in range(3)]
        reads = list(pool(READS).map(lambda m: -m, range(3)))
        return [future.result() for future in inner] + reads

    outer = [pool(FINISH).submit(finish, n) for n in range(4)]
    assert [future.result(WAIT) for future in outer] == [[n * 10, n * 10 + 1, n * 10 + 2, 0, -1, -2] for n in range(4)]


@pytest.mark.django_db(transaction=True)
def test_the_like_fold_finishes_with_one_thread_per_tier(one_thread_each, make_user, settings, monkeypatch):
    """Overlapping batches (the next one commits while the last one's finisher waits on its
    writes), several writes per batch, three threads in all."""
    settings.LIKE_FOLD_AFTER_RESPONSE = False  # folded below, by one folder
    monkeypatch.setattr(fold_batches, "FOLD_EVENTS_MAX", 4)
    author = make_user("author")
    comment_id = post(author)
    likers = [str(4000 + n) for n in range(13)]
    for liker in likers:
        like_add(comment_id=comment_id, user_id=liker)
    [folded] = in_threads(lambda _: like_fold.like_events_fold(comment_id=comment_id), 1, seconds=WAIT)
    assert folded == 13
    assert int(LikeUnread.get(uid(author), comment_id, consistent_read=True).num_likes) == 13
    assert {row.user_id for row in Like.query(comment_id, consistent_read=True)} == set(likers)
    assert list(LikeEvent.query(comment_id, consistent_read=True)) == []


def test_a_task_runs_in_its_submitter_s_context():
    route: ContextVar[str] = ContextVar("route", default="(none)")

    def seen() -> tuple[str, str]:
        inner = pool(WRITES).submit(route.get).result(WAIT)
        route.set("changed in the task")  # its own copy: the submitter's value stays
        return route.get(), inner

    route.set("api-comment-like")
    assert pool(FINISH).submit(seen).result(WAIT) == ("changed in the task", "api-comment-like")
    assert route.get() == "api-comment-like"
    assert pool(READS).submit(route.get).result(WAIT) == "api-comment-like"


def test_shutdown_waits_for_running_and_queued_work(one_thread_each):
    release = threading.Event()
    started = threading.Event()
    ran: list[str] = []

    def running() -> None:
        started.set()
        release.wait(WAIT)
        ran.append("running")

    pool(WRITES).submit(running)
    queued = pool(WRITES).submit(ran.append, "queued")  # behind it: the tier has one thread
    started.wait(WAIT)
    closing = pools._pools[WRITES]
    finished: list[list[str]] = []
    shutdown = threading.Thread(target=lambda: (pools_shutdown(timeout=WAIT), finished.append(list(ran))))
    shutdown.start()
    wait_for(lambda: WRITES not in pools._pools, what="the shutdown began")
    assert shutdown.is_alive() and ran == []
    release.set()
    shutdown.join(WAIT)
    assert finished == [["running", "queued"]] and queued.done()
    assert pool(WRITES) is not closing


def test_shutdown_cancels_queued_work_past_its_bound(one_thread_each):
    release = threading.Event()
    started = threading.Event()

    def running() -> str:
        started.set()
        release.wait(WAIT)
        return "done"

    first = pool(FINISH).submit(running)
    queued = pool(FINISH).submit(lambda: "never")
    started.wait(WAIT)
    try:
        assert pools_shutdown(timeout=0) == 1
    finally:
        release.set()
    assert first.result(WAIT) == "done"  # a running task is never interrupted
    with pytest.raises(CancelledError):
        queued.result(WAIT)


def test_a_forked_child_makes_pools_of_its_own():
    parent = pool(READS)
    assert parent.submit(lambda: "parent").result(WAIT) == "parent"
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # the child: answer through the pipe, never return into pytest
        code = 1
        try:
            mine = pool(READS)
            answer = mine.submit(lambda: "child").result(WAIT)
            os.write(writing, f"{answer} {mine is not parent}".encode())
            code = 0
        finally:
            os._exit(code)
    os.close(writing)
    with os.fdopen(reading) as answers:
        answer = answers.read()
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert answer == "child True"
    assert pool(READS) is parent


EXITING = """
import os

import django

django.setup()
from project.serving.pools import FINISH, WRITES, pool


def say(line):
    os.write(1, f"{line}\\n".encode())  # one write: lines of threads never interleave (print writes twice)


def finish(n):
    pool(WRITES).submit(say, f"write {n}").result()
    say(f"finish {n}")


for n in range(3):
    pool(FINISH).submit(finish, n)
say("exiting")
"""


def test_a_process_that_exits_first_finishes_its_queued_work():
    """Three finishers queued behind one thread when the main thread ends: at exit the finish
    tier closes first and its tasks still hand their writes to the tier below."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DEBUG", "SECRET_KEY"))},
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "ENV_FILE": "/dev/null",
        "SECRET_KEY": "pools-exit-test-" + "x" * 40,
        "POOL_THREADS": "1",
    }
    done = subprocess.run(
        [sys.executable, "-c", EXITING], cwd=ROOT, env=env, capture_output=True, text=True, timeout=WAIT
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert sorted(done.stdout.splitlines()) == sorted(
        ["exiting", *[f"write {n}" for n in range(3)], *[f"finish {n}" for n in range(3)]]
    ), done.stdout + done.stderr[-3000:]
