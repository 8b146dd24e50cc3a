"""One month's activity table: created on demand (and remembered per process), listed,
cooled to the infrequent-access table class, dropped.

The table of month `YYYYMM` is `<DYNAMODB_TABLE_PREFIX>activity_YYYYMM` (its model:
`social.activity.models.activity_model`).
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from pynamodb.exceptions import TableError

from project.dynamo.clients import client, endpoint, table_name
from project.dynamo.schema.describe import table_describe, table_wait_active
from project.dynamo.schema.protection import table_protect, table_unprotect
from project.errors import error_code
from social.activity.models import ACTIVITY_TABLE_STEM, activity_logical_name, activity_model

if TYPE_CHECKING:
    from social.activity.models import ActivityItem

logger = logging.getLogger(__name__)

INFREQUENT_ACCESS = "STANDARD_INFREQUENT_ACCESS"
NO_TABLE_CLASSES = "endpoint has no table classes (DynamoDB Local)"

_ready_lock = threading.Lock()
_ready: set[tuple[str | None, str, str]] = set()


def _ready_key(month: str) -> tuple[str | None, str, str]:
    return (endpoint().host, endpoint().prefix, month)


def activity_table_ensure(*, month: str) -> bool:
    """Create month `month`'s table (with its `by_day` index) unless it exists; True if created.

    Idempotent; concurrent callers (two processes, or `activity_tables` and a writer)
    both end with the one table: the loser of the create race waits for it to be ACTIVE.
    Remembered per process, so the write path asks DynamoDB once per month. On AWS the
    creator switches on point-in-time recovery and deletion protection, as `create_tables`
    does for its tables (project/dynamo/schema/protection.py).
    """
    if _ready_key(month) in _ready:
        return False
    model = activity_model(month)
    created = False
    if table_describe(model.Meta.table_name) is None:
        logger.info("creating activity table %s", model.Meta.table_name)
        try:
            model.create_table(wait=False, billing_mode="PAY_PER_REQUEST")
            created = True
        except TableError as error:  # another creator won the race
            if error_code(error) != "ResourceInUseException":
                raise
    table_wait_active(model.Meta.table_name)
    if created:
        table_protect(model.Meta.table_name)
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
    return table_describe(table_name(activity_logical_name(month)))


def activity_table_exists(*, month: str) -> bool:
    return _ready_key(month) in _ready or table_describe(table_name(activity_logical_name(month))) is not None


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
    """Drop a month's table (its export checked out): its deletion protection is taken off first."""
    table_unprotect(table_name(activity_logical_name(month)))
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
    description = table_describe(name)
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
