"""`python manage.py fold_like_events [--loop]`: fold pending like events into the authors' notifications."""

from __future__ import annotations

import logging

from django.core.management.base import BaseCommand

from notifications import like_fold
from notifications.selectors import like_events_backlog
from project.commands import stop_on_signals, worker_loop
from project.health_services import Heartbeat

logger = logging.getLogger("notifications.like_fold")


class Command(BaseCommand):
    help = (
        "Fold pending like and unlike events (the likes' outbox, table like_events) into the authors' "
        "unread like notifications, unread badges, the counters' due flags and the likers' activity lines, "
        "many events per write. Exactly once, however many of these run on however many machines, and "
        "whenever one dies: the fold follows the like rows, commits with one conditional write of the "
        "notification and deletes its events last. Web processes fold most likes right after answering; "
        "this folds the rest. Without --loop: fold until nothing is pending, then exit. With --loop: keep "
        "polling the table (one Scan page); SIGTERM or Ctrl-C finishes the current comment and exits."
    )

    def add_arguments(self, parser):
        parser.add_argument("--loop", action="store_true", help="keep running, folding events as they arrive")
        parser.add_argument(
            "--interval", type=float, default=0.2, help="seconds between polls when nothing is pending (--loop)"
        )

    def handle(self, *args, loop: bool = False, interval: float = 0.2, **options):
        total = 0
        heartbeat = Heartbeat(worker="fold_like_events", backlog=like_events_backlog) if loop else None
        with stop_on_signals(logger, finishing="the current comment") as stop:
            should_stop = heartbeat.checking(stop.is_set) if heartbeat else stop.is_set
            if not loop:
                total = like_fold.like_events_fold_until_idle(stop=stop.is_set)
                stop.set()  # no polling: the loop below ends at once

            def fold_pass() -> bool:
                nonlocal total
                done = like_fold.like_events_fold_pending(stop=should_stop)
                total += done
                if done:
                    logger.info("folded %d like event(s) (%d since start)", done, total)
                return bool(done)

            # Any error (e.g. the table unreachable for a moment): poll again.
            worker_loop(
                fold_pass,
                stop=stop,
                interval=interval,
                logger=logger,
                name="fold_like_events",
                keep_going_on=lambda error: True,
                heartbeat=heartbeat,
            )
        logger.info("fold_like_events: folded %d like event(s)", total)
        self.stdout.write(f"Folded {total} like event(s).")
