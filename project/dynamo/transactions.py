"""TransactWriteItems with the retry policy every service shares."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.utils.translation import gettext
from pynamodb.exceptions import PynamoDBException, TransactWriteError
from pynamodb.transactions import TransactWrite

from project.dynamo.clients import connection
from project.dynamo.retry import backoff_sleep
from project.errors import Conflict, Throttled, condition_failed, error_code, is_throttling

if TYPE_CHECKING:
    from pynamodb.expressions.condition import Condition
    from pynamodb.expressions.update import Action
    from pynamodb.models import Model

logger = logging.getLogger(__name__)

# Eight attempts with full-jitter backoff (up to ~1.3 s of waiting in all): on AWS
# transactions touching one item at once cancel each other; likes touch only
# their own items and one counter shard, but folds, mark-reads and
# deliveries still meet; waiting a little longer beats answering 409.
TRANSACTION_ATTEMPTS = 8
THROTTLING_REASONS = {"ThrottlingError", "ProvisionedThroughputExceeded"}


# PynamoDB's TransactWrite sends its actions grouped by kind, each group in the order
# added, and DynamoDB answers cancellation reasons in that (request) order. This is the
# one place that knows the grouping (it reads TransactWrite's private per-kind lists,
# pinned pynamodb==6.1.0: PynamoDB has no public accessor for the sent order);
# callers name their actions with `label=` and read the outcome by label.
ACTION_GROUPS = ("_condition_check_items", "_delete_items", "_put_items", "_update_items")
CANCELLED_BY_CONDITION = "ConditionalCheckFailed"  # a cancelled transaction's reason


class LabelledTransactWrite(TransactWrite):
    """A TransactWrite whose actions may carry a `label=` (any value) to find them in the outcome."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._labels: dict[str, list[object]] = {group: [] for group in ACTION_GROUPS}

    def condition_check(
        self,
        model_cls: type[Model],
        hash_key: Any,
        range_key: Any = None,
        condition: Condition | None = None,
        *,
        label: object = None,
    ) -> None:
        super().condition_check(model_cls, hash_key, range_key=range_key, condition=condition)
        self._labels["_condition_check_items"].append(label)

    def delete(
        self,
        model: Model,
        condition: Condition | None = None,
        *,
        add_version_condition: bool = True,
        label: object = None,
    ) -> None:
        super().delete(model, condition, add_version_condition=add_version_condition)
        self._labels["_delete_items"].append(label)

    def save(
        self,
        model: Model,
        condition: Condition | None = None,
        return_values: str | None = None,
        *,
        label: object = None,
    ) -> None:
        super().save(model, condition, return_values)
        self._labels["_put_items"].append(label)

    def update(
        self,
        model: Model,
        actions: list[Action],
        condition: Condition | None = None,
        return_values: str | None = None,
        *,
        add_version_condition: bool = True,
        label: object = None,
    ) -> None:
        super().update(model, actions, condition, return_values, add_version_condition=add_version_condition)
        self._labels["_update_items"].append(label)

    def sent(self) -> list[tuple[object, dict[str, Any]]]:
        """(label, action) pairs in the order sent; an action is `{"TableName", "Key", ...}`."""
        return [pair for group in ACTION_GROUPS for pair in zip(self._labels[group], getattr(self, group), strict=True)]


@dataclass(frozen=True)
class SentAction:
    label: object
    table: str
    key: dict[str, Any]  # DynamoDB JSON: {"comment_id": {"S": "..."}} (a put: its whole item)
    code: str | None  # its cancellation reason ("None" / None: it was fine)


@dataclass(frozen=True)
class TransactOutcome:
    """What became of one transaction: committed, or which of its actions' conditions failed.

    `failed` lists the actions whose condition failed; `failed_labels` their labels.
    `codes` are the raw cancellation reasons in the order sent ([] when committed).
    """

    actions: tuple[SentAction, ...] = ()
    codes: tuple[str | None, ...] = ()

    @property
    def ok(self) -> bool:
        return CANCELLED_BY_CONDITION not in self.codes

    @property
    def failed(self) -> list[SentAction]:
        return [action for action in self.actions if action.code == CANCELLED_BY_CONDITION]

    @property
    def failed_labels(self) -> list[object]:
        return [action.label for action in self.failed]

    @property
    def cancelled_actions(self) -> list[SentAction]:
        """The actions DynamoDB named a reason for (conflict, throttling, condition)."""
        return [action for action in self.actions if action.code not in (None, "None")]


