"""deploy/aws/tables.yaml and iam.yaml: the CloudFormation templates of the tables and of the
IAM policies of each process, generated from the code (`python manage.py cloudformation`);
the checks that keep them, the models and a live account together (`create_tables --check`); and the
protection `create_tables` gives the tables it creates on AWS (point-in-time recovery,
deletion protection), exercised on DynamoDB Local as far as it answers.
"""

import contextlib
import dataclasses
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast
from unittest import mock

import pytest
import yaml
from botocore.client import BaseClient
from botocore.stub import Stubber
from django.core.management import call_command
from django.core.management.base import CommandError

from project.clock import ManualClock, clock_override
from project.deploy import cloudformation
from project.deploy import iam as cloudformation_iam
from project.deploy.iam import ACTIVITY_MONTHS
from project.dynamo import clients as dynamo
from project.dynamo import wire
from project.dynamo.schema import protection
from project.dynamo.schema.describe import table_describe
from project.dynamo.schema.drift import table_drift
from project.dynamo.schema.registry import TableMeta, registered_models
from social.activity.models import ACTIVITY_TABLE_STEM

TEMPLATE = cloudformation.TEMPLATE_PATH
IAM_TEMPLATE = cloudformation.IAM_TEMPLATE_PATH
ROOT = TEMPLATE.parents[2]  # deploy/aws/tables.yaml
REGENERATE = "python manage.py cloudformation"
# IAM's limit on a managed policy's document (characters, whitespace not counted).
MANAGED_POLICY_MAX = 6144
# `aws cloudformation deploy` uploads a larger template only through an S3 bucket.
TEMPLATE_BODY_MAX = 51_200
TABLE_ARN = re.compile(
    r"^arn:\$\{AWS::Partition\}:dynamodb:\$\{AWS::Region\}:\$\{AWS::AccountId\}:table/"
    r"\$\{TablePrefix\}(?P<table>[A-Za-z0-9_.?-]+)(?P<sub>/index/\*|/export/\*)?$"
)
CONTROL_PLANE_WRITES = {"CreateTable", "UpdateTable", "DeleteTable", "UpdateTimeToLive", "UpdateContinuousBackups"}


def _template() -> dict:
    return yaml.safe_load(TEMPLATE.read_text(encoding="utf-8"))


def _iam_template() -> dict:
    return yaml.safe_load(IAM_TEMPLATE.read_text(encoding="utf-8"))


def _logical_names() -> set[str]:
    return {cast(TableMeta, model.Meta).logical_name for model in registered_models()}


def _policies(template: dict) -> dict[str, list[dict]]:
    return {
        name: resource["Properties"]["PolicyDocument"]["Statement"]
        for name, resource in template["Resources"].items()
        if resource["Type"] == "AWS::IAM::ManagedPolicy"
    }


ROLES = ("Web", "Workers", "Operators")


def _role_policies(template: dict) -> dict[str, list[dict]]:
    """Every role's statements, over all its parts (`WebPolicy`, `WebPolicy2`...)."""
    return {
        role: [
            statement
            for name, statements in _policies(template).items()
            if re.fullmatch(rf"{role}Policy\d*", name)
            for statement in statements
        ]
        for role in ROLES
    }


def _table_statements(statements: list[dict]) -> list[tuple[set[str], list[str]]]:
    """(actions without `dynamodb:`, resources as Fn::Sub strings) of every DynamoDB statement on tables."""
    found = []
    for statement in statements:
        if "Fn::If" in statement or statement["Resource"] == "*":
            continue
        actions = {action.removeprefix("dynamodb:") for action in statement["Action"]}
        found.append((actions, [resource["Fn::Sub"] for resource in statement["Resource"]]))
    return found


# --- the checked-in template --------------------------------------------------------------


def test_the_checked_in_templates_are_what_the_code_generates():
    for check in cloudformation.templates_check():
        assert not check.note, check.note
        assert check.drift == [], f"{check.shown} is out of date: run `{REGENERATE}`\n" + "\n".join(check.drift)
    for path, text in cloudformation.templates_text().items():
        assert path.read_text(encoding="utf-8") == text


