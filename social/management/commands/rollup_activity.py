"""`python manage.py rollup_activity [--date YYYY-MM-DD] [--loop]`: the daily activity rollup."""

from __future__ import annotations

import logging
from datetime import date, timedelta

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from project.commands import stop_on_signals, worker_loop
from project.health_services import Heartbeat
from social.activity import rollup
from social.activity import services as activity_services
from social.activity.periods import local_time
from social.activity.rotation import activity_tables_maintain

logger = logging.getLogger("social.activity")

TABLES_EVERY_SECONDS = 3600.0


class Command(BaseCommand):
    help = (
        "Count a day of the activity log (by action: count and distinct users; and daily active users) "
        "into the relational database, replacing that day's rows in one transaction. Without options: "
        "yesterday. --date YYYY-MM-DD: that day. --loop: roll up each day once it has ended plus "
        "ACTIVITY_ROLLUP_GRACE_SECONDS, re-roll today every ACTIVITY_ROLLUP_TODAY_SECONDS, and keep next "
        "month's table ready. Re-runs and concurrent runs give the same rows; SIGTERM finishes the "
        "current day and exits."
    )

    def add_arguments(self, parser):
        parser.add_argument("--date", help="the day to roll up (YYYY-MM-DD, in TIME_ZONE); default yesterday")
        parser.add_argument("--loop", action="store_true", help="keep rolling up days as they end, and today")
        parser.add_argument("--interval", type=float, default=30.0, help="seconds between checks in --loop mode")

    def handle(self, *args, date: str | None = None, loop: bool = False, interval: float = 30.0, **options):
        self.verbosity = options.get("verbosity", 1)
        if date and loop:
            raise CommandError("--date and --loop exclude each other.")
        with stop_on_signals(logger, finishing="the current day") as stop:
            if loop:
                self._loop(stop, interval)
            else:
                self._day(self._parse(date))

    def _parse(self, value: str | None):
        if value is None:
            return local_time(activity_services.clock()).date() - timedelta(days=1)
        try:
            return date.fromisoformat(value)
        except ValueError:
            raise CommandError(f"--date must be YYYY-MM-DD, not {value!r}.") from None

    def _day(self, day):
        with tqdm(unit="item", unit_scale=True, disable=self.verbosity == 0, desc=str(day), leave=False) as bar:
            count = rollup.activity_rollup_day(day=day, on_items=bar.update)
        if self.verbosity:
            self.stdout.write(f"{day}: {count.items} actions by {count.active_users} active users")
            for action in sorted(count.counts):
                self.stdout.write(f"  {action}: {count.counts[action]} by {count.users[action]} users")

    def _loop(self, stop, interval):
        logger.info(
            "rolling up days as they end (grace %.0fs), today every %.0fs",
            settings.ACTIVITY_ROLLUP_GRACE_SECONDS,
            settings.ACTIVITY_ROLLUP_TODAY_SECONDS,
        )
        tables_checked = float("-inf")
        heartbeat = Heartbeat(worker="rollup_activity", backlog=rollup.activity_days_backlog)

        def rollup_pass() -> bool:
            nonlocal tables_checked
            now = activity_services.clock()
            if now - tables_checked >= TABLES_EVERY_SECONDS:
                activity_tables_maintain(now=now)  # next month's table is always ready before it starts
                tables_checked = now
            for day in rollup.activity_days_due(now=now):
                if stop.is_set():
                    break
                heartbeat.pulse()
                rollup.activity_rollup_day(day=day)
            return False

        worker_loop(
            rollup_pass, stop=stop, interval=interval, logger=logger, name="rollup_activity", heartbeat=heartbeat
        )
        logger.info("activity rollup stopped")
