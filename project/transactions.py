"""TransactWriteItems with the retry policy every service shares."""

from __future__ import annotations

import logging
from collections.abc import Callable

from pynamodb.exceptions import PynamoDBException, TransactWriteError
from pynamodb.transactions import TransactWrite

from project.dynamo import connection
from project.errors import Conflict, Throttled, error_code, is_throttling
from project.retry import backoff_sleep

logger = logging.getLogger(__name__)

# Eight attempts with full-jitter backoff (up to ~1.3 s of waiting in all): on AWS
# transactions touching one item at once cancel each other; likes now touch only
# their own items and one counter shard (issue 9), but folds, mark-reads and
# deliveries still meet; waiting a little longer beats answering 409.
TRANSACTION_ATTEMPTS = 8
THROTTLING_REASONS = {"ThrottlingError", "ProvisionedThroughputExceeded"}


# PynamoDB's TransactWrite sends its actions grouped by kind, each group in the order
# added, and DynamoDB answers cancellation reasons in that (request) order. This is the
# one place that knows the grouping; callers map reasons to actions through it.
ACTION_GROUPS = ("_condition_check_items", "_delete_items", "_put_items", "_update_items")


def sent_actions(transaction: TransactWrite) -> list[dict]:
    """The actions of `transaction` in the order sent, as `{"TableName", "Key", ...}` dicts."""
    return [item for group in ACTION_GROUPS for item in getattr(transaction, group)]


def failed_actions(transaction: TransactWrite, codes: list[str | None]) -> list[dict]:
    """The actions of `transaction` whose condition failed, given `transact`'s codes."""
    return [
        item for item, code in zip(sent_actions(transaction), codes, strict=False) if code == "ConditionalCheckFailed"
    ]


def cancellation_codes(error: TransactWriteError) -> list[str | None]:
    return [reason.code if reason else None for reason in error.cancellation_reasons]


def transact(
    build: Callable[[TransactWrite], None],
    *,
    what: str,
    attempts: int = TRANSACTION_ATTEMPTS,
    on_retry: Callable[[TransactWrite, list[str | None]], None] | None = None,
) -> list[str | None]:
    """Run the TransactWriteItems that `build(transaction)` describes, retrying conflicts.

    Returns [] on success, or the per-action cancellation codes when a condition
    failed (the caller decides what that means). Transaction conflicts and
    throttling are retried with jittered backoff; when they persist the caller
    gets `Conflict` / `Throttled` and nothing was written. `on_retry(transaction,
    codes)` hears of every cancelled attempt (a hot counter grows its shards from it).
    """
    throttled = False
    for attempt in range(attempts):
        transaction = TransactWrite(connection=connection())
        try:
            with transaction:
                build(transaction)
            return []
        except TransactWriteError as error:
            codes = cancellation_codes(error)
            if "ConditionalCheckFailed" in codes:
                return codes
            throttled = is_throttling(error) or any(code in THROTTLING_REASONS for code in codes)
            conflicted = "TransactionConflict" in codes or error_code(error) == "TransactionInProgressException"
            if not (throttled or conflicted):
                raise
            if on_retry:
                on_retry(transaction, codes)
            if attempt + 1 == attempts:
                break
            logger.info("%s: transaction cancelled (%s), retry %d", what, codes or error_code(error), attempt + 1)
            backoff_sleep(attempt)
    if throttled:
        raise Throttled(f"{what}: the data store is busy, retry shortly.")
    raise Conflict(f"{what}: too many concurrent changes, retry shortly.")


def write_retrying(write: Callable[[], object], *, what: str, attempts: int = TRANSACTION_ATTEMPTS) -> object:
    """Run one plain write (PutItem/UpdateItem/DeleteItem), retrying AWS's refusal of it.

    On AWS a single write to an item that an in-flight transaction holds fails with
    `TransactionConflictException` (botocore does not retry it); the transaction ends in
    milliseconds, so the write is retried with the same jittered backoff as `transact`.
    Nothing was written by a refused attempt, so retrying is safe for any write; when the
    refusals persist the caller gets `Conflict`. Other errors (a failed condition
    included) go to the caller unchanged. Returns what `write()` returns.
    """
    for attempt in range(attempts):
        try:
            return write()
        except PynamoDBException as error:
            if error_code(error) != "TransactionConflictException":
                raise
            if attempt + 1 == attempts:
                raise Conflict(f"{what}: too many concurrent changes, retry shortly.") from error
            logger.info("%s: write refused by a transaction in flight, retry %d", what, attempt + 1)
            backoff_sleep(attempt)
    raise AssertionError("unreachable")
