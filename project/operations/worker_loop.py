"""The worker loop: what the long-running management commands share.

`WorkerCommand` is the base of the polling workers deploy/supervisord.conf runs with
`--loop` (`fold_like_events`, `aggregate_counters`, `process_feed_retries`,
`dispatch_deliveries`, `rollup_activity`, `mail_notifications`, `erase_accounts`, and the
daily `clear_sessions`, which writes no heartbeat): each says what one pass does, and this
module gives them all the same `--loop`/`--poll-seconds` options (and `--limit`),
SIGTERM/SIGINT handling (`stop_on_signals`), heartbeat, back-off through outages
(`worker_loop`), start/stop log lines, progress bars (`progress`), the summary of a run
(`report`) and its exit status (`exit_failed`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from django.core.management.base import BaseCommand, CommandError
from django.db import connections
from tqdm import tqdm

from project.clock import clock
from project.errors import is_transient
from project.operations.backlog import Backlog
from project.operations.health_services import Heartbeat
from project.operations.signal_safe import set_soon
from project.operations.usage import WORKER_PREFIX, usage_route_enter, usage_route_exit

if TYPE_CHECKING:
    from types import FrameType

    from django.core.management.base import CommandParser


@contextlib.contextmanager
def stop_on_signals(logger: logging.Logger, *, finishing: str, restore: bool = True) -> Iterator[threading.Event]:
    """SIGTERM and SIGINT set the yielded event instead of killing the command.

    The command checks the event between units of work, so it finishes `finishing`
    (the current batch, counter, event) and exits cleanly; `event.wait(seconds)` is
    an idle sleep that a signal cuts short. The previous handlers come back on exit,
    unless `restore` is False: a process about to exit keeps these, so a second signal
    (Ctrl-C pressed again, a terminal's SIGINT and a process manager's SIGTERM, a stop
    signal sent to the process and its group) cannot kill it on its way out.
    """
    stop = threading.Event()
    received: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if received:  # the first one is stopping the command already
            return
        received.append(signum)

        def say() -> None:
            logger.warning("signal %s: finishing %s, then exiting", signum, finishing)

        set_soon(stop, before=say)  # not stop.set() here: project/operations/signal_safe.py says why

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield stop
    finally:
        if restore:
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
    other error propagates (and the process manager starts the command again).

    With a `heartbeat` (the commands' --loop mode), each completed pass is reported to it
    (a write at most every WORKER_HEARTBEAT_SECONDS; a failed pass writes none, so a worker
    that keeps failing goes stale), and the heartbeat is deleted when the loop ends.
    """
    failures = 0
    usage = usage_route_enter(f"{WORKER_PREFIX}{name}")
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
        usage_route_exit(usage)


