"""What DynamoDB says of a live table now (DescribeTable), and waiting until it says what
`create_tables` needs (a table and its indexes ACTIVE, a dropped index gone)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, cast

from project.dynamo.clients import client

TABLE_WAIT_SECONDS = 120.0  # how long a new table (or index) may take to become ACTIVE before we give up


def table_describe(name: str) -> dict[str, Any] | None:
    """DescribeTable's `Table` for the physical table `name`, None when there is no such table."""
    try:
        return cast(dict[str, Any], client().describe_table(TableName=name)["Table"])
    except client().exceptions.ResourceNotFoundException:
        return None


def table_wait_active(name: str, *, timeout: float = TABLE_WAIT_SECONDS) -> dict[str, Any]:
    """Wait until the table `name` and every one of its GSIs are ACTIVE (DynamoDB builds one
    index at a time; an index that reports no status, as DynamoDB Local's may, counts as built)."""
    return table_wait(
        name,
        lambda description: (
            description["TableStatus"] == "ACTIVE"
            and all(
                index.get("IndexStatus", "ACTIVE") == "ACTIVE"
                for index in description.get("GlobalSecondaryIndexes", [])
            )
        ),
        what="ACTIVE with its indexes",
        timeout=timeout,
    )


def table_wait(
    name: str, done: Callable[[dict[str, Any]], bool], *, what: str, timeout: float = TABLE_WAIT_SECONDS
) -> dict[str, Any]:
    """Describe the table `name` every 0.2 s until `done(description)`; returns that description,
    or raises TimeoutError after `timeout` seconds (DynamoDB goes on with the change)."""
    deadline = time.monotonic() + timeout
    while True:
        description = table_describe(name)
        if description and done(description):
            return description
        if time.monotonic() > deadline:
            raise TimeoutError(f"table {name} not {what} after {timeout:.0f}s")
        time.sleep(0.2)
