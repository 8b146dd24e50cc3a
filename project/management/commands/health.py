"""`python manage.py health [--json]`: each polling worker's last heartbeat, backlog and lag."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from project.operations.health_selectors import worker_statuses

if TYPE_CHECKING:
    from django.core.management.base import CommandParser

    from project.operations.health_selectors import WorkerStatus


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}s" if value >= 10 else f"{value:.1f}s"


class Command(BaseCommand):
    help = (
        "Print each polling worker's processes: last heartbeat age, last cycle's duration, backlog "
        "(pending like events, counters due, feed retries due, unfinished delivery chunks, days not rolled "
        "up) and lag (age of the oldest waiting item). A worker is stale when its last heartbeat is older "
        "than WORKER_STALE_SECONDS, missing when no process has one. Exit status 1 when any worker is stale "
        "or missing, 2 when the heartbeats cannot be read. --json prints the same as one JSON object."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", dest="as_json", help="print JSON (for scripts and monitors)")

    def handle(self, *args: Any, as_json: bool = False, **options: Any) -> None:
        try:
            statuses = worker_statuses()
        except Exception as error:  # DynamoDB unreachable, the table missing: say so, no traceback
            raise CommandError(f"cannot read the heartbeats: {type(error).__name__}: {error}", returncode=2) from error
        problems = [status for status in statuses if not status.healthy]
        if as_json:
            self._print_json(statuses, problems)
        else:
            self._print_table(statuses)
        if problems:
            names = ", ".join(f"{status.worker} {status.state}" for status in problems)
            raise CommandError(f"{len(problems)} worker(s) need attention: {names}", returncode=1)
        if not as_json:
            self.stdout.write(self.style.SUCCESS(f"All {len(statuses)} worker process(es) are up."))

    def _print_json(self, statuses: list[WorkerStatus], problems: list[WorkerStatus]) -> None:
        document = {
            "healthy": not problems,
            "stale_seconds": settings.WORKER_STALE_SECONDS,
            "workers": [asdict(status) for status in statuses],
        }
        self.stdout.write(json.dumps(document, indent=2, sort_keys=True))

    def _print_table(self, statuses: list[WorkerStatus]) -> None:
        header = ("worker", "state", "process", "heartbeat", "cycle", "backlog", "lag")
        rows = [
            (
                status.worker,
                status.state.upper() if not status.healthy else status.state,
                status.instance or "-",
                f"{_seconds(status.age_seconds)} ago" if status.age_seconds is not None else "never",
                _seconds(status.cycle_seconds),
                f"{status.backlog_text} {status.backlog_label}".strip() if status.backlog is not None else "-",
                _seconds(status.lag_seconds),
            )
            for status in statuses
        ]
        widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
        for number, row in enumerate([header, *rows]):
            line = "  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
            unhealthy = number > 0 and statuses[number - 1].state != "ok"
            self.stdout.write(self.style.ERROR(line) if unhealthy else line)
