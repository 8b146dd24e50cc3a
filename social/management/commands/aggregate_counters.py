"""`python manage.py aggregate_counters [--loop]`: turn due counter flags into ranked totals."""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.management.base import BaseCommand
from tqdm import tqdm

from project.health_services import Heartbeat
from project.worker_loop import stop_on_signals, worker_loop
from social import aggregation

logger = logging.getLogger("social.aggregate_counters")


class Command(BaseCommand):
    help = (
        "Aggregate sharded counters whose due flag is up: sum each counter's shards with a consistent "
        "read, write its total into counter_totals and the popular-comments ranking, clear the flag. "
        "Without --loop: aggregate every counter pending now (due or not yet due) and exit. With --loop: "
        "keep aggregating counters as they come due, polling every --interval seconds. Several "
        "aggregators may run at once (each counter is claimed with a conditional write); SIGTERM or "
        "Ctrl-C finishes the current counter and exits."
    )

    def add_arguments(self, parser):
        parser.add_argument("--loop", action="store_true", help="keep running, aggregating counters as they come due")
        parser.add_argument(
            "--interval",
            type=float,
            default=0.5,
            help="seconds between polls of the due index in --loop mode (default 0.5)",
        )

    verbosity = 1

    def handle(self, *args, loop: bool = False, interval: float = 0.5, **options):
        self.verbosity = options.get("verbosity", 1)
        with stop_on_signals(logger, finishing="the current counter") as stop:
            if loop:
                self._loop(interval, stop)
            else:
                self._once(stop.is_set)

    def _once(self, stop):
        pending = aggregation.counters_pending_count()
        with tqdm(total=pending, unit="counter", disable=pending == 0 or self.verbosity == 0) as bar:
            done = aggregation.counters_aggregate_pending(due_only=False, stop=stop, on_done=lambda _: bar.update())
        logger.info("aggregated %d of %d pending counters", done, pending)
        if self.verbosity:
            self.stdout.write(f"Aggregated {done} counter(s); {pending - done} taken by another aggregator or left.")

    def _loop(self, interval, stop):
        logger.info(
            "aggregating counters as they come due (delay %.1fs, poll every %.1fs)",
            settings.COUNTER_AGGREGATION_DELAY,
            interval,
        )
        total = 0
        heartbeat = Heartbeat(worker="aggregate_counters", backlog=aggregation.counters_due_backlog)
        should_stop = heartbeat.checking(stop.is_set)

        def aggregate_pass() -> bool:
            nonlocal total
            done = aggregation.counters_aggregate_pending(due_only=True, stop=should_stop)
            if done:
                total += done
                logger.info("aggregated %d counter(s) (%d since start)", done, total)
            return False  # counters come due after a delay: poll every `interval`

        worker_loop(
            aggregate_pass,
            stop=stop,
            interval=interval,
            logger=logger,
            name="aggregate_counters",
            heartbeat=heartbeat,
        )
        logger.info("stopped after aggregating %d counter(s)", total)
