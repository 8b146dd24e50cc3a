"""Worker heartbeats, written by the polling workers themselves (docs/how-to/operate.md).

`Heartbeat` is what a worker's loop holds: `cycle_done()` after each pass and `pulse()`
from inside a long pass write the heartbeat item at most every WORKER_HEARTBEAT_SECONDS
(one 1-WCU put, plus the worker's bounded backlog measurement: see project.operations.backlog), so a
worker that polls every 0.2 s still costs one write per few seconds. `stop()` deletes it.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from datetime import UTC, datetime

from django.conf import settings

from project.clock import clock
from project.models import HEARTBEAT_KEPT_SECONDS, WorkerHeartbeat
from project.operations.backlog import Backlog

logger = logging.getLogger(__name__)


def heartbeat_write(
    *,
    worker: str,
    instance: str,
    started_at: float,
    now: float,
    cycle_at: float | None,
    cycle_seconds: float | None,
    backlog: Backlog | None,
    backlog_label: str = "",
) -> WorkerHeartbeat:
    """Put the heartbeat of one worker process (one PutItem, whole item, no condition).

    Twice or concurrently: the last put wins, and only this process writes its own item
    (the key holds the host and pid). Dies half way: there is one write, so the item is
    the previous or the new heartbeat, never a mixture.
    """
    host, _, pid = instance.rpartition(":")
    item = WorkerHeartbeat(
        worker,
        instance,
        host=host,
        pid=int(pid),
        started_at=started_at,
        beat_at=now,
        cycle_at=cycle_at,
        cycle_seconds=cycle_seconds,
        backlog_label=backlog.label if backlog else backlog_label,
        backlog=backlog.count if backlog else None,
        backlog_capped=bool(backlog and backlog.capped),
        lag_seconds=max(0.0, now - backlog.oldest_at) if backlog and backlog.oldest_at is not None else None,
        expires_at=datetime.fromtimestamp(now + HEARTBEAT_KEPT_SECONDS, tz=UTC),
    )
    item.save()
    return item


def heartbeat_delete(*, worker: str, instance: str) -> None:
    """Delete a process's heartbeat (it stopped cleanly): one DeleteItem of the process's own item.

    Twice: the second deletes nothing. Concurrently with a pulse of the same process (a
    dispatcher thread): the pulse may put it back; it then expires with its TTL and is
    reported stale meanwhile. Dies before it: the item stays until its TTL, reported stale.
    """
    WorkerHeartbeat(worker, instance).delete()


def this_instance() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class Heartbeat:
    """The heartbeat of the worker loop running in this process (thread-safe).

    A failed write (DynamoDB unreachable) is logged and retried at the next pulse: the
    worker keeps working, and the heartbeat goes stale, which is what an operator should see.
    """

    def __init__(self, *, worker: str, backlog: Callable[[], Backlog] | None = None, label: str = "") -> None:
        self.worker = worker
        self.instance = this_instance()
        self._measure = backlog
        self._label = label
        self._lock = threading.Lock()
        self._started_at = clock.now()
        self._written_at: float | None = None
        self._cycle_at: float | None = None
        self._cycle_seconds: float | None = None

    def cycle_done(self, *, started: float, finished: float) -> None:
        """A pass of the loop ended (ran from `started` to `finished`, epoch seconds)."""
        with self._lock:
            self._cycle_at, self._cycle_seconds = finished, max(0.0, finished - started)
        self.pulse()

    def pulse(self) -> None:
        """Write the heartbeat if the last one is WORKER_HEARTBEAT_SECONDS old (else nothing)."""
        now = clock.now()
        with self._lock:
            if self._written_at is not None and now - self._written_at < settings.WORKER_HEARTBEAT_SECONDS:
                return
            self._written_at = now  # one writer at a time; the others return at once
            cycle_at, cycle_seconds = self._cycle_at, self._cycle_seconds
        backlog = None
        if self._measure is not None:
            try:
                backlog = self._measure()
            except Exception:
                logger.warning("%s: measuring the backlog failed", self.worker, exc_info=True)
        try:
            heartbeat_write(
                worker=self.worker,
                instance=self.instance,
                started_at=self._started_at,
                now=now,
                cycle_at=cycle_at,
                cycle_seconds=cycle_seconds,
                backlog=backlog,
                backlog_label=self._label,
            )
        except Exception as error:
            logger.warning("%s: writing the heartbeat failed (%s: %s)", self.worker, type(error).__name__, error)

    def checking(self, should_stop: Callable[[], bool]) -> Callable[[], bool]:
        """`should_stop` that pulses while the work goes on: hand it to a long pass that asks it
        between units. Once stopping, it answers at once: the heartbeat is deleted next, so a
        pulse (a backlog measurement and a write) would only delay the exit."""

        def pulse_unless_stopping() -> bool:
            if should_stop():
                return True
            self.pulse()
            return should_stop()

        return pulse_unless_stopping

    def stop(self) -> None:
        """The loop ended cleanly: delete the heartbeat (health then reports the worker missing,
        not stale, unless another process runs it)."""
        try:
            heartbeat_delete(worker=self.worker, instance=self.instance)
        except Exception as error:
            logger.warning("%s: deleting the heartbeat failed (%s); it expires", self.worker, type(error).__name__)
