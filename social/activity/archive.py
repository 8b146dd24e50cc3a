"""Archiving a month's activity table before it is dropped: exported to a gzipped JSON-lines
file and verified against the table, or (on AWS) exported with DynamoDB's export to S3 and
checked against the table's item count. A table is dropped only after its export checks out.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from project.dynamo.clients import client, table_name
from project.dynamo.schema.describe import table_describe
from social.activity.models import activity_logical_name, activity_model
from social.activity.month_tables import activity_table_drop
from social.activity.periods import day_partitions, month_days

if TYPE_CHECKING:
    from social.activity.models import ActivityItem

logger = logging.getLogger(__name__)


def month_items(month: str) -> Iterator[ActivityItem]:
    """Every item of a month's table, day partition by day partition (Query, never Scan)."""
    model = activity_model(month)
    for day in month_days(month):
        for partition in day_partitions(day):
            yield from model.by_day.query(partition)


def month_item_count(month: str) -> int:
    """How many items the month's table holds, counted with Select=COUNT queries."""
    name = table_name(activity_logical_name(month))
    total = 0
    for day in month_days(month):
        for partition in day_partitions(day):
            kwargs = {
                "TableName": name,
                "IndexName": "by_day",
                "KeyConditionExpression": "day_key = :p",
                "ExpressionAttributeValues": {":p": {"S": partition}},
                "Select": "COUNT",
            }
            while True:
                page = client().query(**kwargs)
                total += page["Count"]
                if "LastEvaluatedKey" not in page:
                    break
                kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    return total


@dataclass
class MonthExport:
    month: str
    path: Path
    items: int
    sha256: str


def _line(item: ActivityItem) -> bytes:
    return (json.dumps(item.to_simple_dict(), sort_keys=True, separators=(",", ":")) + "\n").encode()


def activity_month_export(*, month: str, directory: Path) -> MonthExport:
    """Write a month's items to `<directory>/<table>.jsonl.gz` (one JSON object per line).

    Written to a temporary name and renamed when complete, with a `.manifest.json`
    beside it (item count, SHA-256 of the uncompressed lines): a crash half way leaves
    only a `.part` file, which the next run overwrites. Streams; memory is flat.
    """
    directory.mkdir(parents=True, exist_ok=True)
    name = table_name(activity_logical_name(month))
    final = directory / f"{name}.jsonl.gz"
    partial = final.with_name(final.name + ".part")
    digest = hashlib.sha256()
    items = 0
    with gzip.open(partial, "wb") as out:
        for item in month_items(month):
            line = _line(item)
            digest.update(line)
            out.write(line)
            items += 1
    partial.replace(final)
    export = MonthExport(month=month, path=final, items=items, sha256=digest.hexdigest())
    manifest = {"table": name, "month": month, "items": items, "sha256": export.sha256}
    final.with_name(f"{name}.manifest.json").write_text(json.dumps(manifest, indent=2))
    return export


def activity_export_verified(export: MonthExport) -> bool:
    """True when the file reads back whole with the manifest's count and checksum, and the
    table still holds exactly that many items (nothing was written meanwhile)."""
    digest = hashlib.sha256()
    lines = 0
    try:
        with gzip.open(export.path, "rb") as source:
            for line in source:
                json.loads(line)
                digest.update(line)
                lines += 1
    except (OSError, EOFError, ValueError) as error:
        logger.error("export %s does not read back: %s", export.path, error)
        return False
    return lines == export.items and digest.hexdigest() == export.sha256 and month_item_count(export.month) == lines


def activity_month_archive(*, month: str, directory: Path) -> MonthExport | None:
    """Export a month's table, verify the export, and drop the table; None if not verified.

    Twice: the second run finds no table and does nothing. Dies before the drop: the
    table is still there and the next run exports it again (overwriting the file).
    """
    if table_describe(table_name(activity_logical_name(month))) is None:
        return None
    export = activity_month_export(month=month, directory=directory)
    if not activity_export_verified(export):
        logger.error("export of activity month %s not verified: the table is kept", month)
        return None
    activity_table_drop(month=month)
    logger.info("activity month %s exported to %s (%d items) and dropped", month, export.path, export.items)
    return export


def activity_month_archive_s3(*, month: str, bucket: str, prefix: str) -> str:
    """On AWS: archive a month with DynamoDB's export to S3, then drop it; returns the state.

    Asynchronous, one step per call (the maintenance runs hourly): no export of the table
    yet: point-in-time recovery is switched on and an export started ("export started");
    an export in progress: "exporting"; a COMPLETED export whose ItemCount equals the
    items the table holds (counted with Query): the table is dropped ("dropped"). A
    failed export, or one whose count differs, is reported and the table kept. Twice or
    concurrently: an export in progress is found and waited for, not started again.
    """
    name = table_name(activity_logical_name(month))
    description = table_describe(name)
    if description is None:
        return "missing"
    arn = description["TableArn"]
    exports = client().list_exports(TableArn=arn).get("ExportSummaries", [])
    if any(summary["ExportStatus"] == "IN_PROGRESS" for summary in exports):
        return "exporting"
    completed = [
        client().describe_export(ExportArn=summary["ExportArn"])["ExportDescription"]
        for summary in exports
        if summary["ExportStatus"] == "COMPLETED"
    ]
    if completed:
        items = month_item_count(month)
        if any(export.get("ItemCount") == items for export in completed):
            activity_table_drop(month=month)
            logger.info("activity month %s exported to s3://%s/%s and dropped", month, bucket, prefix)
            return "dropped"
        return f"kept: no completed export holds the table's {items} items"
    client().update_continuous_backups(
        TableName=name, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}
    )
    client().export_table_to_point_in_time(
        TableArn=arn, S3Bucket=bucket, S3Prefix=f"{prefix}{name}/", ExportFormat="DYNAMODB_JSON"
    )
    logger.info("activity month %s: export to s3://%s/%s started", month, bucket, prefix)
    return "export started"
