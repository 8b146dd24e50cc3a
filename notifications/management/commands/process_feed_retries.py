"""Apply feed events waiting in the `feed_retry` table (the feed's retry queue, docs/explanation/feed.md)."""

import logging

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
    limit_help = "events taken per pass"

    def backlog(self):
        return feed_selectors.feed_retries_backlog()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.totals = feed_services.FeedRetryStats()

    def loop_pass(self) -> bool:
        limit = self.options["limit"]
        due = feed_selectors.feed_retries_due(limit=limit)
        for retry in self.progress(due, desc="feed retries", unit="event"):
            if self.should_stop():
                break
            self.totals.count(feed_services.feed_retry_process(retry=retry))
        return len(due) >= limit

    def stopped_details(self):
        return f" after {self.totals.summary}"

    def finish(self):
        self.report(f"feed retries: {self.totals.summary}")
        failed = self.totals.postponed
        self.exit_failed(failed, f"{failed} event(s) failed again; they stay queued, due later.")
