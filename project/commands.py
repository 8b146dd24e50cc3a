"""What the long-running management commands share."""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Iterator


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
