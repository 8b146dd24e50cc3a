"""A model of AWS's transaction conflict rules on DynamoDB Local (tests and benchmarks).

DynamoDB Local serialises transactions, so it never answers `TransactionConflict`. On AWS:

1. A `TransactWriteItems` that touches an item another in-flight transaction touches is
   cancelled: `TransactionCanceledException` with one cancellation reason per action,
   `TransactionConflict` on the actions whose item is busy, `None` on the others.
2. A `PutItem` / `UpdateItem` / `DeleteItem` on an item that an in-flight transaction
   holds fails with `TransactionConflictException`.

`aws_conflict_model()` patches botocore's `_make_api_call` to enforce both before a
request reaches DynamoDB Local, and counts what it refused. Used by the pytest fixture
`aws_conflicts` (tests/conftest.py) and by bench/likes.py and bench/counters.py. A test
that patches `_make_api_call` before entering it is called while the model holds the
request's items in flight: it can keep a transaction there until another one meets it
(tests/delivery/test_aws_conflicts.py).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

from botocore.client import BaseClient
from botocore.exceptions import ClientError

from project.dynamo import wire

SINGLE_WRITES = {"PutItem", "UpdateItem", "DeleteItem"}


@dataclass
class ConflictStats:
    transactions: int = 0
    cancelled: int = 0
    writes: int = 0
    refused_writes: int = 0
    by_table: dict[str, int] = field(default_factory=dict)


def _key_names() -> dict[str, list[str]]:
    from project.dynamo.schema.registry import registered_models

    names = {}
    for model in registered_models():
        # PynamoDB's private key accessors (pinned 6.1.0): no public way to name a model's keys.
        attributes = [model._hash_key_attribute(), model._range_key_attribute()]
        names[model.Meta.table_name] = [attribute.attr_name for attribute in attributes if attribute]
    return names


def _item_id(keys: dict[str, list[str]], table: str, body: dict[str, Any]) -> str:
    key = body.get("Key")
    if key is None:  # a Put names its item by the key attributes of the whole item
        item = body["Item"]
        key = {name: item[name] for name in keys.get(table, item.keys()) if name in item}
    return json.dumps([table, key], sort_keys=True)


@contextmanager
def aws_conflict_model() -> Iterator[ConflictStats]:
    """Enforce AWS's two conflict rules for the duration of the block; yields the counts."""
    # botocore-stubs leave out this private method, the one every client call goes through.
    real = wire.make_api_call
    keys = _key_names()
    inflight: set[str] = set()
    lock = threading.Lock()
    stats = ConflictStats()

    def cancelled(busy: list[bool]) -> ClientError:
        return ClientError(
            {
                "Error": {"Code": "TransactionCanceledException", "Message": "Transaction cancelled (modelled)"},
                "CancellationReasons": [
                    {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}
                    if item_busy
                    else {"Code": "None"}
                    for item_busy in busy
                ],
            },
            "TransactWriteItems",
        )

    def modelled(self: BaseClient, operation_name: str, api_params: dict[str, Any]) -> Any:
        if operation_name in SINGLE_WRITES:
            item = _item_id(keys, api_params["TableName"], api_params)
            with lock:
                stats.writes += 1
                if item in inflight:
                    stats.refused_writes += 1
                    raise ClientError(
                        {
                            "Error": {
                                "Code": "TransactionConflictException",
                                "Message": "Transaction is ongoing for the item (modelled)",
                            }
                        },
                        operation_name,
                    )
            return real(self, operation_name, api_params)
        if operation_name != "TransactWriteItems":
            return real(self, operation_name, api_params)
        items = []
        for action in api_params["TransactItems"]:
            (body,) = action.values()
            items.append((body["TableName"], _item_id(keys, body["TableName"], body)))
        with lock:
            stats.transactions += 1
            busy = [item in inflight for _, item in items]
            if any(busy):
                stats.cancelled += 1
                for (table, _), item_busy in zip(items, busy, strict=True):
                    if item_busy:
                        stats.by_table[table] = stats.by_table.get(table, 0) + 1
                raise cancelled(busy)
            held = {item for _, item in items}
            inflight.update(held)
        try:
            return real(self, operation_name, api_params)
        finally:
            with lock:
                inflight.difference_update(held)

    with mock.patch.object(wire, "make_api_call", modelled):
        yield stats
