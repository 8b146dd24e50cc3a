"""Apply feed events waiting in the `feed_retry` table (the feed's retry queue, docs/architecture.md)."""

import logging

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from notifications.feed import selectors as feed_selectors
from notifications.feed import services as feed_services
from project.commands import stop_on_signals, worker_loop
from project.health_services import Heartbeat

logger = logging.getLogger("notifications.feed.services")


class Command(BaseCommand):
    help = (
        "Apply the feed events that could not be written at once (version conflicts that kept "
        "losing, throttling, timeouts) and reply notifications whose request died before sending "
        "them. Each event is applied at most once, also with several of these running on several "
        "machines. Without --loop: one pass over what is due, then exit (exit code 1 if some "
        "failed again). With --loop: keep polling until SIGTERM/SIGINT, which finishes the current event."
    )

    def add_arguments(self, parser):
        parser.add_argument("--loop", action="store_true", help="keep running and poll for due events")
        parser.add_argument(
            "--interval", type=float, default=2.0, help="seconds between polls when nothing is due (--loop)"
        )
        parser.add_argument("--limit", type=int, default=100, help="events taken per pass (default 100)")

    def handle(self, *args, loop: bool = False, interval: float = 2.0, limit: int = 100, **options):
        totals = feed_services.FeedRetryStats()
        heartbeat = None
        if loop:
            heartbeat = Heartbeat(worker="process_feed_retries", backlog=feed_selectors.feed_retries_backlog)
        with stop_on_signals(logger, finishing="the current event") as stop:

            def retry_pass() -> bool:
                due = feed_selectors.feed_retries_due(limit=limit)
                for retry in tqdm(due, desc="feed retries", unit="event", disable=loop or not due):
                    if stop.is_set():
                        break
                    if heartbeat:
                        heartbeat.pulse()
                    totals.count(feed_services.feed_retry_process(retry=retry))
                if not loop:
                    stop.set()
                return len(due) >= limit

            worker_loop(
                retry_pass,
                stop=stop,
                interval=interval,
                logger=logger,
                name="process_feed_retries",
                through_outages=loop,
                heartbeat=heartbeat,
            )
        summary = (
            f"feed retries: {totals.applied} applied, {totals.already_applied} already applied, "
            f"{totals.postponed} failed again (due later), {totals.skipped} taken by another worker"
        )
        logger.info(summary)
        self.stdout.write(summary)
        if totals.postponed and not loop:
            raise CommandError(f"{totals.postponed} event(s) failed again; they stay queued, due later.", returncode=1)
