"""`create_tables`: creating every table the models declare (with its indexes and TTL, and on
AWS its protection), adding a GSI declared later, dropping GSIs no model declares; and the
scratch tables of tests and benchmarks."""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from pynamodb.exceptions import TableDoesNotExist, TableError
from pynamodb.models import Model

from project.dynamo.clients import client, point_models_at
from project.dynamo.schema.describe import table_describe, table_wait, table_wait_active
from project.dynamo.schema.drift import declared_indexes, ttl_attribute_name, ttl_enabled
from project.dynamo.schema.protection import table_protect
from project.dynamo.schema.registry import TableMeta, registered_models
from project.errors import error_code

logger = logging.getLogger(__name__)


@dataclass
class TableReport:
    """What `create_tables` did or found for one table."""

    logical_name: str
    table_name: str
    created: bool = False
    drift: list[str] = field(default_factory=list)
    status: str = ""
    item_count: int | None = None
    protected: list[str] = field(default_factory=list)  # switched on for a created table (AWS only)
    unchecked: list[str] = field(default_factory=list)  # what the endpoint could not say (--check)


def _ensure_ttl(model: type[Model]) -> None:
    ttl_name = ttl_attribute_name(model)
    if not ttl_name:
        return
    current = client().describe_time_to_live(TableName=model.Meta.table_name)["TimeToLiveDescription"]
    if ttl_enabled(current, ttl_name):
        return
    client().update_time_to_live(
        TableName=model.Meta.table_name,
        TimeToLiveSpecification={"Enabled": True, "AttributeName": ttl_name},
    )


def _ensure_gsis(model: type[Model], description: dict[str, Any]) -> None:
    """Add declared GSIs that the live table lacks (unlike LSIs, GSIs can be added later)."""
    live = {index["IndexName"] for index in description.get("GlobalSecondaryIndexes", [])}
    schema = model._get_schema()
    definitions = {d["AttributeName"]: d for d in schema["attribute_definitions"]}
    for index in schema["global_secondary_indexes"]:
        if index["index_name"] in live:
            continue
        logger.info("adding GSI %s to %s", index["index_name"], model.Meta.table_name)
        used = [definitions[k["AttributeName"]] for k in index["key_schema"]]
        client().update_table(
            TableName=model.Meta.table_name,
            AttributeDefinitions=used,
            GlobalSecondaryIndexUpdates=[
                {
                    "Create": {
                        "IndexName": index["index_name"],
                        "KeySchema": sorted(index["key_schema"], key=lambda key: key["KeyType"]),  # HASH first
                        "Projection": index["projection"],
                    }
                }
            ],
        )
        table_wait_active(model.Meta.table_name)


def tables_create() -> list[TableReport]:
    """Create every missing table (with its indexes and TTL; on AWS, point-in-time recovery and
    deletion protection, project/dynamo/schema/protection.py); idempotent, like `migrate`.

    Run twice or concurrently: a table another run created is waited for, not created again.
    Dying half way leaves some tables made; the next run makes the rest. Each table created and
    each index added is waited for up to TABLE_WAIT_SECONDS (then TimeoutError; DynamoDB goes on
    building, and the next run does not wait for an index it finds being built)."""
    reports = []
    for model in registered_models():
        report = TableReport(cast(TableMeta, model.Meta).logical_name, model.Meta.table_name)
        description = table_describe(model.Meta.table_name)
        if description is None:
            logger.info("creating table %s", model.Meta.table_name)
            try:
                model.create_table(wait=False, billing_mode="PAY_PER_REQUEST")
                report.created = True
            except TableError as error:  # a concurrent create_tables won the race
                if error_code(error) != "ResourceInUseException":
                    raise
            description = table_wait_active(model.Meta.table_name)
            if report.created:
                report.protected = table_protect(model.Meta.table_name)
        else:
            _ensure_gsis(model, description)
        _ensure_ttl(model)
        reports.append(report)
    return reports


def tables_drop_undeclared_indexes() -> list[str]:
    """Delete every GSI that no model declares (a replaced index); returns `table.index` of each.

    Run it once every process runs the code that does not read the old index: until
    then, an old process's Query of it would fail. DynamoDB deletes one index of a table
    at a time, so each deletion is waited for. LSIs cannot be dropped (nor are they here).
    """
    dropped = []
    for model in registered_models():
        description = table_describe(model.Meta.table_name)
        if description is None:
            continue
        declared = declared_indexes(model)
        for index in description.get("GlobalSecondaryIndexes", []):
            name = index["IndexName"]
            if name in declared:
                continue
            logger.info("dropping GSI %s of %s: no model declares it", name, model.Meta.table_name)
            client().update_table(
                TableName=model.Meta.table_name, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": name}}]
            )
            table_wait(model.Meta.table_name, _index_gone(name), what=f"rid of index {name}")
            dropped.append(f"{model.Meta.table_name}.{name}")
    return dropped


def _index_gone(index: str) -> Callable[[dict[str, Any]], bool]:
    def gone(description: dict[str, Any]) -> bool:
        return all(each["IndexName"] != index for each in description.get("GlobalSecondaryIndexes", []))

    return gone


def tables_delete() -> None:
    """Drop every table of this prefix (tests and benchmarks only)."""
    for model in registered_models():
        try:
            model.delete_table()
        except TableDoesNotExist:
            pass


@contextlib.contextmanager
def scratch_tables(*, prefix: str, external_host: str | None = None) -> Iterator[str]:
    """Every table under a fresh `prefix`, on `external_host` or on an in-memory DynamoDB
    Local started for the occasion (tests and benchmarks); yields the endpoint.

    On exit the DynamoDB Local is stopped, or the tables dropped from the external host.
    """
    from project.dynamo import local as dynamo_local

    process = None
    host = external_host
    if host is None:
        port = dynamo_local.free_port()
        process = dynamo_local.start(port=port)
        host = f"http://127.0.0.1:{port}"
    point_models_at(host, prefix=f"{prefix}{uuid.uuid4().hex[:6]}_")
    tables_create()
    try:
        yield host
    finally:
        if process is not None:
            dynamo_local.stop(process)
        else:
            tables_delete()