def _outcome(transaction: LabelledTransactWrite, codes: list[str | None]) -> TransactOutcome:
    sent = transaction.sent()
    actions = tuple(
        SentAction(label=label, table=item["TableName"], key=item.get("Key") or item["Item"], code=code)
        for (label, item), code in zip(sent, codes + [None] * (len(sent) - len(codes)), strict=False)
    )
    return TransactOutcome(actions=actions, codes=tuple(codes))


def cancellation_codes(error: TransactWriteError) -> list[str | None]:
    return [reason.code if reason else None for reason in error.cancellation_reasons]


def transact(
    build: Callable[[LabelledTransactWrite], None],
    *,
    what: str,
    attempts: int = TRANSACTION_ATTEMPTS,
    on_retry: Callable[[TransactOutcome], None] | None = None,
    on_failed: Callable[[TransactOutcome], bool] | None = None,
    backoff: tuple[float, float] = (0.01, 0.5),
) -> TransactOutcome:
    """Run the TransactWriteItems that `build(transaction)` describes, retrying conflicts.

    One retry loop of `attempts` for the whole operation. Returns the outcome: `ok`, or
    the actions whose condition failed (the caller decides what that means). When
    `on_failed(outcome)` is given it hears of a failed condition and returns True to
    try again (it re-read what changed; `build` is called afresh), within the same
    attempts; False, or no attempts left, returns the failed outcome. Transaction
    conflicts and throttling are retried with jittered backoff; when they persist the
    caller gets `Conflict` / `Throttled` and nothing was written. `on_retry(outcome)`
    hears of every attempt cancelled by a conflict or throttling (a hot counter grows its
    shards from it; `codes` is empty when the whole request was throttled). `backoff` is
    the (base, cap) in seconds of the full-jitter waits between attempts.
    """
    base, cap = backoff
    throttled = False
    for attempt in range(attempts):
        transaction = LabelledTransactWrite(connection=connection())
        try:
            with transaction:
                build(transaction)
            return TransactOutcome(actions=_outcome(transaction, []).actions)
        except TransactWriteError as error:
            codes = cancellation_codes(error)
            outcome = _outcome(transaction, codes)
            if not outcome.ok:
                if on_failed is None or attempt + 1 == attempts or not on_failed(outcome):
                    return outcome
                logger.info("%s: a condition failed, re-read, retry %d", what, attempt + 1)
                backoff_sleep(attempt, base=base, cap=cap)
                continue
            throttled = is_throttling(error) or any(code in THROTTLING_REASONS for code in codes)
            conflicted = "TransactionConflict" in codes or error_code(error) == "TransactionInProgressException"
            if not (throttled or conflicted):
                raise
            if on_retry:
                on_retry(outcome)
            if attempt + 1 == attempts:
                break
            logger.info("%s: transaction cancelled (%s), retry %d", what, codes or error_code(error), attempt + 1)
            backoff_sleep(attempt, base=base, cap=cap)
    if throttled:
        raise Throttled(gettext("%(what)s: the data store is busy, retry shortly.") % {"what": what})
    raise Conflict(gettext("%(what)s: too many concurrent changes, retry shortly.") % {"what": what})


def conditional_write(write: Callable[[], object], *, what: str) -> bool:
    """One conditional plain write, retried as `write_retrying` retries; False when its
    condition failed (another writer got there first, or it is so already)."""
    try:
        write_retrying(write, what=what)
    except PynamoDBException as error:
        if condition_failed(error):
            return False
        raise
    return True


def conditional_update(item: Model, *, actions: list[Action], condition: Condition, what: str = "update") -> bool:
    """One conditional UpdateItem of `item` (see `conditional_write`)."""
    return conditional_write(lambda: item.update(actions=actions, condition=condition), what=what)


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
                raise Conflict(
                    gettext("%(what)s: too many concurrent changes, retry shortly.") % {"what": what}
                ) from error
            logger.info("%s: write refused by a transaction in flight, retry %d", what, attempt + 1)
            backoff_sleep(attempt)
    raise AssertionError("unreachable")
