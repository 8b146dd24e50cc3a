"""`python manage.py rollup_activity [--date YYYY-MM-DD] [--loop]`: the daily activity rollup."""

from __future__ import annotations

import logging
from datetime import date, timedelta

from django.conf import settings
from django.core.management.base import CommandError

from project.operations.worker_loop import WorkerCommand
from social.activity import rollup
from social.activity import services as activity_services
from social.activity.periods import local_time
from social.activity.rotation import activity_tables_maintain

TABLES_EVERY_SECONDS = 3600.0


class Command(WorkerCommand):
    help = (
        "Count a day of the activity log (by action: count and distinct users; and daily active users) "
        "into the relational database, replacing that day's rows in one transaction. Without options: "
        "yesterday. --date YYYY-MM-DD: that day. --loop: roll up each day once it has ended plus "
        "ACTIVITY_ROLLUP_GRACE_SECONDS, re-roll today every ACTIVITY_ROLLUP_TODAY_SECONDS, and keep next "
        "month's table ready. Re-runs and concurrent runs give the same rows; SIGTERM stops the "
        "current day's count (nothing of it is stored; the next run counts it again) and exits."
    )
    worker = "rollup_activity"
    logger = logging.getLogger("social.activity")
    finishing = "the current day"
    poll_seconds = 30.0
    poll_help = "seconds between checks for days to roll up"
    loop_help = "keep rolling up days as they end, and today"
    tables_checked = float("-inf")

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--date", help="the day to roll up (YYYY-MM-DD, in TIME_ZONE); default yesterday")

    def check_options(self, **options):
        if options["date"] and options["loop"]:
            raise CommandError("--date and --loop exclude each other.")

    def backlog(self):
        return rollup.activity_days_backlog()

    def run_once(self):
        day = self._parse(self.options["date"])
        with self.progress(unit="item", unit_scale=True, desc=str(day), leave=False) as bar:
            count = rollup.activity_rollup_day(day=day, on_items=bar.update, should_stop=self.should_stop)
        if count is None:
            return  # stopped by a signal: nothing stored
        if self.verbosity:
            self.stdout.write(f"{day}: {count.items} actions by {count.active_users} active users")
            for action in sorted(count.counts):
                self.stdout.write(f"  {action}: {count.counts[action]} by {count.users[action]} users")

    def _parse(self, value: str | None):
        if value is None:
            return local_time(activity_services.clock()).date() - timedelta(days=1)
        try:
            return date.fromisoformat(value)
        except ValueError:
            raise CommandError(f"--date must be YYYY-MM-DD, not {value!r}.") from None

    def loop_details(self):
        return (
            f", days rolled up {settings.ACTIVITY_ROLLUP_GRACE_SECONDS:g}s after they end, "
            f"today every {settings.ACTIVITY_ROLLUP_TODAY_SECONDS:g}s"
        )

    def loop_pass(self) -> bool:
        now = activity_services.clock()
        if now - self.tables_checked >= TABLES_EVERY_SECONDS:
            # Next month's table is always ready before it starts.
            activity_tables_maintain(now=now, should_stop=self.should_stop)
            self.tables_checked = now
        for day in rollup.activity_days_due(now=now):
            if self.should_stop():
                break
            rollup.activity_rollup_day(day=day, should_stop=self.should_stop)
        return False
