"""A signal that lands while a worker's main thread is inside `stop.wait()` stops it, never hangs it."""

import logging
import signal
import threading

from project.operations.signal_safe import set_soon
from project.operations.worker_loop import stop_on_signals


def _inside_wait(event: threading.Event, call) -> threading.Thread:
    """Run `call()` in a thread that holds `event`'s internal lock, as the main thread does for a
    few bytecodes on the way into and out of `event.wait()`: where a signal handler can find it.
    (`_cond` is CPython's Event internals: the one way to stand exactly in that window.)"""

    def run() -> None:
        with event._cond:  # type: ignore[attr-defined]
            call()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_the_workers_signal_handler_returns_while_the_stop_events_lock_is_held_and_the_loop_stops(caplog):
    logger = logging.getLogger("tests.signal_safe")
    with stop_on_signals(logger, finishing="the current unit") as stop:
        handler = signal.getsignal(signal.SIGTERM)
        # stop.set() straight from the handler would wait here for the lock its own thread holds.
        handler_thread = _inside_wait(stop, lambda: handler(signal.SIGTERM, None))
        handler_thread.join(timeout=10)
        assert not handler_thread.is_alive(), "the signal handler hung on the stop event's lock"
        assert stop.wait(timeout=10)
    assert "signal 15: finishing the current unit, then exiting" in caplog.text


def test_set_soon_runs_its_before_step_then_sets_once_the_lock_is_free():
    event = threading.Event()
    seen_set = []
    holder = _inside_wait(event, lambda: set_soon(event, before=lambda: seen_set.append(event.is_set())))
    holder.join(timeout=10)
    assert not holder.is_alive()
    assert event.wait(timeout=10)
    assert seen_set == [False]  # `before` ran first, while the event was not set yet
