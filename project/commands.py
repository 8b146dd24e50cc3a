"""What the long-running management commands share."""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Callable, Iterator

from project.clock import clock
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


def worker_loop(
    run_pass: Callable[[], bool],
    *,
    stop: threading.Event,
    interval: float,
    logger: logging.Logger,
    name: str,
    keep_going_on: Callable[[Exception], bool] | None = None,
    heartbeat: Heartbeat | None = None,
) -> None:
    """The `--loop` of a polling command: run passes until `stop` is set.

    `run_pass()` returns True when more work may be waiting (the next pass starts at
    once), False to wait `interval` seconds first; a signal cuts the wait short. An
    exception for which `keep_going_on(error)` is True (e.g. the table unreachable for a
    moment) is logged and the loop polls again after `interval`; any other propagates.

    With a `heartbeat` (the commands' --loop mode), each completed pass is reported to it
    (a write at most every WORKER_HEARTBEAT_SECONDS; a failed pass writes none, so a worker
    that keeps failing goes stale), and the heartbeat is deleted when the loop ends.
    """
    try:
        while not stop.is_set():
            started = clock.now()
            try:
                busy = run_pass()
            except Exception as error:
                if keep_going_on is None or not keep_going_on(error):
                    raise
                logger.exception("%s: a pass failed, polling again", name)
                busy = False
            else:
                if heartbeat is not None:
                    heartbeat.cycle_done(started=started, finished=clock.now())
            if not busy and not stop.is_set():
                stop.wait(interval)
    finally:
        if heartbeat is not None:
            heartbeat.stop()
