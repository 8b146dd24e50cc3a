"""`python manage.py fold_like_events [--loop]`: fold pending like events into the authors' notifications."""

from __future__ import annotations

import logging

from notifications import like_fold
from notifications.selectors import like_events_backlog
from project.operations.worker_loop import WorkerCommand


class Command(WorkerCommand):
    help = (
        "Fold pending like and unlike events (the likes' outbox, table like_events) into the authors' "
        "unread like notifications, unread badges, the counters' due flags and the likers' activity lines, "
        "many events per write. Exactly once, however many of these run on however many machines, and "
        "whenever one dies: the fold follows the like rows, commits with one conditional write of the "
        "notification and deletes its events last. Web processes fold most likes right after answering, "
        "and their events are left to them for a few seconds; this folds the rest. Without --loop: fold "
        "until nothing is pending, then exit. With --loop: keep "
        "polling the table (one Scan page); SIGTERM or Ctrl-C finishes the current comment and exits."
    )
    worker = "fold_like_events"
    logger = logging.getLogger("notifications.like_fold")
    finishing = "the current comment"
    poll_seconds = 0.2
    poll_help = "seconds between polls when nothing is pending"
    loop_help = "keep running, folding events as they arrive"
    total = 0

    def backlog(self):
        return like_events_backlog()

    def run_once(self):
        self.total += like_fold.like_events_fold_until_idle(stop=self.should_stop)

    def loop_pass(self) -> bool:
        done = like_fold.like_events_fold_pending(stop=self.should_stop, leave_to_requests=True)
        self.total += done
        if done:
            self.logger.info("folded %d like event(s) (%d since start)", done, self.total)
        return bool(done)

    def keep_going_on(self, error):
        return True  # any error (e.g. the table unreachable for a moment): poll again

    def stopped_details(self):
        return f" after folding {self.total} like event(s)"

    def finish(self):
        self.report(f"Folded {self.total} like event(s).")
