"""Apply feed events waiting in the `feed_retry` table (the feed's retry queue, docs/explanation/feed.md)."""

import logging

from django.core.management.base import CommandError
from tqdm import tqdm

from notifications.feed import selectors as feed_selectors
from notifications.feed import services as feed_services
from project.operations.worker_loop import WorkerCommand


class Command(WorkerCommand):
    help = (
        "Apply the feed events that could not be written at once (version conflicts that kept "
        "losing, throttling, timeouts) and reply notifications whose request died before sending "
        "them. Each event is applied at most once, also with several of these running on several "
        "machines. Without --loop: one pass over what is due, then exit (exit code 1 if some "
        "failed again). With --loop: keep polling until SIGTERM/SIGINT, which finishes the current event."
    )
    worker = "process_feed_retries"
    logger = logging.getLogger("notifications.feed.services")
    finishing = "the current event"
    poll_seconds = 2.0
    poll_help = "seconds between polls when nothing is due"
    loop_help = "keep running and poll for due events"

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--limit", type=int, default=100, help="events taken per pass (default 100)")

    def backlog(self):
        return feed_selectors.feed_retries_backlog()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.totals = feed_services.FeedRetryStats()

    def loop_pass(self) -> bool:
        limit = self.options["limit"]
        due = feed_selectors.feed_retries_due(limit=limit)
        for retry in tqdm(due, desc="feed retries", unit="event", disable=self.looping or not due):
            if self.should_stop():
                break
            self.totals.count(feed_services.feed_retry_process(retry=retry))
        return len(due) >= limit

    def finish(self):
        totals = self.totals
        summary = (
            f"feed retries: {totals.applied} applied, {totals.already_applied} already applied, "
            f"{totals.postponed} failed again (due later), {totals.skipped} taken by another worker"
        )
        self.logger.info(summary)
        self.stdout.write(summary)
        if totals.postponed and not self.looping:
            raise CommandError(f"{totals.postponed} event(s) failed again; they stay queued, due later.", returncode=1)
