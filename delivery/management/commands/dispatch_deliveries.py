"""`manage.py dispatch_deliveries`: prepare and send broadcast deliveries, exactly once."""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.core.management.base import CommandError

from delivery import runs, selectors, services
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
            self.failures.extend(self._one(delivery_id))
        return False

    def finish(self):
        if self.failures:
            raise CommandError("; ".join(self.failures))

    def _one(self, delivery_id: str) -> list[str]:
        bars = []
        lock = threading.Lock()

        def on_start(progress: selectors.DeliveryProgress) -> None:
            bars.append(
                self.progress(
                    total=progress.total,
                    initial=progress.delivered + progress.skipped,
                    desc=f"delivery {delivery_id[:8]}",
                    unit="msg",
                    dynamic_ncols=True,
                )
            )

        def on_delivered(count: int) -> None:
            with lock:
                bars[0].update(count)
            if self.heartbeat:
                self.heartbeat.pulse()  # a big delivery is one long pass

        run = runs.delivery_run(
            delivery_id=delivery_id,
            workers=self.options["workers"],
            batch_size=self.options["batch_size"],
            lease_seconds=self.options["lease_seconds"],
            should_stop=self.stop.is_set,
            on_start=on_start,
            on_delivered=on_delivered,
        )
        for bar in bars:
            bar.close()
        final = run.progress
        if final is not None:
            self.stdout.write(
                f"delivery {delivery_id}: {final.delivery.status}, {final.delivered}/{final.total} delivered"
                + (f", {final.skipped} skipped (accounts deleted)" if final.skipped else "")
            )
        return run.failures