def test_cfn_lint_passes_on_the_templates_offline():
    cfn_lint = Path(sys.executable).parent / "cfn-lint"
    command = str(cfn_lint) if cfn_lint.exists() else shutil.which("cfn-lint")
    assert command, "cfn-lint is pinned in requirements.txt: run make install"
    # A proxy nobody listens on: any attempt to reach the network would fail the run.
    offline = {**os.environ, "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}
    result = subprocess.run(
        [command, "--", str(TEMPLATE), str(IAM_TEMPLATE)],
        capture_output=True,
        text=True,
        timeout=300,
        env=offline,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_model_has_its_table_in_the_template_as_create_tables_made_it():
    """The template's keys, indexes (with their projections) and TTL equal the live tables that
    `create_tables` made on DynamoDB Local from the same models."""
    tables = cloudformation.template_tables(_template())
    assert set(tables) == _logical_names()
    client = dynamo.client()

    def keys(schema: list[dict]) -> str:
        ordered = sorted(schema, key=lambda key: key["KeyType"])  # HASH first
        return " ".join(f"{key['KeyType']} {key['AttributeName']}" for key in ordered)

    for model in registered_models():
        live = client.describe_table(TableName=model.Meta.table_name)["Table"]
        declared = {"primary key": keys(live["KeySchema"])}
        for kind, key in (("GSI", "GlobalSecondaryIndexes"), ("LSI", "LocalSecondaryIndexes")):
            for index in live.get(key, []):
                projection = index["Projection"]
                included = sorted(projection.get("NonKeyAttributes", []))
                declared[f"{kind} {index['IndexName']}"] = (
                    f"{keys(index['KeySchema'])}, {projection['ProjectionType']}{f' {included}' if included else ''}"
                )
        ttl = client.describe_time_to_live(TableName=model.Meta.table_name)["TimeToLiveDescription"]
        if ttl.get("TimeToLiveStatus") == "ENABLED":
            declared["TTL"] = ttl["AttributeName"]
        assert tables[model.Meta.logical_name] == declared, model.Meta.logical_name


def test_every_table_is_on_demand_protected_encrypted_and_retained():
    for resource in _template()["Resources"].values():
        if resource["Type"] != "AWS::DynamoDB::Table":
            continue
        properties = resource["Properties"]
        assert resource["DeletionPolicy"] == resource["UpdateReplacePolicy"] == "Retain"
        assert properties["BillingMode"] == "PAY_PER_REQUEST"
        assert properties["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
        assert properties["DeletionProtectionEnabled"] is True
        assert properties["SSESpecification"] == {"SSEEnabled": True}
        assert properties["TableName"]["Fn::Sub"].startswith("${TablePrefix}")


def test_tables_made_from_the_template_match_the_models():
    """Create every table of the template on DynamoDB Local, under a prefix of its own, as
    CloudFormation would: `create_tables --check`'s comparison finds no drift."""
    client = dynamo.client()
    prefix = "cfn_"
    models = {model.Meta.logical_name: model for model in registered_models()}
    made = []
    try:
        for resource in _template()["Resources"].values():
            if resource["Type"] != "AWS::DynamoDB::Table":
                continue
            properties = resource["Properties"]
            name = properties["TableName"]["Fn::Sub"].replace("${TablePrefix}", prefix)
            passed = ("AttributeDefinitions", "KeySchema", "GlobalSecondaryIndexes", "LocalSecondaryIndexes")
            client.create_table(
                TableName=name,
                BillingMode=properties["BillingMode"],
                DeletionProtectionEnabled=properties["DeletionProtectionEnabled"],
                **{key: properties[key] for key in passed if key in properties},
            )
            made.append(name)
            if "TimeToLiveSpecification" in properties:
                client.update_time_to_live(
                    TableName=name, TimeToLiveSpecification=properties["TimeToLiveSpecification"]
                )
            description = client.describe_table(TableName=name)["Table"]
            assert description["DeletionProtectionEnabled"] is True
            ttl = client.describe_time_to_live(TableName=name)
            model = models[name.removeprefix(prefix)]
            assert table_drift(model, description, ttl) == [], name
        assert {name.removeprefix(prefix) for name in made} == set(models)
    finally:
        for name in made:
            client.update_table(TableName=name, DeletionProtectionEnabled=False)
            client.delete_table(TableName=name)


def test_the_templates_fit_a_direct_upload():
    for path in (TEMPLATE, IAM_TEMPLATE):
        size = len(path.read_bytes())
        assert size < TEMPLATE_BODY_MAX, (
            f"{path.name}: {size} bytes: `aws cloudformation deploy` would need --s3-bucket"
        )


# --- the IAM policies ---------------------------------------------------------------------


def test_the_monthly_activity_tables_pattern_is_the_activity_logs():
    assert ACTIVITY_MONTHS == f"{ACTIVITY_TABLE_STEM}??????"
    assert fnmatch.fnmatchcase("activity_202611", ACTIVITY_MONTHS)
    assert not fnmatch.fnmatchcase("activity_2026111", ACTIVITY_MONTHS)


def test_policies_name_only_the_projects_tables():
    allowed = _logical_names() | {ACTIVITY_MONTHS}
    template = _iam_template()
    policies = _policies(template)
    # Each role's parts are numbered from its first, which keeps the name of a single policy.
    parts = {role: [name for name in policies if re.fullmatch(rf"{role}Policy\d*", name)] for role in ROLES}
    assert sorted(name for names in parts.values() for name in names) == sorted(policies)
    for role, names in parts.items():
        assert names == [f"{role}Policy", *(f"{role}Policy{n}" for n in range(2, len(names) + 1))]
        assert len(names) <= cloudformation_iam.ROLE_POLICIES_MAX
        # What to attach to the role: every part, in one output.
        joined = template["Outputs"][f"{role}PolicyArns"]["Value"]
        assert joined == {"Fn::Join": [",", [{"Ref": name} for name in names]]}
    assert not _policies(_template())  # the tables' stack holds tables only
    for name, statements in policies.items():
        for statement in statements:
            assert "Deny" not in json.dumps(statement)
            if "Fn::If" in statement:  # the S3 export of activity months, only with a bucket
                condition, export, otherwise = statement["Fn::If"]
                assert (condition, otherwise) == ("HasActivityExportBucket", {"Ref": "AWS::NoValue"})
                assert export["Resource"] == {
                    "Fn::Sub": "arn:${AWS::Partition}:s3:::${ActivityExportBucket}/${ActivityExportPrefix}*"
                }
                assert name != "WebPolicy"
                continue
            if statement["Resource"] == "*":  # calls that take no table
                assert set(statement["Action"]) <= {"dynamodb:ListTables", "dynamodb:ListExports"}
                continue
            for resource in statement["Resource"]:
                match = TABLE_ARN.match(resource["Fn::Sub"])
                assert match, f"{name}: {resource}"
                assert match["table"] in allowed, f"{name} names a table no model declares: {resource}"
                if match["sub"] == "/export/*":
                    assert statement["Action"] == ["dynamodb:DescribeExport"]


def test_each_role_has_only_what_its_processes_call():
    policies = {
        f"{role}Policy": _table_statements(statements) for role, statements in _role_policies(_iam_template()).items()
    }

    def actions_on(policy: str, table: str, sub: str = "") -> set[str]:
        wanted = f"${{TablePrefix}}{table}{sub}"
        return {
            action
            for actions, resources in policies[policy]
            for action in actions
            if any(r.endswith(f"table/{wanted}") for r in resources)
        }

    # The web process changes no table and deletes none; it writes its data.
    web = set().union(*(actions for actions, _ in policies["WebPolicy"]))
    assert not web & CONTROL_PLANE_WRITES
    assert "Scan" not in web
    assert actions_on("WebPolicy", "comments", "/index/*") == {"Query"}
    assert {"PutItem", "UpdateItem", "GetItem", "BatchGetItem"} <= actions_on("WebPolicy", "comments")
    # Tables are deleted by nobody; a month's activity table by its life cycle only.
    for policy in policies:
        for table in _logical_names():
            assert "DeleteTable" not in actions_on(policy, table), (policy, table)
    assert "DeleteTable" in actions_on("WorkersPolicy", ACTIVITY_MONTHS)
    assert "DeleteTable" in actions_on("OperatorsPolicy", ACTIVITY_MONTHS)
    assert "CreateTable" not in actions_on("WebPolicy", ACTIVITY_MONTHS)
    # create_tables creates and checks every declared table; the workers create none of them.
    for table in _logical_names():
        assert {"CreateTable", "DescribeTable", "UpdateTable", "UpdateTimeToLive"} <= actions_on(
            "OperatorsPolicy", table
        )
        assert "CreateTable" not in actions_on("WorkersPolicy", table)
    # The folder's Scan of pending like events is the only Scan the processes make.
    assert actions_on("WorkersPolicy", "like_events") >= {"Scan", "Query", "BatchWriteItem"}


def _worst_case(value, longest_prefix: str):
    """A policy as IAM stores it with the longest names it can hold: the longest prefix the
    template allows, a long partition, region and bucket."""
    if isinstance(value, dict):
        if "Fn::Sub" in value:
            text = value["Fn::Sub"]
            for name, filled in {
                "AWS::Partition": "aws-us-gov",
                "AWS::Region": "ap-southeast-5",
                "AWS::AccountId": "123456789012",
                "TablePrefix": longest_prefix,
                "ActivityExportBucket": "b" * 63,
                "ActivityExportPrefix": "activity/",
            }.items():
                text = text.replace(f"${{{name}}}", filled)
            return text
        if "Fn::If" in value:
            return _worst_case(value["Fn::If"][1], longest_prefix)
        return {key: _worst_case(item, longest_prefix) for key, item in value.items()}
    if isinstance(value, list):
        return [_worst_case(item, longest_prefix) for item in value]
    return value


def test_every_policy_fits_iams_managed_policy_size():
    template = _iam_template()
    longest_prefix = "p" * template["Parameters"]["TablePrefix"]["MaxLength"]
    assert _template()["Parameters"]["TablePrefix"] == template["Parameters"]["TablePrefix"]
    for name, resource in template["Resources"].items():
        if resource["Type"] != "AWS::IAM::ManagedPolicy":
            continue
        document = json.dumps(_worst_case(resource["Properties"]["PolicyDocument"], longest_prefix))
        size = len(re.sub(r"\s", "", document))
        assert size <= MANAGED_POLICY_MAX, f"{name}: {size} characters (IAM takes {MANAGED_POLICY_MAX})"
        assert cloudformation_iam.policy_size(resource["Properties"]["PolicyDocument"]) == size


def test_the_deploy_guide_names_every_policy_to_attach():
    guide = (ROOT / "docs" / "how-to" / "deploy-on-aws.md").read_text(encoding="utf-8")
    for name in _policies(_iam_template()):
        assert f"`{name}`" in guide, f"docs/how-to/deploy-on-aws.md does not name {name}: a role would miss it"


def test_a_role_outgrowing_one_policy_gets_several_split_by_table(monkeypatch):
    """Eighty tables read and written by the workers: as many parts as they need, each within
    the budget, every grant in exactly one part and a table's grants never divided, the same
    split every time; the role-wide statements (ListTables, the S3 export) in the first part only."""
    tables = [f"table_{n:02}" for n in range(80)]
    grants = ("GetItem", "Query", cloudformation_iam.INDEX_QUERY, "PutItem", "UpdateItem")
    monkeypatch.setitem(cloudformation_iam.ACCESS, "workers", dict.fromkeys(tables, grants))
    monkeypatch.setitem(cloudformation_iam.ACCESS, "web", {})
    documents = cloudformation_iam.policy_documents("workers", tables)
    assert 2 < len(documents) <= cloudformation_iam.ROLE_POLICIES_MAX
    assert documents == cloudformation_iam.policy_documents("workers", tables)
    held: dict[str, int] = {}
    granted: dict[str, set[str]] = {}
    for part, document in enumerate(documents):
        assert cloudformation_iam.policy_size(document) <= cloudformation_iam.POLICY_BUDGET < MANAGED_POLICY_MAX
        role_wide = [s for s in document["Statement"] if "Fn::If" in s or s["Resource"] == "*"]
        assert len(role_wide) == (2 if part == 0 else 0)
        for actions, resources in _table_statements(document["Statement"]):
            for resource in resources:
                path = resource.split(":table/", 1)[1]
                table = path.split("/", 1)[0]
                assert held.setdefault(table, part) == part, f"{table} is in parts {held[table]} and {part}"
                granted.setdefault(path, set()).update(actions)
    assert granted == cloudformation_iam.role_access("workers", tables)


# --- what the eraser and the export call, recorded, against their role's policies -------------

# IAM authorizes a transaction action by action.
TRANSACTION_ACTIONS = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
    "Get": "GetItem",
}
# What the recorded calls are checked against: the account and region are any, the prefix the suite's.
FILLED = {"AWS::Partition": "aws", "AWS::Region": "eu-west-1", "AWS::AccountId": "123456789012"}


def _authorized_requests(operation: str, params: dict) -> list[tuple[str, str, str]]:
    """(IAM action, table, index or "") that IAM authorizes for one DynamoDB call."""
    if operation in ("TransactWriteItems", "TransactGetItems"):
        return [
            (TRANSACTION_ACTIONS[kind], body["TableName"], "")
            for action in params["TransactItems"]
            for kind, body in action.items()
        ]
    if operation in ("BatchGetItem", "BatchWriteItem"):
        return [(operation, table, "") for table in params["RequestItems"]]
    if "TableName" in params:
        return [(operation, params["TableName"], params.get("IndexName", ""))]
    return [(operation, "", "")]  # ListTables, ListExports: no table


@contextlib.contextmanager
def _recording(who: dict[str, str]) -> Iterator[set[tuple[str, str, str, str]]]:
    """Every DynamoDB request made meanwhile, as (who["now"], IAM action, table, index).

    Wraps the one method every botocore client call goes through, so the clients made before
    (PynamoDB caches one per model and thread, the activity months' models theirs) are
    recorded too: an event handler registered now would reach only clients made after it,
    as botocore copies its session's handlers into each client it makes.
    """
    calls: set[tuple[str, str, str, str]] = set()
    # Private in botocore's type stubs, yet the one call PynamoDB itself makes on a client.
    sending = wire.make_api_call

    def recorded(client: BaseClient, operation: str, params: dict) -> Any:
        if client.meta.service_model.service_name == "dynamodb":
            calls.update((who["now"], *request) for request in _authorized_requests(operation, params))
        return sending(client, operation, params)

    with mock.patch.object(wire, "make_api_call", recorded):
        yield calls


def _role_statements(role: str) -> list[dict]:
    """Every statement of the role's policies (`WorkersPolicy`, `WorkersPolicy2`...), conditions met."""
    return [
        statement["Fn::If"][1] if "Fn::If" in statement else statement
        for name, statements in _policies(_iam_template()).items()
        if re.fullmatch(rf"{role}Policy\d*", name)
        for statement in statements
    ]


def _filled(resource: dict | str) -> str:
    if resource == "*":
        return "*"
    text = cast(dict, resource)["Fn::Sub"]
    for name, value in {**FILLED, "TablePrefix": dynamo.endpoint().prefix}.items():
        text = text.replace(f"${{{name}}}", value)
    return text


def _resources(statement: dict) -> list:
    return statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]


def _refused(statements: list[dict], calls: set[tuple[str, str, str, str]]) -> list[str]:
    """The recorded calls no statement allows (IAM's `*` and `?` read as fnmatch's)."""
    refused = []
    for who, action, table, index in sorted(calls):
        arn = "*"
        if table:
            arn = f"arn:aws:dynamodb:{FILLED['AWS::Region']}:{FILLED['AWS::AccountId']}:table/{table}"
            arn += f"/index/{index}" if index else ""
        if not any(
            statement["Effect"] == "Allow"
            and any(fnmatch.fnmatchcase(f"dynamodb:{action}", allowed) for allowed in statement["Action"])
            and any(fnmatch.fnmatchcase(arn, _filled(resource)) for resource in _resources(statement))
            for statement in statements
        ):
            logical = table.removeprefix(dynamo.endpoint().prefix)
            refused.append(f"{who}: {action} on {logical}{f' index {index}' if index else ''}")
    return refused


def _role_of_program(program: str) -> str:
    """The role whose policies a program of deploy/supervisord.conf runs with: gunicorn the
    web's, every other program the workers' (deploy/entrypoint.sh `workers`, the systemd units)."""
    config = (ROOT / "deploy" / "supervisord.conf").read_text(encoding="utf-8")
    [group] = re.findall(r"^programs=(.+)$", config, flags=re.MULTILINE)
    assert program in group.split(","), f"{program} is not a program of deploy/supervisord.conf"
    return "Web" if program == "web" else "Workers"


def _someone_with_everything(make_user) -> tuple[Any, Any]:
    """Alice, who has an item in every table an eraser step or an export section reads
    (so each step deletes, not only looks), and Bob, the other side of her likes and replies."""
    from actions.comments import comment_create
    from delivery import preparation
    from delivery import services as deliveries
    from notifications.feed.events import FeedEvent
    from notifications.feed.services import feed_retry_item
    from notifications.mail.queue import mail_queue_item
    from notifications.models import Send
    from notifications.preferences.services import preferences_update, thread_mute, thread_watch
    from notifications.services import like_notifications_mark_read
    from social.models import Relation
    from social.moderation.services import report_create
    from tests.notifications.helpers import like, post, uid

    alice, bob = make_user("alice"), make_user("bob")
    staff = make_user("staff", is_staff=True)
    bobs = post(bob, "Bob's")
    like(alice, bobs)
    answered, read_one = post(alice, "Alice, answered"), post(alice, "Alice, read")
    post(alice, "Alice, alone")
    comment_create(author_id=uid(bob), body="Bob's reply", parent_id=answered)
    like(bob, answered)
    like(bob, read_one)
    like_notifications_mark_read(user_id=uid(alice), comment_ids=[read_one])
    preferences_update(user_id=uid(alice), patch={"kinds": {"reply": {"email": True}}})
    thread_mute(user_id=uid(alice), thread_id=bobs)
    thread_watch(user_id=uid(alice), thread_id=answered)
    Relation(uid(alice), uid(bob), blocked_at=1).save()
    report_create(comment_id=bobs, reporter_id=uid(alice), reason="spam")
    event = FeedEvent("reply#test", "reply", uid(bob), None, body="A reply")
    feed_retry_item(user_id=uid(alice), event=event, delay_ms=3_600_000).save()
    mail_queue_item(user_id=uid(alice), kind="reply", source="reply#test", entry_id="e", due_ms=0).save()
    Send(uid(alice), "email#reply#test", channel="email", source="reply#test", kind="reply", state="sent", at=1).save()
    audience = deliveries.Audience(kind="usernames", usernames=("alice",))
    delivery = deliveries.delivery_create(
        title="Closed", body="Closed Friday.", url=None, audience=audience, created_by=staff
    )
    preparation.delivery_prepare(delivery_id=delivery.delivery_id)  # her target pending: nothing dispatched
    return alice, bob


def test_the_eraser_calls_only_what_the_workers_policies_allow(make_user, settings, monkeypatch):
    """`erase_accounts` runs every eraser step of a person holding something in every table;
    each DynamoDB request it makes (operation, table, index) is allowed by the policies of the
    role that runs it."""
    from project.identity.erasure import erasure_steps
    from social.account import services
    from social.models import AccountDeletion

    settings.ACCOUNT_DELETION_DELAY_SECONDS = 0
    alice, _ = _someone_with_everything(make_user)
    AccountDeletion.objects.create(user_id=alice.pk, requested_at=services._now())
    who = {"now": "erase_accounts"}

    def attributed(step):
        def run(**kwargs):
            who["now"] = f"eraser step {step.name}"
            try:
                return step.run(**kwargs)
            finally:
                who["now"] = "erase_accounts"

        return dataclasses.replace(step, run=run)

    monkeypatch.setattr(services, "erasure_steps", lambda: [attributed(step) for step in erasure_steps()])
    with _recording(who) as calls:
        call_command("erase_accounts")
    assert services.account_deletions_pending() == 0
    steps = {step.name for step in erasure_steps()}
    assert {who.removeprefix("eraser step ") for who, *_ in calls} >= steps, "a step made no DynamoDB call"
    likes = f"{dynamo.endpoint().prefix}likes"
    assert ("eraser step likes", "Query", likes, "by_user") in calls
    refused = _refused(_role_statements(_role_of_program("erase_accounts")), calls)
    assert not refused, "not allowed by the workers' policies:\n" + "\n".join(refused)


def test_the_export_calls_only_what_the_web_policies_allow(make_user, api, settings, monkeypatch):
    """GET /api/me/export/ (every export section, streamed) of a person holding something in
    every table: each DynamoDB request of the answer is allowed by the web's policies."""
    from project.identity.erasure import export_sections
    from social.account import selectors

    alice, _ = _someone_with_everything(make_user)
    settings.RATE_LIMITS_ENABLED = True  # the export's limit is read and counted too
    who = {"now": "GET /api/me/export/"}

    def attributed(section):
        def read(**kwargs):
            who["now"] = f"export section {section.name}"
            try:
                yield from section.read(**kwargs)
            finally:
                who["now"] = "GET /api/me/export/"

        return dataclasses.replace(section, read=read)

    monkeypatch.setattr(selectors, "export_sections", lambda: [attributed(section) for section in export_sections()])
    client = api.as_user(alice)
    with _recording(who) as calls:
        answer = client.get("/api/me/export/")
        document = json.loads(b"".join(answer.streaming_content))
    assert answer.status_code == 200 and document["reports"] and document["likes"]
    # The profile is the relational user row; every other section reads DynamoDB.
    sections = {section.name for section in export_sections()} - {"profile"}
    assert {who.removeprefix("export section ") for who, *_ in calls} >= sections, "a section made no DynamoDB call"
    reports = f"{dynamo.endpoint().prefix}reports"
    assert ("export section reports", "Query", reports, "by_reporter") in calls
    refused = _refused(_role_statements(_role_of_program("web")), calls)
    assert not refused, "not allowed by the web's policies:\n" + "\n".join(refused)


# --- which side is out of date ---------------------------------------------------------------


def _edited(tmp_path: Path, edit, *, iam: bool = False) -> Path:
    template = _iam_template() if iam else _template()
    edit(template)
    path = tmp_path / ("iam.yaml" if iam else "tables.yaml")
    path.write_text(cloudformation.template_render(template), encoding="utf-8")
    return path


def _drift(*, tables: Path | None = None, iam: Path | None = None) -> list[str]:
    return [line for check in cloudformation.templates_check(tables=tables, iam=iam) for line in check.drift]


def _table(template: dict, logical_name: str) -> dict:
    return template["Resources"][cloudformation._logical_id(logical_name)]["Properties"]


def test_a_template_lacking_an_index_is_out_of_date(tmp_path):
    def drop_timeline(template):
        comments = _table(template, "comments")
        comments["GlobalSecondaryIndexes"] = [
            index for index in comments["GlobalSecondaryIndexes"] if index["IndexName"] != "timeline"
        ]

    [line] = _drift(tables=_edited(tmp_path, drop_timeline))
    assert "the models declare comments: GSI timeline" in line
    assert "the template is out of date" in line and REGENERATE in line


def test_a_template_holding_an_undeclared_index_comes_from_other_code(tmp_path):
    def add_old_ranking(template):
        totals = _table(template, "counter_totals")
        old = {**totals["GlobalSecondaryIndexes"][1], "IndexName": "ranking", "Projection": {"ProjectionType": "ALL"}}
        totals["GlobalSecondaryIndexes"].append(old)

    [line] = _drift(tables=_edited(tmp_path, add_old_ranking))
    assert "the template holds counter_totals: GSI ranking" in line and "no model declares it" in line


def test_other_policies_than_the_code_needs_are_out_of_date(tmp_path):
    def widen(template):
        template["Resources"]["WebPolicy"]["Properties"]["PolicyDocument"]["Statement"][0]["Action"].append(
            "dynamodb:DeleteTable"
        )

    [line] = _drift(iam=_edited(tmp_path, widen, iam=True))
    assert "differs from what" in line and "out of date or was edited" in line and REGENERATE in line


def test_cloudformation_writes_and_checks_the_templates(tmp_path, capsys):
    call_command("cloudformation", "--check")
    out = capsys.readouterr().out
    assert "deploy/aws/tables.yaml: ok" in out and "deploy/aws/iam.yaml: ok" in out
    call_command("cloudformation", "--output-dir", str(tmp_path))
    assert (tmp_path / "tables.yaml").read_text(encoding="utf-8") == TEMPLATE.read_text(encoding="utf-8")
    assert (tmp_path / "iam.yaml").read_text(encoding="utf-8") == IAM_TEMPLATE.read_text(encoding="utf-8")
    out = capsys.readouterr().out
    assert f"tables.yaml: written ({len(_logical_names())} tables)" in out
    assert f"iam.yaml: written ({len(_policies(_iam_template()))} IAM managed policies)" in out
    call_command("cloudformation", "--output-dir", str(tmp_path))
    assert capsys.readouterr().out.count(": unchanged") == 2
    (tmp_path / "tables.yaml").write_text("AWSTemplateFormatVersion: '2010-09-09'\n", encoding="utf-8")
    with pytest.raises(CommandError, match="differs from what this code generates") as failed:
        call_command("cloudformation", "--check", "--output-dir", str(tmp_path))
    assert failed.value.returncode == 1
    assert "tables.yaml: out of date" in capsys.readouterr().out


# --- create_tables --check: models, templates, live account ------------------------------------


def test_check_compares_the_templates_and_says_what_dynamodb_local_cannot(capsys):
    call_command("create_tables", "--check")
    out = capsys.readouterr().out
    assert "deploy/aws/tables.yaml: ok" in out and "deploy/aws/iam.yaml: ok" in out
    assert "not checked: point-in-time recovery and deletion protection: expected on AWS only" in out
    assert "match the models and the CloudFormation templates" in out


def test_check_fails_on_an_out_of_date_template(tmp_path, monkeypatch, capsys):
    def drop_ttl(template):
        del _table(template, "limits")["TimeToLiveSpecification"]

    monkeypatch.setattr(cloudformation, "TEMPLATE_PATH", _edited(tmp_path, drop_ttl))
    with pytest.raises(CommandError, match="the CloudFormation templates differ from the code") as failed:
        call_command("create_tables", "--check")
    assert failed.value.returncode == 1
    out = capsys.readouterr().out
    assert "tables.yaml: out of date" in out
    assert "the models declare limits: TTL (expires_at)" in out


@pytest.fixture
def on_aws(monkeypatch):
    """Protection expected as on AWS, on DynamoDB Local (which answers deletion protection, not PITR)."""
    monkeypatch.setattr(protection, "endpoint_is_aws", lambda: True)


def test_on_aws_create_tables_protects_what_it_creates_and_check_reports_the_rest(on_aws, capsys):
    from social.models import Like

    client = dynamo.client()
    name = Like.Meta.table_name
    client.delete_table(TableName=name)
    try:
        call_command("create_tables")
        assert f"{name}: created (deletion protection switched on)" in capsys.readouterr().out
        assert client.describe_table(TableName=name)["Table"]["DeletionProtectionEnabled"] is True
        with pytest.raises(CommandError, match="table\\(s\\) differ from the models"):
            call_command("create_tables", "--check")
        out = capsys.readouterr().out
        assert f"{name}: ok" in out
        assert "deletion protection is off" in out  # the tables the suite made before, unprotected
        assert "not checked: point-in-time recovery: the endpoint does not answer DescribeContinuousBackups" in out
        with pytest.raises(client.exceptions.ClientError, match="protected against deletion"):
            client.delete_table(TableName=name)
    finally:
        protection.table_unprotect(name)


def test_on_aws_a_months_activity_table_is_protected_and_unprotected_to_be_dropped(on_aws):
    from social.activity.month_tables import activity_table_drop, activity_table_ensure, activity_tables_forget

    month = "209901"
    name = dynamo.table_name(f"{ACTIVITY_TABLE_STEM}{month}")
    try:
        assert activity_table_ensure(month=month) is True
        assert table_describe(name)["DeletionProtectionEnabled"] is True
        activity_table_drop(month=month)
        assert table_describe(name) is None
    finally:
        if table_describe(name):
            protection.table_unprotect(name)
            dynamo.client().delete_table(TableName=name)
        activity_tables_forget()


def test_pitr_is_retried_while_aws_still_enables_backups_of_a_new_table(on_aws):
    """Right after CreateTable AWS may answer ContinuousBackupsUnavailableException: the
    protection waits (on the project's clock) and tries again."""
    client = dynamo.client()
    table = {"TableName": "prod_likes"}
    pitr_off = {
        "ContinuousBackupsDescription": {
            "ContinuousBackupsStatus": "ENABLED",
            "PointInTimeRecoveryDescription": {"PointInTimeRecoveryStatus": "DISABLED"},
        }
    }
    pitr_on = {"ContinuousBackupsDescription": {"ContinuousBackupsStatus": "ENABLED"}}
    manual = ManualClock()
    started = manual.now()
    with Stubber(client) as stub, clock_override(manual):
        stub.add_response("describe_table", {"Table": {**table, "DeletionProtectionEnabled": False}}, table)
        stub.add_response("describe_continuous_backups", pitr_off, table)
        stub.add_client_error("update_continuous_backups", service_error_code="ContinuousBackupsUnavailableException")
        stub.add_response("update_continuous_backups", pitr_on)
        stub.add_response("update_table", {"TableDescription": table}, {**table, "DeletionProtectionEnabled": True})
        assert protection.table_protect("prod_likes") == ["point-in-time recovery", "deletion protection"]
        stub.assert_no_pending_responses()
    assert manual.now() - started == protection.PITR_RETRY_SECONDS


def test_off_aws_nothing_is_protected():
    assert protection.endpoint_is_aws() is False  # the suite's DynamoDB Local
    assert protection.table_protect(dynamo.table_name("likes")) == []


# --- one GSI change per table per stack update ---------------------------------------------------


def test_steps_change_one_gsi_per_table_and_add_before_they_delete(tmp_path, capsys):
    target = cloudformation.template_build()
    deployed = yaml.safe_load(yaml.safe_dump(target))
    comments = _table(deployed, "comments")
    kept = ("author", "profile")  # two comments GSIs to add: timeline and replies
    comments["GlobalSecondaryIndexes"] = [i for i in comments["GlobalSecondaryIndexes"] if i["IndexName"] in kept]
    totals = _table(deployed, "counter_totals")
    [ranking] = [i for i in totals["GlobalSecondaryIndexes"] if i["IndexName"] == "ranking_by_total"]
    ranking.update(IndexName="ranking", Projection={"ProjectionType": "ALL"})  # the earlier shape

    steps = []
    base = deployed
    while True:
        step, left = cloudformation.template_step(base, target)
        changes = cloudformation.template_differences(base, step)
        per_table = [what.split(":")[0] for what, _ in changes]
        assert len(per_table) == len(set(per_table)), changes  # at most one change per table
        steps.append(changes)
        base = step
        if not left:
            break
    assert base == target
    assert len(steps) == 2
    first = dict(steps[0])
    assert (
        first[
            "counter_totals: GSI ranking_by_total (HASH rank_part RANGE rank_sort, INCLUDE "
            "['aggregated_at', 'object_id', 'total'])"
        ]
        == "want"
    )  # added; the old one kept
    assert [what for what, _ in steps[1] if what.startswith("counter_totals")] == [
        "counter_totals: GSI ranking (HASH rank_part RANGE rank_sort, ALL)"
    ]  # deleted in the second step

    path = tmp_path / "deployed.yaml"
    path.write_text(cloudformation.template_render(deployed), encoding="utf-8")
    out_path = tmp_path / "step.yaml"
    call_command("cloudformation", "--base", str(path), "--output", str(out_path))
    out = capsys.readouterr().out
    assert "this step: adds counter_totals: GSI ranking_by_total" in out
    assert "left for a later step: counter_totals: delete GSI ranking" in out
    assert "Deploy this step" in out
    written = cloudformation.template_load(out_path.read_text(encoding="utf-8"))
    assert {i["IndexName"] for i in _table(written, "counter_totals")["GlobalSecondaryIndexes"]} == {
        "due",
        "ranking",
        "ranking_by_total",
    }


def test_a_changed_key_or_lsi_cannot_be_stepped():
    target = cloudformation.template_build()
    deployed = yaml.safe_load(yaml.safe_dump(target))
    del _table(deployed, "unread_counts")["LocalSecondaryIndexes"]
    with pytest.raises(cloudformation.StepError, match="recreate the table"):
        cloudformation.template_step(deployed, target)


def test_on_aws_a_table_without_pitr_is_drift(on_aws):
    client = dynamo.client()
    pitr_off = {
        "ContinuousBackupsDescription": {
            "ContinuousBackupsStatus": "ENABLED",
            "PointInTimeRecoveryDescription": {"PointInTimeRecoveryStatus": "DISABLED"},
        }
    }
    with Stubber(client) as stub:
        stub.add_response("describe_continuous_backups", pitr_off, {"TableName": "prod_likes"})
        check = protection.table_protection_drift("prod_likes", {"DeletionProtectionEnabled": True})
    assert [line.split(" (")[0] for line in check.drift] == ["point-in-time recovery is off"]
    assert check.unchecked == []


def test_the_generator_refuses_a_table_no_process_uses():
    from project.deploy.iam import role_access

    tables = sorted(_logical_names())
    with pytest.raises(ValueError, match=r"no process reads or writes table\(s\) \['bookmarks'\]"):
        role_access("web", [*tables, "bookmarks"])
    with pytest.raises(ValueError, match="names tables no model declares: \\['comments'\\]"):
        role_access("web", [table for table in tables if table != "comments"])


def test_the_import_list_names_every_table_of_the_prefix(capsys):
    call_command("cloudformation", "--resources-to-import", "prod_")
    entries = json.loads(capsys.readouterr().out)
    resources = _template()["Resources"]
    assert {entry["ResourceIdentifier"]["TableName"] for entry in entries} == {f"prod_{n}" for n in _logical_names()}
    for entry in entries:
        table = resources[entry["LogicalResourceId"]]
        assert entry["ResourceType"] == table["Type"] == "AWS::DynamoDB::Table"
        name = table["Properties"]["TableName"]["Fn::Sub"].replace("${TablePrefix}", "prod_")
        assert entry["ResourceIdentifier"] == {"TableName": name}
