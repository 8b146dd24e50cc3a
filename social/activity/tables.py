"""The activity tables over time: one per month, created ahead, cooled, exported, dropped.

Months and days are the site's `TIME_ZONE` months and days: an action at 23:59:59.999 on
the last day of November (local time) is in November's table and November 30th's
`by_day` partitions, whatever UTC says.

Lifecycle of a month's table (`activity_tables_maintain`, run by `activity_tables`,
`make run` and the rollup loop):
- created during the month before it (current and next month always exist);
- switched to the STANDARD_INFREQUENT_ACCESS table class once it is older than the
  previous month (on-demand tables have no throughput to lower, as the seed did; the
  table class is what makes a cold table cheap to keep);
- past ACTIVITY_RETENTION_MONTHS, exported to `ACTIVITY_EXPORT_DIR` as gzipped JSON
  lines, verified (the file is read back and its item count and checksum must equal
  what the table holds, counted again with Query), and only then dropped; or, with
  ACTIVITY_EXPORT_S3_BUCKET set (AWS), exported with DynamoDB's export to S3 and dropped
  once the export is COMPLETED with the table's item count.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from django.conf import settings

from project.dynamo import client, endpoint, table_name
from social.activity.models import ACTIVITY_TABLE_STEM, activity_logical_name, activity_model

if TYPE_CHECKING:
    from social.activity.models import ActivityItem

logger = logging.getLogger(__name__)

INFREQUENT_ACCESS = "STANDARD_INFREQUENT_ACCESS"
NO_TABLE_CLASSES = "endpoint has no table classes (DynamoDB Local)"
TABLE_WAIT_SECONDS = 120.0

_ready_lock = threading.Lock()
_ready: set[tuple[str | None, str, str]] = set()


# --- months and days ---------------------------------------------------------------


def site_zone() -> ZoneInfo:
    return ZoneInfo(settings.TIME_ZONE)


def local_time(at: float) -> datetime:
    """Epoch seconds as an aware datetime in the site's time zone."""
    return datetime.fromtimestamp(at, tz=UTC).astimezone(site_zone())


def month_of(at: float) -> str:
    """`YYYYMM` of the site-local month `at` (epoch seconds) falls in."""
    return local_time(at).strftime("%Y%m")


def month_shift(month: str, months: int) -> str:
    index = int(month[:4]) * 12 + int(month[4:]) - 1 + months
    return f"{index // 12:04d}{index % 12 + 1:02d}"


def month_days(month: str) -> list[date]:
    first = date(int(month[:4]), int(month[4:]), 1)
    following = month_shift(month, 1)
    last = date(int(following[:4]), int(following[4:]), 1) - timedelta(days=1)
    return [first + timedelta(days=n) for n in range((last - first).days + 1)]


def day_bounds(day: date) -> tuple[float, float]:
    """Epoch seconds of the start of `day` and of the next day, in the site's time zone."""
    zone = site_zone()
    start = datetime(day.year, day.month, day.day, tzinfo=zone)
    following = day + timedelta(days=1)
    end = datetime(following.year, following.month, following.day, tzinfo=zone)
    return start.timestamp(), end.timestamp()


def day_shard(user_id: str) -> int:
    """The `by_day` write shard of a user, 1..ACTIVITY_DAY_SHARDS, (docs/architecture.md "Activity log"): the sum
    of the id's character codes, modulo. Stable (a user's items of a day are all in one
    partition) and even for Django's sequential ids (bench/activity.py measures it)."""
    return sum(map(ord, user_id)) % settings.ACTIVITY_DAY_SHARDS + 1


def day_key(*, day: date, user_id: str) -> str:
    return f"{day:%Y%m%d}#{day_shard(user_id)}"


def day_partitions(day: date) -> list[str]:
    return [f"{day:%Y%m%d}#{n}" for n in range(1, settings.ACTIVITY_DAY_SHARDS + 1)]


# --- one table ---------------------------------------------------------------------


def _describe(name: str) -> dict | None:
    try:
        return client().describe_table(TableName=name)["Table"]
    except client().exceptions.ResourceNotFoundException:
        return None


def _wait_active(name: str) -> dict:
    deadline = time.monotonic() + TABLE_WAIT_SECONDS
    while True:
        description = _describe(name)
        if (
            description
            and description["TableStatus"] == "ACTIVE"
            and all(index.get("IndexStatus") == "ACTIVE" for index in description.get("GlobalSecondaryIndexes", []))
        ):
            return description
        if time.monotonic() > deadline:
            raise TimeoutError(f"table {name} not ACTIVE after {TABLE_WAIT_SECONDS:.0f}s")
        time.sleep(0.2)


def _ready_key(month: str) -> tuple[str | None, str, str]:
    return (endpoint().host, endpoint().prefix, month)


def activity_table_ensure(*, month: str) -> bool:
    """Create month `month`'s table (with its `by_day` index) unless it exists; True if created.

    Idempotent; concurrent callers (two processes, or `activity_tables` and a writer)
    both end with the one table: the loser of the create race waits for it to be ACTIVE.
    Remembered per process, so the write path asks DynamoDB once per month.
    """
    if _ready_key(month) in _ready:
        return False
    model = activity_model(month)
    created = False
    if _describe(model.Meta.table_name) is None:
        logger.info("creating activity table %s", model.Meta.table_name)
        try:
            model.create_table(wait=False, billing_mode="PAY_PER_REQUEST")
            created = True
        except Exception as error:
            if "ResourceInUseException" not in str(error):
                raise
    _wait_active(model.Meta.table_name)
    with _ready_lock:
        _ready.add(_ready_key(month))
    return created


