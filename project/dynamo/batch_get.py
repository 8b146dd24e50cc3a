"""Items of several tables in one BatchGetItem (PynamoDB's `Model.batch_get` reads one table).

A read that needs a handful of items from different tables (the like fold: the comment, the
notification, the badge item, the likers' rows and markers, the author's preferences) pays
one round trip and one call's CPU instead of one per table. DynamoDB bills each item as a
GetItem would (a key that finds nothing included), so the units are the same.

Keys that DynamoDB leaves unprocessed (throttling) are asked again with a short growing pause,
up to UNPROCESSED_ATTEMPTS times, then `UnprocessedKeysError` is raised: the caller's read
failed as a throttled GetItem would.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar, cast

from pynamodb.models import Model

from project.dynamo import clients as dynamo

M = TypeVar("M", bound=Model)
PAGE = 100  # keys per BatchGetItem
UNPROCESSED_ATTEMPTS = 5


class UnprocessedKeysError(Exception):
    """DynamoDB kept leaving keys unprocessed (throttled)."""


def _typed(attribute: Any, value: object) -> dict[str, Any]:
    return {attribute.attr_type: attribute.serialize(value)}


def key_of(model: type[Model], key: object) -> dict[str, Any]:
    """The key of `model`'s item as DynamoDB takes it: a hash key, or a (hash, range) pair."""
    hash_attribute, range_attribute = model._hash_key_attribute(), model._range_key_attribute()
    if range_attribute is None:
        return {hash_attribute.attr_name: _typed(hash_attribute, key)}
    hash_value, range_value = cast(tuple[object, object], key)
    return {
        hash_attribute.attr_name: _typed(hash_attribute, hash_value),
        range_attribute.attr_name: _typed(range_attribute, range_value),
    }


def batch_get_many(wanted: Mapping[type[Model], Iterable[object]], *, consistent: bool) -> dict[type[Model], list[Any]]:
    """The items found for each model's keys (a hash key, or a (hash, range) pair), by model.

    Absent items are simply not in the lists; each model's list is in no particular order.
    """
    by_table = {model.Meta.table_name: model for model in wanted}
    asks = [
        (model.Meta.table_name, key_of(model, key)) for model, keys in wanted.items() for key in dict.fromkeys(keys)
    ]
    found: dict[type[Model], list[Any]] = {model: [] for model in wanted}
    for start in range(0, len(asks), PAGE):
        request: dict[str, dict[str, Any]] = {}
        for table, key in asks[start : start + PAGE]:
            request.setdefault(table, {"Keys": [], "ConsistentRead": consistent})["Keys"].append(key)
        for attempt in range(UNPROCESSED_ATTEMPTS + 1):
            answer = dynamo.client().batch_get_item(RequestItems=request)
            for table, items in answer.get("Responses", {}).items():
                found[by_table[table]] += [by_table[table].from_raw_data(item) for item in items]
            request = answer.get("UnprocessedKeys") or {}
            if not request:
                break
            if attempt == UNPROCESSED_ATTEMPTS:
                raise UnprocessedKeysError(f"{sum(len(ask['Keys']) for ask in request.values())} keys left unprocessed")
            time.sleep(0.05 * 2**attempt)
    return found
