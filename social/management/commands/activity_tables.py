"""`python manage.py activity_tables`: keep the activity log's monthly tables in shape."""

from __future__ import annotations

import logging

from django.core.management.base import BaseCommand
from tqdm import tqdm

from project.operations.worker_loop import stop_on_signals
from social.activity import services as activity_services
from social.activity.rotation import activity_tables_maintain

logger = logging.getLogger("social.activity")


class Command(BaseCommand):
    help = (
        "Create this and next month's activity tables (idempotent), switch months older than the previous "
        "one to the STANDARD_INFREQUENT_ACCESS table class, and export (gzipped JSON lines under "
        "ACTIVITY_EXPORT_DIR), verify and drop months past ACTIVITY_RETENTION_MONTHS. Safe to run at any "
        "time and concurrently; SIGTERM finishes the current table and exits."
    )

    def handle(self, *args, **options):
        verbosity = options.get("verbosity", 1)
        with (
            stop_on_signals(logger, finishing="the current table") as stop,
            tqdm(unit="table", disable=verbosity == 0, leave=False) as bar,
        ):
            report = activity_tables_maintain(
                now=activity_services.clock(), on_step=lambda step: bar.update(), should_stop=stop.is_set
            )
        if verbosity:
            self.stdout.write(f"Created: {', '.join(report.created) or 'none'}; ready: {', '.join(report.ready)}")
            for month, outcome in report.cooled.items():
                self.stdout.write(f"{month}: {outcome}")
            for export in report.archived:
                self.stdout.write(f"{export.month}: exported {export.items} items to {export.path}, table dropped")
            for month, state in report.s3.items():
                self.stdout.write(f"{month}: S3 export {state}")
            for month in report.kept:
                self.stderr.write(f"{month}: past retention but its export did not verify; table kept")
