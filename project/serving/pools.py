"""Every thread pool of a process: named tiers sized from one budget (POOL_THREADS), in one place.

Code that hands work to other threads (a timeline page's day shards read at once, the like
fold's writes after its commit) calls `pool(<tier>)` at the moment it submits, never keeps
a pool of its own:

- `reads` (level 1, 5/8 of the budget): DynamoDB calls a caller fans out and waits for: a
  timeline page's shards, counter values, the inbox's badge and block list, a like's count
  against its limit, the fold's block list, a rollup's partitions.
- `writes` (level 1, 2/8): the like fold's writes after its commit, apart from `reads` so
  that a like storm's writes never hold up a page's reads.
- `finish` (level 2, 1/8): the fold's later steps, which wait on its `writes`.

With the default budget of 32: 20, 8 and 4 threads; each tier has at least one, so a
smaller budget than 3 still gives 3. A pool starts its threads as work comes, up to its
size: the threads of a process are gunicorn's (`WEB_THREADS`, config/gunicorn.py), at most
POOL_THREADS of these, and a few single-purpose ones (the usage flusher, the body deadlines).

**A task may submit only to a tier of a lower level** (`TierOrderError` otherwise). A task
that waits on tasks of its own pool deadlocks once all of that pool's threads wait so; when
tasks wait only on lower tiers (and DynamoDB), the lowest tier's tasks wait on no task and
finish, so those of the tier above finish, and so on up: nesting cannot deadlock, whatever
the sizes (a test runs the fold with one thread per tier). A thread outside the pools (a request, a worker's
loop) may submit to any tier.

**Context**: a task runs in a copy of its submitter's context variables, so the DynamoDB
calls it makes are charged to the request or worker that handed it over
(project/operations/usage.py). Tasks touch DynamoDB only, not the ORM: a pool thread's
database connection would never be closed (Django closes a request thread's at its end).

**Lifetime**: a pool is made by its first task, so a gunicorn master that loaded the
application (`preload_app`) holds none; a process forked with pools forgets them in the
child (the threads stayed in the parent) and makes new ones on first use. At exit
(`pools_shutdown`, run before Python joins pool threads, and by gunicorn's `worker_exit`
hook) the tiers close from the highest level down, so a closing tier's tasks can still hand
work to the tiers below, and every queued and running task gets SHUTDOWN_SECONDS (all tiers
together) to finish. Queued tasks still waiting then are cancelled: what they would have
written stays undone as a crash would leave it, which every write path here completes later
(the fold's events stay pending until a fold deletes them); a task still running ends on
its own (its DynamoDB calls have timeouts), and Python waits for it before the process ends.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextvars import copy_context
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from django.conf import settings

if TYPE_CHECKING:
    from collections.abc import Callable

logger = logging.getLogger(__name__)

T = TypeVar("T")

READS = "reads"
WRITES = "writes"
FINISH = "finish"
SHUTDOWN_SECONDS = 5.0  # well within a gunicorn worker's graceful stop (WEB_GRACEFUL_TIMEOUT, 20 s)


@dataclass(frozen=True)
class Tier:
    name: str
    level: int  # its tasks may submit only to tiers of a lower level
    eighths: int  # its share of POOL_THREADS


# Highest level first: the order they close in.
TIERS = (Tier(FINISH, level=2, eighths=1), Tier(READS, level=1, eighths=5), Tier(WRITES, level=1, eighths=2))
_TIER = {tier.name: tier for tier in TIERS}


class TierOrderError(RuntimeError):
    """A task submitted work to its own tier or one above it: a deadlock waiting to happen."""


def tier_threads(name: str) -> int:
    """The size of tier `name` under the current POOL_THREADS (at least 1)."""
    budget = int(settings.POOL_THREADS)
    if name == READS:
        return max(1, budget - _share(FINISH, budget) - _share(WRITES, budget))
    return _share(name, budget)


def _share(name: str, budget: int) -> int:
    return max(1, budget * _TIER[name].eighths // 8)


_running = threading.local()  # .tier: the Tier whose pool this thread belongs to (unset: none)


def _enter(tier: Tier) -> None:
    _running.tier = tier


class TierPool(ThreadPoolExecutor):
    """One tier's pool: tasks run in their submitter's context; submitting upward raises."""

    def __init__(self, tier: Tier, threads: int) -> None:
        super().__init__(
            max_workers=threads, thread_name_prefix=f"pool-{tier.name}", initializer=_enter, initargs=(tier,)
        )
        self.tier = tier
        self._unfinished: set[Future[Any]] = set()
        self._unfinished_lock = threading.Lock()

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        here: Tier | None = getattr(_running, "tier", None)
        if here is not None and here.level <= self.tier.level:
            raise TierOrderError(
                f"a task of pool tier {here.name!r} submitted to {self.tier.name!r}: only lower tiers may be waited on"
            )
        future = super().submit(partial(copy_context().run, fn), *args, **kwargs)
        with self._unfinished_lock:
            self._unfinished.add(future)
        future.add_done_callback(self._finished)
        return future

    def _finished(self, future: Future[Any]) -> None:
        with self._unfinished_lock:
            self._unfinished.discard(future)

    def unfinished(self) -> set[Future[Any]]:
        with self._unfinished_lock:
            return set(self._unfinished)


_lock = threading.Lock()
_pools: dict[str, TierPool] = {}


def pool(name: str) -> TierPool:
    """Tier `name`'s pool of this process, made on first use (READS, WRITES or FINISH)."""
    tier = _TIER[name]
    with _lock:
        found = _pools.get(name)
        if found is None:
            found = _pools[name] = TierPool(tier, tier_threads(name))
        return found


def pools_shutdown(*, timeout: float = SHUTDOWN_SECONDS) -> int:
    """Close every pool of the process, highest tier first, giving queued and running tasks up to
    `timeout` seconds in all; returns how many queued tasks were cancelled (not started in time).

    A closed tier takes no more tasks (a submit to it raises RuntimeError); a later `pool()`
    makes a new one (a test, or a command that goes on). Twice, or concurrently: the second
    finds nothing left to close.
    """
    deadline = time.monotonic() + timeout
    cancelled = 0
    for tier in TIERS:
        with _lock:
            closing = _pools.pop(tier.name, None)
        if closing is None:
            continue
        closing.shutdown(wait=False)  # no new tasks; the queued ones still run
        late = wait(closing.unfinished(), timeout=max(0.0, deadline - time.monotonic())).not_done
        if late:
            closing.shutdown(wait=False, cancel_futures=True)
            dropped = sum(1 for future in late if future.cancelled())
            cancelled += dropped
            logger.warning(
                "pool %s closed with %d task(s) cancelled and %d still running",
                tier.name,
                dropped,
                len(late) - dropped,
            )
    return cancelled


def _forget_after_fork() -> None:
    """In a forked child: the parent's pools' threads are not here; new pools are made on first use."""
    global _lock
    _lock = threading.Lock()
    _pools.clear()
    _running.tier = None


os.register_at_fork(after_in_child=_forget_after_fork)
# Python joins every pool thread at exit, after the functions registered this way (before
# `atexit`'s, so the usage flush there still counts what the last tasks did).
getattr(threading, "_register_atexit", atexit.register)(pools_shutdown)
