"""`manage.py dispatch_deliveries`: prepare and send broadcast deliveries, exactly once."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time

from django.conf import settings
from django.core.management.base import CommandError

from delivery import dispatch, preparation, selectors, services
from delivery.models import DISPATCHING, DRAFT, FINAL_STATUSES, PREPARING, READY
from project.errors import NotFound
from project.operations.worker_loop import WorkerCommand

logger = logging.getLogger("delivery.dispatch")


class Command(WorkerCommand):
    help = (
        "Prepare and dispatch broadcast deliveries. For each delivery that still needs work (or only --delivery "
        "ID): freeze its audience into chunks and target items if that is not done yet (this step reads users "
        "from the relational database), then claim chunks with an expiring lease and deliver each pending "
        "target in one transaction with the deletion of its target item, --batch-size targets per transaction. "
        "Every target gets the message exactly once even if this command is killed at any instant, re-run, or "
        "run on several machines at once: a re-run resumes where the last one stopped and takes over chunks "
        "whose lease expired. --workers N runs N dispatchers in this process. Without --loop it waits for "
        "chunks other dispatchers hold and exits when the deliveries are done; with --loop it keeps polling "
        "for new deliveries. SIGTERM (or Ctrl-C) finishes the current batch, releases the chunk for others "
        "and exits cleanly. Exit status 1 when something could not be recovered (the details are logged)."
    )

    worker = "dispatch_deliveries"
    logger = logger
    finishing = "the current batch"
    poll_seconds = 5.0
    poll_help = "pause between polls for new deliveries"
    loop_help = "keep running and pick up new deliveries"
    progress_in_loop = True  # one bar a delivery, when run by hand

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--delivery", metavar="ID", help="only this delivery (default: every active one)")
        parser.add_argument("--workers", type=int, default=1, metavar="N", help="dispatcher threads (default 1)")
        parser.add_argument(
            "--batch-size",
            type=int,
            default=services.BATCH_SIZE_MAX,
            metavar="K",
            help=f"targets per transaction, 1..{services.BATCH_SIZE_MAX} (default {services.BATCH_SIZE_MAX}; "
            "each target takes 3 of the 100 actions a transaction allows)",
        )
        parser.add_argument(
            "--lease-seconds",
            type=float,
            default=settings.DELIVERY_LEASE_SECONDS,
            metavar="S",
            help="how long a claimed chunk stays ours without renewal; a dead dispatcher's chunk is taken over "
            "after this (default DELIVERY_LEASE_SECONDS, 60)",
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress bar (logging only)")

    def check_options(self, **options):
        if options["workers"] < 1:
            raise CommandError("--workers must be at least 1.")
        if not 1 <= options["batch_size"] <= services.BATCH_SIZE_MAX:
            raise CommandError(f"--batch-size must be between 1 and {services.BATCH_SIZE_MAX}.")
        if options["lease_seconds"] <= 0:
            raise CommandError("--lease-seconds must be positive.")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.failures: list[str] = []

    def backlog(self):
        return selectors.deliveries_backlog()

    def loop_pass(self) -> bool:
        ids = [self.options["delivery"]] if self.options["delivery"] else selectors.deliveries_active()
        for delivery_id in ids:
            if self.stop.is_set():
                break
            self.failures.extend(self._one(delivery_id, self.options, self.stop))
        return False

    def finish(self):
        if self.failures:
            raise CommandError("; ".join(self.failures))

    def _one(self, delivery_id: str, options, stop: threading.Event) -> list[str]:
        try:
            delivery = selectors.delivery_get_consistent(delivery_id=delivery_id)
        except NotFound:
            return [f"no delivery {delivery_id}"]
        if delivery.status in (DRAFT, PREPARING):
            logger.info("delivery %s: preparing (%s audience)", delivery_id, delivery.audience_kind)
            delivery = preparation.delivery_prepare(delivery_id=delivery_id, should_stop=stop.is_set)
        if delivery.status not in (READY, DISPATCHING):
            if delivery.status in FINAL_STATUSES:
                logger.info("delivery %s is %s", delivery_id, delivery.status)
            return []
        progress = selectors.delivery_progress(delivery=delivery)
        bar = self.progress(
            total=progress.total,
            initial=progress.delivered + progress.skipped,
            desc=f"delivery {delivery_id[:8]}",
            unit="msg",
            dynamic_ncols=True,
        )
        failures: list[str] = []
        reports: list[dispatch.DispatchReport] = []
        lock = threading.Lock()
        prefix = f"{socket.gethostname()}:{os.getpid()}"

        def on_delivered(count: int) -> None:
            with lock:
                bar.update(count)
            if self.heartbeat:
                self.heartbeat.pulse()  # a big delivery is one long pass

        def worker(number: int) -> None:
            try:
                report = dispatch.delivery_dispatch(
                    delivery_id=delivery_id,
                    owner=f"{prefix}:{number}",
                    batch_size=options["batch_size"],
                    lease_seconds=options["lease_seconds"],
                    should_stop=stop.is_set,
                    on_delivered=on_delivered,
                )
                with lock:
                    reports.append(report)
                    if report.unfinished_chunks:
                        failures.append(
                            f"delivery {delivery_id}: {report.unfinished_chunks} chunk(s) kept conflicting "
                            "(left for the next run)"
                        )
            except Exception as error:  # the chunk's lease expires and another dispatcher takes it over
                logger.exception("delivery %s: dispatcher %s failed", delivery_id, number)
                with lock:
                    failures.append(f"delivery {delivery_id}: dispatcher {number} failed: {error}")

        started = time.monotonic()
        threads = [
            threading.Thread(target=worker, args=(n,), name=f"dispatch-{n}", daemon=True)
            for n in range(options["workers"])
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            while thread.is_alive():
                thread.join(timeout=0.2)  # keep the main thread responsive to SIGTERM
        bar.close()
        final = selectors.delivery_progress(delivery=selectors.delivery_get_consistent(delivery_id=delivery_id))
        delivered_here = sum(report.delivered for report in reports)
        elapsed = time.monotonic() - started
        logger.info(
            "delivery %s: %s; %d delivered by this run in %.1fs (%d/s); %d/%d delivered in all, %d skipped",
            delivery_id,
            final.delivery.status,
            delivered_here,
            elapsed,
            delivered_here / elapsed if elapsed else 0,
            final.delivered,
            final.total,
            final.skipped,
        )
        self.stdout.write(
            f"delivery {delivery_id}: {final.delivery.status}, {final.delivered}/{final.total} delivered"
            + (f", {final.skipped} skipped (accounts deleted)" if final.skipped else "")
        )
        return failures