class WorkerCommand(BaseCommand):
    """A management command that does its work once, or with `--loop` keeps polling for more.

    A subclass names itself (`worker`, `logger`), says what a signal lets it finish
    (`finishing`: its unit of work, small enough to end well within the 5 s a process
    manager allows after SIGTERM) and what one pass does (`loop_pass`, and `run_once`
    when a run without --loop differs from one pass). `self.should_stop()` is what a
    pass asks between units: True once SIGTERM/SIGINT came; in --loop mode it also
    keeps the heartbeat fresh during a long pass. SIGTERM/SIGINT finish the current
    unit and the command exits 0 with an "<worker>: stopped" log line.
    """

    worker = ""  # the command's name: its heartbeat and its log lines
    logger = logging.getLogger(__name__)
    finishing = "the current unit of work"  # what a signal lets finish, for the log line
    poll_seconds = 1.0  # the default of --poll-seconds
    beats = True  # with --loop, write a heartbeat (`manage.py health` watches it); a daily job has none
    poll_help = "seconds between polls when nothing is waiting"
    loop_help = "keep running and poll for work until SIGTERM or Ctrl-C"
    limit_help = ""  # a worker that takes so many items a pass: `--limit`'s help ("events taken per pass")
    progress_in_loop = False  # with --loop, progress bars too (the others' log lines tell each pass)

    stop: threading.Event
    should_stop: Callable[[], bool]
    heartbeat: Heartbeat | None = None
    looping = False
    own_process = False  # run as `manage.py <name>` (run_from_argv), not called from other code
    verbosity = 1
    options: dict[str, Any]

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--loop", action="store_true", help=self.loop_help)
        parser.add_argument(
            "--poll-seconds",
            "--interval",
            dest="poll_seconds",
            type=float,
            default=self.poll_seconds,
            metavar="S",
            help=f"with --loop: {self.poll_help} (default {self.poll_seconds:g})",
        )
        if self.limit_help:
            parser.add_argument("--limit", type=int, default=100, help=f"{self.limit_help} (default 100)")

    def run_from_argv(self, argv: list[str]) -> None:
        """As a process of its own (`manage.py <name> --loop`): exit at once once the loop ended.

        Tearing down the interpreter of a Django + botocore process costs 0.5-2 s of CPU
        (and more on a busy machine), enough to push the exit past a process manager's
        5 s; the work is done and the heartbeat removed by then, so the process closes its
        connections, flushes its output and exits without it.
        """
        self.own_process = True
        super().run_from_argv(argv)  # a CommandError exits here, with its status
        if self.looping:
            connections.close_all()
            logging.shutdown()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)

    def handle(self, *args: Any, **options: Any) -> None:
        if options["poll_seconds"] < 0:
            raise CommandError("--poll-seconds must not be negative.")
        if self.limit_help and options["limit"] < 1:
            raise CommandError("--limit must be at least 1.")
        self.check_options(**options)
        with stop_on_signals(self.logger, finishing=self.finishing, restore=not self.own_process) as stop:
            if options["loop"]:
                self.run_loop(stop=stop, **options)
            else:
                self.run(stop=stop, **options)
        self.finish()

    def run(self, *, stop: threading.Event, **options: Any) -> None:
        """Without --loop: `run_once` until done or stopped."""
        self.stop, self.should_stop, self.options = stop, stop.is_set, options
        self.verbosity = options.get("verbosity", 1)
        self.run_once()

    def run_loop(self, *, stop: threading.Event, poll_seconds: float, **options: Any) -> None:
        """With --loop: passes until `stop` is set (by a signal, or by a test)."""
        self.stop, self.options, self.looping = stop, options, True
        self.verbosity = options.get("verbosity", 1)
        self.heartbeat = Heartbeat(worker=self.worker, backlog=self.backlog) if self.beats else None
        self.should_stop = self.heartbeat.checking(stop.is_set) if self.heartbeat else stop.is_set
        self.logger.info("%s: started, polling every %gs%s", self.worker, poll_seconds, self.loop_details())
        worker_loop(
            self.loop_pass,
            stop=stop,
            interval=poll_seconds,
            logger=self.logger,
            name=self.worker,
            keep_going_on=self.keep_going_on,
            heartbeat=self.heartbeat,
        )
        self.logger.info("%s: stopped%s", self.worker, self.stopped_details())

    # --- what a pass uses -------------------------------------------------------

    def progress(self, units: Iterable[Any] | None = None, *, total: int | None = None, **bar: Any) -> tqdm[Any]:
        """A progress bar over `units` (or of `total`, moved with `update`), by one rule for every
        worker: on standard error when it is a terminal, at verbosity 1 or more, without
        --no-progress, with something to count, and with --loop only if `progress_in_loop`."""
        if total is None and isinstance(units, list | tuple):
            total = len(units)
        shown = (
            self.verbosity > 0
            and not getattr(self, "options", {}).get("no_progress")
            and total != 0
            and (self.progress_in_loop or not self.looping)
        )
        return tqdm(units, total=total, disable=None if shown else True, **bar)

    def report(self, summary: str) -> None:
        """What a run without --loop did: a log line and the same on standard output (with
        --loop the "stopped" line says it)."""
        if not self.looping:
            self.logger.info(summary)
            self.stdout.write(summary)

    def exit_failed(self, failures: int, message: str) -> None:
        """A run without --loop whose `failures` are not 0 exits with status 1 and `message`
        (with --loop, what failed waits for a later pass)."""
        if failures and not self.looping:
            raise CommandError(message, returncode=1)

    # --- what a subclass says ------------------------------------------------

    def loop_pass(self) -> bool:
        """One pass; True when more work may be waiting (the next pass starts at once)."""
        raise NotImplementedError

    def run_once(self) -> None:
        """The work of a run without --loop (default: one pass)."""
        self.loop_pass()

    def backlog(self) -> Backlog:
        """What waits for this worker (its heartbeat stores it)."""
        raise NotImplementedError

    def check_options(self, **options: Any) -> None:
        """Raise CommandError for options that do not go together."""

    def keep_going_on(self, error: Exception) -> bool:
        """In --loop mode, whether a pass failing with `error` (not an outage) is retried."""
        return False

    def loop_details(self) -> str:
        """More for the "started" log line (", grace 1800s")."""
        return ""

    def stopped_details(self) -> str:
        """More for the "stopped" log line (" after folding 12 like event(s)")."""
        return ""

    def finish(self) -> None:
        """After the run or the loop ended: print what was done, raise CommandError for a failure."""
