"""The DynamoDB tables and the IAM policies as CloudFormation templates, generated from the code.

`python manage.py cloudformation` writes two templates, each deployed as a stack of its own:

- deploy/aws/tables.yaml: one AWS::DynamoDB::Table per registered model
  (`project.dynamo.schema.registry.registered_models`) with the keys, attribute definitions, GSIs and LSIs
  (projections with their INCLUDE lists) and TTL attribute the model declares, the table
  itself PAY_PER_REQUEST, with point-in-time recovery, deletion protection and KMS
  encryption (the AWS managed key), kept when the stack or the resource goes
  (DeletionPolicy/UpdateReplacePolicy Retain). Table names are `${TablePrefix}<logical
  name>`, which is what DYNAMODB_TABLE_PREFIX makes.
- deploy/aws/iam.yaml: the IAM managed policies of the web process, the workers and the
  operators' commands (project/deploy/iam.py). Apart from the tables, so tables
  can be imported into a stack of their own (a restore, tables `create_tables` made).

The monthly activity tables are not in it: `activity_tables` (and the rollup worker)
create and drop them at run time; the policies allow exactly that, by name pattern.

The checked-in files are compared with what the code generates by the test suite and by
`create_tables --check` (`templates_check`), which says which side is out of date.
CloudFormation changes at most one GSI of a table per stack update: `template_step`
(`cloudformation --base`) makes the next step from the deployed template towards the models.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import yaml
from django.conf import settings
from pynamodb.models import Model

from project.deploy.iam import PREFIX_MAX_LENGTH, policy_resources
from project.dynamo.schema.registry import TableMeta, registered_models

TEMPLATE_PATH = Path(settings.BASE_DIR) / "deploy" / "aws" / "tables.yaml"
IAM_TEMPLATE_PATH = TEMPLATE_PATH.with_name("iam.yaml")
COMMAND = "python manage.py cloudformation"
HEADER = (
    "# Generated from the code by `python manage.py cloudformation`: do not edit, regenerate\n"
    "# (the test suite and `create_tables --check` compare it with what the code generates).\n"
    "# Deploy: docs/how-to/deploy-on-aws.md.\n"
)
TABLE_TYPE = "AWS::DynamoDB::Table"


def _logical_id(logical_name: str) -> str:
    return "".join(part.capitalize() for part in logical_name.split("_")) + "Table"


def _key_schema(keys: list[dict[str, str]]) -> list[dict[str, str]]:
    """HASH first, then RANGE (DynamoDB's order; PynamoDB's schema has no fixed one)."""
    return [
        {"AttributeName": key["AttributeName"], "KeyType": key["KeyType"]}
        for key in sorted(keys, key=lambda key: key["KeyType"])
    ]


def _projection(projection: dict[str, Any]) -> dict[str, Any]:
    shaped: dict[str, Any] = {"ProjectionType": projection["ProjectionType"]}
    if projection.get("NonKeyAttributes"):
        shaped["NonKeyAttributes"] = sorted(projection["NonKeyAttributes"])
    return shaped


def table_properties(model: type[Model]) -> dict[str, Any]:
    """The AWS::DynamoDB::Table properties of `model`, from the same declarations
    `Model.create_table` sends (PynamoDB's `_get_schema`, as `create_tables --check` reads)."""
    schema = cast(dict[str, Any], model._get_schema())
    definitions = {d["AttributeName"]: d["AttributeType"] for d in schema["attribute_definitions"]}
    properties: dict[str, Any] = {
        "TableName": {"Fn::Sub": f"${{TablePrefix}}{cast(TableMeta, model.Meta).logical_name}"},
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [
            {"AttributeName": name, "AttributeType": definitions[name]} for name in sorted(definitions)
        ],
        "KeySchema": _key_schema(schema["key_schema"]),
    }
    for kind, key in (
        ("GlobalSecondaryIndexes", "global_secondary_indexes"),
        ("LocalSecondaryIndexes", "local_secondary_indexes"),
    ):
        indexes = sorted(schema[key], key=lambda index: index["index_name"])
        if indexes:
            properties[kind] = [
                {
                    "IndexName": index["index_name"],
                    "KeySchema": _key_schema(index["key_schema"]),
                    "Projection": _projection(index["projection"]),
                }
                for index in indexes
            ]
    ttl = model._ttl_attribute()
    if ttl:
        properties["TimeToLiveSpecification"] = {"AttributeName": ttl.attr_name, "Enabled": True}
    properties["PointInTimeRecoverySpecification"] = {"PointInTimeRecoveryEnabled": True}
    properties["DeletionProtectionEnabled"] = True
    properties["SSESpecification"] = {"SSEEnabled": True}
    return properties


PREFIX_PARAMETER = {
    "Type": "String",
    "Description": "DYNAMODB_TABLE_PREFIX of the environment (physical name = prefix + logical name)",
    "AllowedPattern": "[A-Za-z0-9_.-]*",
    "MaxLength": PREFIX_MAX_LENGTH,
}


def template_build() -> dict[str, Any]:
    """The tables' template (deploy/aws/tables.yaml), as a dict."""
    models = registered_models()
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Description": "Dynamo Social: the DynamoDB tables the models declare.",
        "Parameters": {"TablePrefix": PREFIX_PARAMETER},
        "Resources": {
            _logical_id(cast(TableMeta, model.Meta).logical_name): {
                "Type": TABLE_TYPE,
                "DeletionPolicy": "Retain",
                "UpdateReplacePolicy": "Retain",
                "Properties": table_properties(model),
            }
            for model in models
        },
    }


