"""`python manage.py aggregate_counters [--loop]`: turn due counter flags into ranked totals."""

from __future__ import annotations

import logging

from django.conf import settings

from project.operations.worker_loop import WorkerCommand
from social import aggregation


class Command(WorkerCommand):
    help = (
        "Aggregate sharded counters whose due flag is up: sum each counter's shards with a consistent "
        "read, write its total into counter_totals and the popular-comments ranking, clear the flag. "
        "Without --loop: aggregate every counter pending now (due or not yet due) and exit. With --loop: "
        "keep aggregating counters as they come due, polling every --poll-seconds. Several "
        "aggregators may run at once (each counter is claimed with a conditional write); SIGTERM or "
        "Ctrl-C finishes the current counter and exits (counters claimed but not summed yet are "
        "taken again once their claim expires, COUNTER_AGGREGATION_LEASE seconds)."
    )
    worker = "aggregate_counters"
    logger = logging.getLogger("social.aggregate_counters")
    finishing = "the current counter"
    poll_seconds = 0.5
    poll_help = "seconds between polls of the due index"
    loop_help = "keep running, aggregating counters as they come due"
    total = 0

    def backlog(self):
        return aggregation.counters_due_backlog()

    def run_once(self):
        pending = aggregation.counters_pending_count()
        with self.progress(total=pending, unit="counter") as bar:
            done = aggregation.counters_aggregate_pending(
                due_only=False, stop=self.should_stop, on_done=lambda _: bar.update()
            )
        self.logger.info("aggregated %d of %d pending counters", done, pending)
        if self.verbosity:
            self.stdout.write(f"Aggregated {done} counter(s); {pending - done} taken by another aggregator or left.")

    def loop_details(self):
        return f", counters due {settings.COUNTER_AGGREGATION_DELAY:g}s after a change"

    def loop_pass(self) -> bool:
        done = aggregation.counters_aggregate_pending(due_only=True, stop=self.should_stop)
        if done:
            self.total += done
            self.logger.info("aggregated %d counter(s) (%d since start)", done, self.total)
        return False  # counters come due after a delay: poll every --poll-seconds

    def stopped_details(self):
        return f" after aggregating {self.total} counter(s)"
