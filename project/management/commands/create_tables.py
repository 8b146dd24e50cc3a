from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.core.management.base import BaseCommand, CommandError

from project.dynamo import tables_check, tables_create, tables_drop_undeclared_indexes

if TYPE_CHECKING:
    from django.core.management.base import CommandParser


class Command(BaseCommand):
    help = (
        "Create every DynamoDB table the models declare (PAY_PER_REQUEST, with their indexes and TTL). "
        "Idempotent, like migrate: existing tables are left as they are, missing GSIs and TTL are added. "
        "With --check, change nothing: print the drift between models and live tables and exit 1 on drift. "
        "With --drop-undeclared, also delete the GSIs no model declares (an index replaced by a new one): "
        "run it once every process runs the code that reads the new index."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--check", action="store_true", help="report drift only; exit status 1 if any")
        parser.add_argument(
            "--drop-undeclared",
            action="store_true",
            help="after creating, delete GSIs that no model declares (once no process reads them any more)",
        )

    def handle(self, *args: Any, check: bool = False, drop_undeclared: bool = False, **options: Any) -> None:
        if check:
            reports = tables_check()
            drifted = [report for report in reports if report.drift]
            for report in reports:
                state = "drift" if report.drift else "ok"
                self.stdout.write(f"{report.table_name}: {state}")
                for line in report.drift:
                    self.stdout.write(self.style.ERROR(f"  - {line}"))
            if drifted:
                raise CommandError(f"{len(drifted)} table(s) differ from the models.", returncode=1)
            self.stdout.write(self.style.SUCCESS(f"All {len(reports)} tables match the models."))
            return
        reports = tables_create()
        for report in reports:
            self.stdout.write(f"{report.table_name}: {'created' if report.created else 'exists'}")
        if drop_undeclared:
            for dropped in tables_drop_undeclared_indexes():
                self.stdout.write(f"{dropped}: dropped (no model declares it)")
        created = sum(report.created for report in reports)
        self.stdout.write(self.style.SUCCESS(f"{created} table(s) created, {len(reports) - created} already there."))
