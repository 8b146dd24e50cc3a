"""Stopping a loop from a signal handler without a deadlock.

Python runs a signal handler in the main thread, between two bytecodes of whatever
that thread was doing. If the main thread was inside `stop.wait(...)` at that moment,
it may hold the event's internal lock (`threading.Event` guards its flag with a
non-reentrant lock, held for a few bytecodes on the way in and out of every wait), and
`stop.set()` called from the handler then waits for that same lock forever: the
process hangs with its stop message logged, until a process manager kills it. Rare
(a loop that waits 0.2 s between passes sits in that window a small fraction of the
time), but a process manager sends signals at every deploy.

`set_soon(event)` hands the `set()` to a short-lived thread, which takes the lock
once the main thread lets go of it, a moment after the handler returns. Whatever else
the handler must do (log) goes in `before`, run by that thread too: a log line written
from inside a handler can also meet the main thread in the middle of writing to the
same stream.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


def set_soon(event: threading.Event, *, before: Callable[[], None] | None = None) -> threading.Thread:
    """Set `event` from a signal handler safely: in a new thread, after `before()` (if given)."""

    def run() -> None:
        try:
            if before is not None:
                before()
        finally:
            event.set()

    thread = threading.Thread(target=run, name="set-on-signal", daemon=True)
    thread.start()
    return thread
