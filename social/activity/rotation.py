"""The activity tables over time: one per month, created ahead, cooled, archived, dropped.

`activity_tables_maintain` (run by `activity_tables`, `make run` and the rollup loop)
takes every month's table through its life:
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

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from social.activity.archive import MonthExport, activity_month_archive, activity_month_archive_s3
from social.activity.month_tables import activity_table_cool, activity_table_ensure, activity_table_months
from social.activity.periods import month_of, month_shift


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
        if should_stop():
            return report
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