def iam_template_build() -> dict[str, Any]:
    """The IAM policies' template (deploy/aws/iam.yaml), as a dict: a stack of its own, so
    tables can be imported into a stack (a restore, tables `create_tables` made) alone."""
    tables = [cast(TableMeta, model.Meta).logical_name for model in registered_models()]
    policies = policy_resources(tables)
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Description": "Dynamo Social: the IAM managed policies of the web process, the workers and the "
        "operators' commands, on the tables of one prefix.",
        "Parameters": {
            "TablePrefix": PREFIX_PARAMETER,
            "ActivityExportBucket": {
                "Type": "String",
                "Default": "",
                "Description": "ACTIVITY_EXPORT_S3_BUCKET (empty: months past retention go to files, no S3 access)",
            },
            "ActivityExportPrefix": {
                "Type": "String",
                "Default": "activity/",
                "Description": "ACTIVITY_EXPORT_S3_PREFIX",
            },
        },
        "Conditions": {"HasActivityExportBucket": {"Fn::Not": [{"Fn::Equals": [{"Ref": "ActivityExportBucket"}, ""]}]}},
        "Resources": policies,
        "Outputs": policy_outputs(policies),
    }


def policy_outputs(policies: dict[str, Any]) -> dict[str, Any]:
    """Each policy's ARN (`WebPolicyArn`, `WebPolicy2Arn`...) and each role's, comma-separated
    (`WebPolicyArns`): what to attach to the role, however many parts its policy has."""
    outputs: dict[str, Any] = {}
    for role, what in (("Web", "the web process"), ("Workers", "the workers"), ("Operators", "operators")):
        parts = [name for name in policies if re.fullmatch(rf"{role}Policy\d*", name)]
        for name in parts:
            outputs[f"{name}Arn"] = {"Description": f"{what}: attach to its role", "Value": {"Ref": name}}
        outputs[f"{role}PolicyArns"] = {
            "Description": f"every policy of {what}, comma-separated: attach each to its role",
            "Value": {"Fn::Join": [",", [{"Ref": name} for name in parts]]},
        }
    return outputs


def template_render(template: dict[str, Any]) -> str:
    return HEADER + yaml.safe_dump(template, sort_keys=False, width=120)


def templates_text() -> dict[Path, str]:
    """What `python manage.py cloudformation` writes: `{path: text}`."""
    return {TEMPLATE_PATH: template_render(template_build()), IAM_TEMPLATE_PATH: template_render(iam_template_build())}


