"""What the long-running management commands share."""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Callable, Iterator

from project.clock import clock
from project.errors import is_transient
from project.health_services import Heartbeat


@contextlib.contextmanager
def stop_on_signals(logger: logging.Logger, *, finishing: str) -> Iterator[threading.Event]:
    """SIGTERM and SIGINT set the yielded event instead of killing the command.

    The command checks the event between units of work, so it finishes `finishing`
    (the current batch, counter, event) and exits cleanly; `event.wait(seconds)` is
    an idle sleep that a signal cuts short. The previous handlers come back on exit.
    """
    stop = threading.Event()

    def on_signal(signum, frame):
        if not stop.is_set():
            logger.warning("signal %s: finishing %s, then exiting", signum, finishing)
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


# The longest wait between passes while DynamoDB does not answer: a worker resumes
# within this many seconds of the outage's end.
OUTAGE_BACKOFF_MAX = 5.0


def worker_loop(
    run_pass: Callable[[], bool],
    *,
    stop: threading.Event,
    interval: float,
    logger: logging.Logger,
    name: str,
    keep_going_on: Callable[[Exception], bool] | None = None,
    through_outages: bool = True,
    heartbeat: Heartbeat | None = None,
) -> None:
    """The `--loop` of a polling command: run passes until `stop` is set.

    `run_pass()` returns True when more work may be waiting (the next pass starts at
    once), False to wait `interval` seconds first; a signal cuts the wait short. With
    `through_outages` (the default; a one-shot run passes False), when DynamoDB does not
    answer (connection refused, timeouts, 5xx, throttling: `project.errors.is_transient`),
    or when `keep_going_on(error)` is True, the error is logged and the next pass waits
    longer each time (doubling up to OUTAGE_BACKOFF_MAX seconds) until one succeeds; any
    other error propagates (and the supervisor starts the command again).

    With a `heartbeat` (the commands' --loop mode), each completed pass is reported to it
    (a write at most every WORKER_HEARTBEAT_SECONDS; a failed pass writes none, so a worker
    that keeps failing goes stale), and the heartbeat is deleted when the loop ends.
    """
    failures = 0
    try:
        while not stop.is_set():
            started = clock.now()
            try:
                busy = run_pass()
            except Exception as error:
                outage = through_outages and is_transient(error)
                if not (outage or (keep_going_on is not None and keep_going_on(error))):
                    raise
                failures += 1
                delay = min(OUTAGE_BACKOFF_MAX, max(interval, 0.1) * 2**failures)
                if failures == 1:
                    logger.exception("%s: a pass failed, trying again with back-off", name)
                else:
                    logger.warning("%s: pass failed again (%s); next try in %.1fs", name, type(error).__name__, delay)
                stop.wait(delay)
                continue
            if failures:
                logger.info("%s: passes succeed again after %d failure(s)", name, failures)
                failures = 0
            if heartbeat is not None:
                heartbeat.cycle_done(started=started, finished=clock.now())
            if not busy and not stop.is_set():
                stop.wait(interval)
    finally:
        if heartbeat is not None:
            heartbeat.stop()