def activity_model_ready(*, month: str) -> type[ActivityItem]:
    """The model of `month`, its table created first if it is missing."""
    activity_table_ensure(month=month)
    return activity_model(month)


def activity_tables_forget() -> None:
    """Forget which tables this process knows to exist (tests drop them)."""
    with _ready_lock:
        _ready.clear()


def activity_table_describe(*, month: str) -> dict | None:
    return _describe(table_name(activity_logical_name(month)))


def activity_table_exists(*, month: str) -> bool:
    return _ready_key(month) in _ready or _describe(table_name(activity_logical_name(month))) is not None


def activity_table_months() -> list[str]:
    """Months that have a table under the current prefix, oldest first (ListTables, paged)."""
    stem = table_name(ACTIVITY_TABLE_STEM)
    months = []
    kwargs: dict = {}
    while True:
        page = client().list_tables(**kwargs)
        for name in page["TableNames"]:
            rest = name[len(stem) :]
            if name.startswith(stem) and len(rest) == 6 and rest.isdigit():
                months.append(rest)
        if "LastEvaluatedTableName" not in page:
            return sorted(months)
        kwargs = {"ExclusiveStartTableName": page["LastEvaluatedTableName"]}


def activity_table_drop(*, month: str) -> None:
    activity_model(month).delete_table()
    with _ready_lock:
        _ready.discard(_ready_key(month))


def _table_class(description: dict) -> str:
    return description.get("TableClassSummary", {}).get("TableClass", "STANDARD")


def activity_table_cool(*, month: str) -> str:
    """Switch a past month's table to STANDARD_INFREQUENT_ACCESS; returns what was done.

    Idempotent (a table already switched is left alone). DynamoDB allows two table-class
    changes per 30 days, and we make one per table, ever.
    """
    name = table_name(activity_logical_name(month))
    description = _describe(name)
    if description is None:
        return "missing"
    if _table_class(description) == INFREQUENT_ACCESS:
        return "already infrequent access"
    try:
        client().update_table(TableName=name, TableClass=INFREQUENT_ACCESS)
    except client().exceptions.ClientError as error:
        # DynamoDB Local has no table classes: it answers "Nothing to update".
        if "Nothing to update" not in str(error):
            raise
        return NO_TABLE_CLASSES
    logger.info("activity table %s switched to %s", name, INFREQUENT_ACCESS)
    return f"switched to {INFREQUENT_ACCESS}"


# --- export and drop ---------------------------------------------------------------


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
    if _describe(table_name(activity_logical_name(month))) is None:
        return None
    export = activity_month_export(month=month, directory=directory)
    if not activity_export_verified(export):
        logger.error("export of activity month %s not verified: the table is kept", month)
        return None
    activity_table_drop(month=month)
    logger.info("activity month %s exported to %s (%d items) and dropped", month, export.path, export.items)
    return export


# --- export to S3 (AWS) -------------------------------------------------------------


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
    description = _describe(name)
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


# --- everything at once --------------------------------------------------------------


@dataclass
class TablesReport:
    created: list[str] = field(default_factory=list)
    ready: list[str] = field(default_factory=list)
    cooled: dict[str, str] = field(default_factory=dict)
    archived: list[MonthExport] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # past retention but the export did not verify
    s3: dict[str, str] = field(default_factory=dict)  # month -> state of its export to S3 (AWS)


def activity_tables_maintain(
    *,
    now: float,
    on_step: Callable[[str], None] = lambda step: None,
    should_stop: Callable[[], bool] = lambda: False,
) -> TablesReport:
    """Create this and next month's tables, cool older months, archive months past retention.

    Idempotent and safe to run concurrently with writers and with itself; `should_stop`
    is checked between tables (the one at hand is finished first).
    """
    report = TablesReport()
    current = month_of(now)
    for month in (current, month_shift(current, 1)):
        (report.created if activity_table_ensure(month=month) else report.ready).append(month)
        on_step(f"ensure {month}")
    oldest_kept = month_shift(current, -settings.ACTIVITY_RETENTION_MONTHS)
    previous = month_shift(current, -1)
    for month in activity_table_months():
        if should_stop():
            break
        if month < oldest_kept and settings.ACTIVITY_EXPORT_S3_BUCKET:
            bucket, prefix = settings.ACTIVITY_EXPORT_S3_BUCKET, settings.ACTIVITY_EXPORT_S3_PREFIX
            report.s3[month] = activity_month_archive_s3(month=month, bucket=bucket, prefix=prefix)
        elif month < oldest_kept:
            export = activity_month_archive(month=month, directory=Path(settings.ACTIVITY_EXPORT_DIR))
            if export:
                report.archived.append(export)
            else:
                report.kept.append(month)
        elif month < previous:
            report.cooled[month] = activity_table_cool(month=month)
        on_step(f"check {month}")
    return report