def tables_to_import(prefix: str) -> list[dict[str, Any]]:
    """`--resources-to-import` of an IMPORT change set that takes the tables of `prefix`
    (made by `create_tables`, or restored) into a stack of tables.yaml."""
    return [
        {
            "ResourceType": TABLE_TYPE,
            "LogicalResourceId": _logical_id(name),
            "ResourceIdentifier": {"TableName": prefix + name},
        }
        for name in template_tables(template_build())
    ]


def template_load(text: str) -> dict[str, Any]:
    return cast(dict[str, Any], yaml.safe_load(text))


# --- comparing two templates (checked in / generated / deployed) ---------------------------


def _keys(schema: list[dict[str, str]]) -> str:
    return " ".join(f"{key['KeyType']} {key['AttributeName']}" for key in schema)


def template_tables(template: dict[str, Any]) -> dict[str, dict[str, str]]:
    """`{logical name: {declaration: what it is}}` of every table of a template, e.g.
    `{"comments": {"primary key": "HASH comment_id", "GSI author": "HASH author_id RANGE sort_key, KEYS_ONLY"}}`."""
    found = {}
    for resource in template.get("Resources", {}).values():
        if resource.get("Type") != TABLE_TYPE:
            continue
        properties = resource["Properties"]
        declared = {"primary key": _keys(properties["KeySchema"])}
        for kind, key in (("GSI", "GlobalSecondaryIndexes"), ("LSI", "LocalSecondaryIndexes")):
            for index in properties.get(key, []):
                projection = index["Projection"]
                included = projection.get("NonKeyAttributes")
                declared[f"{kind} {index['IndexName']}"] = (
                    f"{_keys(index['KeySchema'])}, {projection['ProjectionType']}{f' {included}' if included else ''}"
                )
        if "TimeToLiveSpecification" in properties:
            declared["TTL"] = properties["TimeToLiveSpecification"]["AttributeName"]
        found[str(properties["TableName"]["Fn::Sub"]).removeprefix("${TablePrefix}")] = declared
    return found


def template_differences(have: dict[str, Any], want: dict[str, Any]) -> list[tuple[str, str]]:
    """The tables' declarations that differ between two templates, as `(what, whose)`: "want"
    for one `want` holds and `have` lacks or holds otherwise, "have" for one only `have` holds."""
    differences = []
    have_tables, want_tables = template_tables(have), template_tables(want)
    for name in sorted(set(have_tables) | set(want_tables)):
        if name not in have_tables or name not in want_tables:
            differences.append((f"table {name}", "want" if name in want_tables else "have"))
            continue
        old, new = have_tables[name], want_tables[name]
        for declaration in sorted(set(old) | set(new)):
            if declaration not in new:
                differences.append((f"{name}: {declaration} ({old[declaration]})", "have"))
            elif old.get(declaration) != new[declaration]:
                differences.append((f"{name}: {declaration} ({new[declaration]})", "want"))
    return differences


@dataclass
class TemplateCheck:
    path: Path
    drift: list[str] = field(default_factory=list)
    note: str = ""

    @property
    def shown(self) -> str:
        return path_shown(self.path)


def path_shown(path: Path) -> str:
    """`path` as an operator reads it: relative to the checkout when inside it."""
    base, resolved = Path(settings.BASE_DIR).resolve(), path.resolve()
    return str(resolved.relative_to(base)) if resolved.is_relative_to(base) else str(path)


