from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.core.management.base import BaseCommand, CommandError

from project.deploy.cloudformation import templates_check
from project.dynamo.schema.check import tables_check
from project.dynamo.schema.create import tables_create, tables_drop_undeclared_indexes

if TYPE_CHECKING:
    from django.core.management.base import CommandParser


class Command(BaseCommand):
    help = (
        "Create every DynamoDB table the models declare (PAY_PER_REQUEST, with their indexes and TTL; on AWS "
        "with point-in-time recovery and deletion protection). Idempotent, like migrate: existing tables are "
        "left as they are, missing GSIs and TTL are added. "
        "With --check, change nothing: print the drift between the models, the live tables (on AWS also their "
        "point-in-time recovery and deletion protection) and the checked-in CloudFormation templates "
        "(deploy/aws/), and exit 1 on drift. "
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
            self._check()
            return
        reports = tables_create()
        for report in reports:
            state = "created" if report.created else "exists"
            if report.protected:
                state += f" ({' and '.join(report.protected)} switched on)"
            self.stdout.write(f"{report.table_name}: {state}")
        if drop_undeclared:
            for dropped in tables_drop_undeclared_indexes():
                self.stdout.write(f"{dropped}: dropped (no model declares it)")
        created = sum(report.created for report in reports)
        self.stdout.write(self.style.SUCCESS(f"{created} table(s) created, {len(reports) - created} already there."))

    def _check(self) -> None:
        reports = tables_check()
        drifted = [report for report in reports if report.drift]
        for report in reports:
            self.stdout.write(f"{report.table_name}: {'drift' if report.drift else 'ok'}")
            for line in report.drift:
                self.stdout.write(self.style.ERROR(f"  - {line}"))
        # What the endpoint cannot say is the same for every table: said once.
        for line in dict.fromkeys(line for report in reports for line in report.unchecked):
            self.stdout.write(self.style.WARNING(f"not checked: {line}"))
        templates = templates_check()
        for template in templates:
            if template.note:
                self.stdout.write(self.style.WARNING(f"not checked: {template.note}"))
                continue
            self.stdout.write(f"{template.shown}: {'out of date' if template.drift else 'ok'}")
            for line in template.drift:
                self.stdout.write(self.style.ERROR(f"  - {line}"))
        problems = []
        if drifted:
            problems.append(
                f"{len(drifted)} table(s) differ from the models or lack the protection the template declares"
            )
        if any(template.drift for template in templates):
            problems.append("the CloudFormation templates differ from the code")
        if problems:
            raise CommandError("; ".join(problems) + ".", returncode=1)
        compared = " and the CloudFormation templates" if all(not t.note for t in templates) else ""
        self.stdout.write(self.style.SUCCESS(f"All {len(reports)} tables match the models{compared}."))
