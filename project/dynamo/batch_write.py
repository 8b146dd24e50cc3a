"""Puts and deletes on several tables in one BatchWriteItem (PynamoDB's `Model.batch_write` writes one table).

Plain writes only (no condition), each billed as the PutItem or DeleteItem it stands for, so
the units are the same and the round trips and the calls' CPU fewer. Not a transaction: each
write lands or not on its own. Items that DynamoDB leaves unprocessed (throttling) are sent
again with a short growing pause, up to UNPROCESSED_ATTEMPTS times, then
`UnprocessedItemsError` is raised with those still left: the caller's write failed as a
throttled PutItem would, and whatever did land was a plain, repeatable write.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from pynamodb.models import Model

from project.dynamo import clients as dynamo
from project.dynamo.batch_get import key_of

PAGE = 25  # writes per BatchWriteItem
UNPROCESSED_ATTEMPTS = 5


class UnprocessedItemsError(Exception):
    """DynamoDB kept leaving writes unprocessed (throttled)."""


def _key(item: Model) -> dict[str, Any]:
    model = type(item)
    hash_value = getattr(item, str(model._hash_keyname))
    if model._range_keyname is None:
        return key_of(model, hash_value)
    return key_of(model, (hash_value, getattr(item, model._range_keyname)))


def batch_write_many(*, puts: Iterable[Model] = (), deletes: Iterable[Model] = ()) -> None:
    """Put `puts` and delete `deletes` (items of any tables), PAGE writes a request, in order of pages."""
    writes: list[tuple[str, dict[str, Any]]] = [
        (item.Meta.table_name, {"PutRequest": {"Item": item.serialize()}}) for item in puts
    ]
    writes += [(item.Meta.table_name, {"DeleteRequest": {"Key": _key(item)}}) for item in deletes]
    for start in range(0, len(writes), PAGE):  # an empty request (nothing to write) is not sent
        request: dict[str, list[dict[str, Any]]] = {}
        for table, write in writes[start : start + PAGE]:
            request.setdefault(table, []).append(write)
        for attempt in range(UNPROCESSED_ATTEMPTS + 1):
            request = dynamo.client().batch_write_item(RequestItems=request).get("UnprocessedItems") or {}
            if not request:
                break
            if attempt == UNPROCESSED_ATTEMPTS:
                raise UnprocessedItemsError(f"{sum(len(left) for left in request.values())} writes left unprocessed")
            time.sleep(0.05 * 2**attempt)
