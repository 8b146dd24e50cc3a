"""`create_tables --check` and `/readyz`: how the live tables stand against the models
(nothing is changed)."""

from __future__ import annotations

from typing import cast

from pynamodb.models import Model

from project.dynamo.clients import client, probe_client
from project.dynamo.schema.create import TableReport
from project.dynamo.schema.describe import table_describe
from project.dynamo.schema.drift import index_problems, table_drift
from project.dynamo.schema.protection import table_protection_drift
from project.dynamo.schema.registry import TableMeta, registered_models


def tables_check() -> list[TableReport]:
    """Describe every table and report its drift from the models, and on AWS a table without
    point-in-time recovery or deletion protection."""
    reports = []
    for model in registered_models():
        report = TableReport(cast(TableMeta, model.Meta).logical_name, model.Meta.table_name)
        description = table_describe(model.Meta.table_name)
        if description is None:
            report.status = "MISSING"
            report.drift = ["table does not exist (run create_tables)"]
        else:
            report.status = description["TableStatus"]
            report.item_count = description.get("ItemCount")
            ttl = client().describe_time_to_live(TableName=model.Meta.table_name)
            report.drift = table_drift(model, description, ttl)
            protection = table_protection_drift(model.Meta.table_name, description)
            report.drift += protection.drift
            report.unchecked = protection.unchecked
        reports.append(report)
    return reports


def table_problems(model: type[Model]) -> list[str]:
    """What keeps `model`'s table from serving now: missing, not ACTIVE, a declared index
    missing or still building; empty when it serves. One DescribeTable through the health
    checks' quick client (one try, short timeouts): an unreachable endpoint raises."""
    probe = probe_client()
    name = model.Meta.table_name
    try:
        description = probe.describe_table(TableName=name)["Table"]
    except probe.exceptions.ResourceNotFoundException:
        return [f"{name} missing"]
    problems = [] if description["TableStatus"] == "ACTIVE" else [f"{name} {description['TableStatus']}"]
    return problems + [f"{name} {problem}" for problem in index_problems(model, description)]