def templates_check(*, tables: Path | None = None, iam: Path | None = None) -> list[TemplateCheck]:
    """Compare the checked-in templates (deploy/aws/tables.yaml and iam.yaml, or the paths
    given) with what the code generates now.

    The models are the source of the tables: what they declare and the file lacks means the
    file is out of date; what the file holds and no model declares means it was generated
    from other code (a newer branch) or edited by hand. The policies come from what the code
    calls (project/deploy/iam.py): a different file is out of date, or was edited.
    """
    generated = templates_text()
    checks = []
    compared = {
        tables or TEMPLATE_PATH: generated[TEMPLATE_PATH],
        iam or IAM_TEMPLATE_PATH: generated[IAM_TEMPLATE_PATH],
    }
    for path, want in compared.items():
        check = TemplateCheck(path)
        checks.append(check)
        if not path.exists():
            check.note = f"no template at {check.shown}: not compared (generate it with `{COMMAND}`)"
            continue
        text = path.read_text(encoding="utf-8")
        if text == want:
            continue
        for what, whose in template_differences(template_load(text), template_load(want)):
            if whose == "want":
                check.drift.append(
                    f"the models declare {what}, the template does not: the template is out of date (run `{COMMAND}`)"
                )
            else:
                check.drift.append(
                    f"the template holds {what}, no model declares it: the template comes from other code or was "
                    f"edited (run `{COMMAND}` with this code, or deploy the code that declares it)"
                )
        if not check.drift:
            check.drift.append(
                f"the template differs from what `{COMMAND}` generates from this code (the policies or the "
                f"tables' properties): the template is out of date or was edited (run `{COMMAND}`)"
            )
    return checks


# --- one GSI change per table per stack update ------------------------------------------


class StepError(ValueError):
    """A change CloudFormation cannot make in place (keys, LSIs): the table must be recreated."""


def template_step(base: dict[str, Any], target: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The next template to deploy on the way from `base` (deployed) to `target` (the models):
    `target`, except that each table changes at most one GSI, additions before deletions (a
    replaced index is added, the code that reads it rolled out, and then the old one deleted).
    Returns the step and the changes left for later steps ([]: the step is `target`).
    """
    step = yaml.safe_load(yaml.safe_dump(target))  # a deep copy
    base_by_name = {
        str(r["Properties"]["TableName"]["Fn::Sub"]): r
        for r in base.get("Resources", {}).values()
        if r.get("Type") == TABLE_TYPE
    }
    left = []
    for resource in step["Resources"].values():
        if resource.get("Type") != TABLE_TYPE:
            continue
        properties = resource["Properties"]
        name = str(properties["TableName"]["Fn::Sub"])
        old = base_by_name.get(name)
        if old is None:
            continue  # a new table is created whole
        before = old["Properties"]
        if before["KeySchema"] != properties["KeySchema"] or before.get("LocalSecondaryIndexes") != properties.get(
            "LocalSecondaryIndexes"
        ):
            raise StepError(
                f"{name}: its primary key or local secondary indexes change: recreate the table "
                "(export, delete, create, import)"
            )
        old_gsis = {index["IndexName"]: index for index in before.get("GlobalSecondaryIndexes", [])}
        new_gsis = {index["IndexName"]: index for index in properties.get("GlobalSecondaryIndexes", [])}
        changed = sorted(n for n in set(old_gsis) & set(new_gsis) if old_gsis[n] != new_gsis[n])
        if changed:
            raise StepError(f"{name}: GSI {changed[0]} changes shape in place: declare it under a new name instead")
        changes = [("add", n) for n in sorted(set(new_gsis) - set(old_gsis))] + [
            ("delete", n) for n in sorted(set(old_gsis) - set(new_gsis))
        ]
        if len(changes) <= 1:
            continue
        kept = {**old_gsis}
        first, *rest = changes
        if first[0] == "add":
            kept[first[1]] = new_gsis[first[1]]
        else:
            del kept[first[1]]
        properties["GlobalSecondaryIndexes"] = [kept[n] for n in sorted(kept)]
        used = {k["AttributeName"] for k in properties["KeySchema"]} | {
            k["AttributeName"]
            for index in [*properties["GlobalSecondaryIndexes"], *properties.get("LocalSecondaryIndexes", [])]
            for k in index["KeySchema"]
        }
        types = {d["AttributeName"]: d for d in [*before["AttributeDefinitions"], *properties["AttributeDefinitions"]]}
        properties["AttributeDefinitions"] = [types[n] for n in sorted(used)]
        left += [f"{name.removeprefix('${TablePrefix}')}: {verb} GSI {index}" for verb, index in rest]
    return step, left
