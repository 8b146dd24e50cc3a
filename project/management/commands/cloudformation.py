from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.core.management.base import BaseCommand, CommandError

from project.deploy.cloudformation import (
    IAM_TEMPLATE_PATH,
    TEMPLATE_PATH,
    StepError,
    path_shown,
    tables_to_import,
    template_build,
    template_differences,
    template_load,
    template_render,
    template_step,
    templates_check,
    templates_text,
)

if TYPE_CHECKING:
    from django.core.management.base import CommandParser


class Command(BaseCommand):
    help = (
        "Write the CloudFormation templates generated from the models: deploy/aws/tables.yaml (every DynamoDB "
        "table the models declare) and deploy/aws/iam.yaml (the IAM managed policies of the web process, the "
        "workers and the operators' commands); docs/how-to/deploy-on-aws.md. With --check, write nothing: exit 1 "
        "when a checked-in template differs from what the code generates. With --base DEPLOYED, write the next "
        "tables template to deploy from the deployed one towards the models, changing at most one GSI per "
        "table (CloudFormation's limit per stack update). With --resources-to-import PREFIX, print what an "
        "IMPORT change set needs to take existing tables of PREFIX into a stack."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--output-dir", type=Path, help=f"where the templates go (default {path_shown(TEMPLATE_PATH.parent)})"
        )
        parser.add_argument("--check", action="store_true", help="compare the checked-in templates (1: one differs)")
        parser.add_argument("--base", type=Path, help="the tables template deployed now: write the next step from it")
        parser.add_argument("--output", "-o", default="-", help="with --base: the step's file (`-`: standard output)")
        parser.add_argument(
            "--resources-to-import",
            metavar="PREFIX",
            help="print the --resources-to-import JSON of an IMPORT change set taking PREFIX's tables into a stack",
        )

    def handle(
        self,
        *args: Any,
        output_dir: Path | None = None,
        check: bool = False,
        base: Path | None = None,
        output: str = "-",
        resources_to_import: str | None = None,
        **options: Any,
    ) -> None:
        if resources_to_import is not None:
            self.stdout.write(json.dumps(tables_to_import(resources_to_import), indent=1))
            return
        paths = {
            TEMPLATE_PATH: output_dir / TEMPLATE_PATH.name if output_dir else TEMPLATE_PATH,
            IAM_TEMPLATE_PATH: output_dir / IAM_TEMPLATE_PATH.name if output_dir else IAM_TEMPLATE_PATH,
        }
        if check:
            self._check(paths[TEMPLATE_PATH], paths[IAM_TEMPLATE_PATH])
        elif base is not None:
            self._step(base, output)
        else:
            for default, text in templates_text().items():
                self._write(paths[default], text)

    def _check(self, tables: Path, iam: Path) -> None:
        checks = templates_check(tables=tables, iam=iam)
        for result in checks:
            if result.note:
                raise CommandError(result.note, returncode=1)
            self.stdout.write(f"{result.shown}: {'out of date' if result.drift else 'ok'}")
            for line in result.drift:
                self.stdout.write(self.style.ERROR(f"  - {line}"))
        if any(result.drift for result in checks):
            raise CommandError("A template differs from what this code generates.", returncode=1)
        self.stdout.write(self.style.SUCCESS("The templates match the models and the policies the code needs."))

    def _step(self, base: Path, output: str) -> None:
        try:
            deployed = template_load(base.read_text(encoding="utf-8"))
            step, left = template_step(deployed, template_build())
        except (OSError, StepError) as error:
            raise CommandError(str(error)) from error
        text = template_render(step)
        if output == "-":
            sys.stdout.write(text)
        else:
            Path(output).write_text(text, encoding="utf-8")
        say = self.stderr if output == "-" else self.stdout  # the template alone on standard output
        for what, whose in template_differences(deployed, step):
            say.write(f"this step: {'adds' if whose == 'want' else 'deletes'} {what}")
        for change in left:
            say.write(f"left for a later step: {change}")
        say.write(
            f"Deploy this step, then run the command again with --base naming it ({len(left)} change(s) left)."
            if left
            else "This step is the models' template: nothing left after it."
        )

    def _write(self, path: Path, text: str) -> None:
        if path.exists() and path.read_text(encoding="utf-8") == text:
            self.stdout.write(f"{path_shown(path)}: unchanged")
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        kinds = [resource["Type"] for resource in template_load(text)["Resources"].values()]
        held = {"AWS::DynamoDB::Table": "tables", "AWS::IAM::ManagedPolicy": "IAM managed policies"}
        counts = ", ".join(f"{kinds.count(kind)} {what}" for kind, what in held.items() if kind in kinds)
        self.stdout.write(f"{path_shown(path)}: written ({counts})")
