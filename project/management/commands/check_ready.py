"""`python manage.py check_ready`: what /readyz checks, with what is wrong in each."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from project.operations.health import readiness_check


class Command(BaseCommand):
    help = (
        "Run the checks behind GET /readyz (DynamoDB answers, every table and index exists and is ACTIVE, "
        "no migration is pending) and print each with what is wrong. /readyz itself names only the failing "
        "checks: the details are for operators. Exit status 1 when a check fails."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        readiness = readiness_check()
        for name, result in readiness.checks.items():
            self.stdout.write(f"{name}: {result}")
        if not readiness.ready:
            raise CommandError(f"not ready: {', '.join(readiness.failing)}")
