"""A model of AWS's read lag on DynamoDB Local (tests).

DynamoDB Local answers every read from its one current copy. On AWS a global secondary
index is updated asynchronously (usually well under a second, sometimes longer), and an
eventually consistent read (GetItem, Query, Scan, BatchGetItem without
`ConsistentRead=True`) may be served by a replica up to about a second behind.

`aws_read_lag_model()` patches botocore's `_make_api_call` so that those reads are
answered from a lagging view, and counts what it served stale (`LagStats`):

- **Writes** (PutItem, UpdateItem, DeleteItem, TransactWriteItems, BatchWriteItem) go
  to DynamoDB Local as they are. Each item a successful write touches gets a random lag
  (`min_lag`..`max_lag`, 0.1..2 s by default, skewed toward short ones as AWS's are:
  median 0.34 s, mean 0.58 s, one write in five over 1 s; the floor keeps a read made a
  moment after a write, however slow the machine, from seeing it by luck; from a seeded
  `random.Random`, so a single-threaded run is reproducible) and becomes visible to lagging reads only once it
  has passed, in the order the item was written (a later write of an item never shows
  before an earlier one). The image before the write comes from the write itself
  (`ReturnValues=ALL_OLD`, stripped from the answer unless the caller asked for it) or,
  for a transaction, a batch write or a write asking for other return values, from a
  consistent BatchGetItem just before it.
- **Lagging reads**: every Query/Scan on a GSI (never consistent on AWS), and every
  GetItem, BatchGetItem (per table), Query and Scan (on the table or an LSI) without
  `ConsistentRead=True`. The real request runs; then each item with a write still inside
  its lag is served as it was before that write: replaced by its older image, left out if
  it did not exist then (or was not in the index or the key range then), and added back
  if it was deleted (or moved out of the range) since and the older image matches the
  request: a GetItem/BatchGetItem key, or a Query's key condition (hash key equality and
  `=`, `<`, `<=`, `>`, `>=`, `BETWEEN`, `begins_with` on the range key), inside the page
  the real answer covered (between `ExclusiveStartKey` and `LastEvaluatedKey`), in
  sort-key order, trimmed to `Limit` (the page's `LastEvaluatedKey` moved to match).
  Images are cut to the index's projection and the request's `ProjectionExpression`.
- **Never lagged**: reads with `ConsistentRead=True` on a table or an LSI, and
  `TransactGetItems`. Like AWS, a GSI read is lagged whatever the request says.

Not modelled (answered from the emulator's current copy; counted in `unmodelled` where a
pending write was involved): a `FilterExpression` is not evaluated on older images, so a
filtered read only leaves out items that did not exist before their pending write;
`Select=COUNT`; a Scan adds back deleted items only when it is one complete page (no
`ExclusiveStartKey`, `LastEvaluatedKey` or `Segment`, and room under its `Limit`);
nested paths in a `ProjectionExpression` are refused (NotImplementedError); replicas are
one lagging view per item, where AWS may answer two reads from two replicas; and a read in
the moment between a write's commit and the model's record of it sees the write.

Used by the pytest fixture `aws_read_lag` (tests/conftest.py); the guarantee tests run
under it (docs/explanation/testing.md). It composes with `aws_conflict_model()` in either order.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

from botocore.client import BaseClient

from project.dynamo import wire
from project.testing.dynamo_items import (
    Answer,
    Call,
    Image,
    asked_names,
    holds,
    item_identity,
    key_condition,
    projected,
    table_schema,
    typed,
    with_keys,
)

LAG_SECONDS_MIN = 0.1
LAG_SECONDS_MAX = 2.0


@dataclass
class LagStats:
    writes: int = 0  # item writes given a lag
    reads: int = 0  # lagging requests (per table for BatchGetItem)
    stale_reads: int = 0  # of those, answered with something the emulator did not hold
    stale_items: int = 0  # items served as an older image
    hidden_items: int = 0  # items left out: written into the answer within their lag
    resurrected_items: int = 0  # items served although deleted or moved away within their lag
    unmodelled: int = 0  # lagging requests with a pending write the model answered as they were
    by_table: dict[str, int] = field(default_factory=dict)  # stale reads by table

    @property
    def served_stale(self) -> int:
        """Items served other than the emulator held them (older, missing or deleted since)."""
        return self.stale_items + self.hidden_items + self.resurrected_items


# --- the model -----------------------------------------------------------------


@dataclass
class _Pending:
    key: Image
    writes: list[tuple[float, Image | None]] = field(default_factory=list)  # (visible at, image before), oldest first


class _LagModel:
    def __init__(self, real: Call, *, lags: tuple[float, float], seed: int, now: Callable[[], float]) -> None:
        self.real = real
        self.lags = lags
        self.now = now
        self.random = random.Random(seed)
        self.lock = threading.Lock()
        self.pending: dict[str, dict[str, _Pending]] = {}  # table -> item id -> its writes not visible yet
        self.stats = LagStats()

    def lag(self) -> float:
        """One write's lag: skewed toward short ones, as AWS's usually are (with 0.1..2 s:
        median 0.34 s, mean 0.58 s, one write in five over 1 s)."""
        low, high = self.lags
        return low + (high - low) * self.random.random() ** 3

    # --- writes

    def record(self, table: str, key: Image, before: Image | None) -> None:
        """A write of `key` committed: lagging reads see `before` until its lag has passed."""
        now = self.now()
        with self.lock:
            items = self.pending.setdefault(table, {})
            item = items.setdefault(item_identity(table, key), _Pending(key))
            item.writes = [write for write in item.writes if write[0] > now]
            last = item.writes[-1][0] if item.writes else now
            item.writes.append((max(last, now + self.lag()), before))
            self.stats.writes += 1

    def key_names(self, client: BaseClient, table: str) -> list[str]:
        return table_schema(self.real, client, table).keys.names

    def key_of(self, client: BaseClient, table: str, body: dict[str, Any]) -> Image:
        if "Key" in body:
            return dict(body["Key"])
        names = table_schema(self.real, client, table).keys.names
        return {name: body["Item"][name] for name in names}

    def consistent_images(self, client: BaseClient, keys: list[tuple[str, Image]]) -> dict[str, Image]:
        """The current images of these items (consistent BatchGetItem), by item id."""
        wanted = {item_identity(table, key): (table, key) for table, key in keys}
        found: dict[str, Image] = {}
        todo = list(wanted.values())
        for start in range(0, len(todo), 100):
            request: dict[str, Any] = {}
            for table, key in todo[start : start + 100]:
                request.setdefault(table, {"Keys": [], "ConsistentRead": True})["Keys"].append(key)
            while request:
                answer = self.real(client, "BatchGetItem", {"RequestItems": request})
                for table, images in answer.get("Responses", {}).items():
                    names = table_schema(self.real, client, table).keys.names
                    for image in images:
                        found[item_identity(table, {name: image[name] for name in names})] = image
                request = answer.get("UnprocessedKeys") or {}
        return found

    def single_write(self, client: BaseClient, operation: str, params: dict[str, Any]) -> Answer:
        table = params["TableName"]
        key = self.key_of(client, table, params)
        asked = params.get("ReturnValues", "NONE")
        if asked in ("NONE", "ALL_OLD"):
            answer = self.real(client, operation, {**params, "ReturnValues": "ALL_OLD"})
            before = answer.get("Attributes")
            if asked == "NONE":
                answer = {name: value for name, value in answer.items() if name != "Attributes"}
        else:
            before = self.consistent_images(client, [(table, key)]).get(item_identity(table, key))
            answer = self.real(client, operation, params)
        self.record(table, key, before)
        return answer

    def transaction(self, client: BaseClient, params: dict[str, Any]) -> Answer:
        written = []
        for action in params["TransactItems"]:
            ((kind, body),) = action.items()
            if kind != "ConditionCheck":
                written.append((body["TableName"], self.key_of(client, body["TableName"], body)))
        before = self.consistent_images(client, written)
        answer = self.real(client, "TransactWriteItems", params)
        for table, key in written:
            self.record(table, key, before.get(item_identity(table, key)))
        return answer

    def batch_write(self, client: BaseClient, params: dict[str, Any]) -> Answer:
        def keys(request_items: dict[str, Any]) -> list[tuple[str, Image]]:
            found = []
            for table, requests in request_items.items():
                for request in requests:
                    body = request.get("PutRequest") or request["DeleteRequest"]
                    found.append((table, self.key_of(client, table, body)))
            return found

        written = keys(params["RequestItems"])
        before = self.consistent_images(client, written)
        answer = self.real(client, "BatchWriteItem", params)
        left = {item_identity(table, key) for table, key in keys(answer.get("UnprocessedItems") or {})}
        for table, key in written:
            if item_identity(table, key) not in left:
                self.record(table, key, before.get(item_identity(table, key)))
        return answer

    # --- reads

    def lagging(self, table: str) -> dict[str, _Pending]:
        """The items of `table` with a write not visible yet, each with only those writes."""
        now = self.now()
        with self.lock:
            self.stats.reads += 1
            items = self.pending.get(table, {})
            for item_id, item in list(items.items()):
                item.writes = [write for write in item.writes if write[0] > now]
                if not item.writes:
                    del items[item_id]
            return {item_id: _Pending(item.key, list(item.writes)) for item_id, item in items.items()}

    def served(self, table: str, counts: dict[str, int]) -> None:
        with self.lock:
            self.stats.stale_items += counts.get("stale", 0)
            self.stats.hidden_items += counts.get("hidden", 0)
            self.stats.resurrected_items += counts.get("resurrected", 0)
            self.stats.unmodelled += counts.get("unmodelled", 0)
            if counts.get("stale", 0) or counts.get("hidden", 0) or counts.get("resurrected", 0):
                self.stats.stale_reads += 1
                self.stats.by_table[table] = self.stats.by_table.get(table, 0) + 1

    def get_item(self, client: BaseClient, params: dict[str, Any]) -> Answer:
        answer = self.real(client, "GetItem", params)
        if params.get("ConsistentRead"):
            return answer
        table = params["TableName"]
        item = self.lagging(table).get(item_identity(table, params["Key"]))
        if item is None:
            return answer
        before = item.writes[0][1]
        shown = None if before is None else projected(before, asked_names(params))
        counts: dict[str, int] = {}
        _tally(counts, answer.get("Item"), shown)
        self.served(table, counts)
        answer = {name: value for name, value in answer.items() if name != "Item"}
        if shown is not None:
            answer["Item"] = shown
        return answer

    def has_pending(self, table: str) -> bool:
        with self.lock:
            return bool(self.pending.get(table))

    def batch_get(self, client: BaseClient, params: dict[str, Any]) -> Answer:
        eventual = [table for table, request in params["RequestItems"].items() if not request.get("ConsistentRead")]
        requests = {table: params["RequestItems"][table] for table in eventual if self.has_pending(table)}
        with self.lock:
            self.stats.reads += len(eventual) - len(requests)  # `lagging` counts the others
        sent = {
            **params,
            "RequestItems": {
                table: with_keys(request, self.key_names(client, table)) if table in requests else request
                for table, request in params["RequestItems"].items()
            },
        }
        answer = self.real(client, "BatchGetItem", sent)
        responses = dict(answer.get("Responses", {}))
        for table, request in requests.items():
            pending = self.lagging(table)
            names = table_schema(self.real, client, table).keys.names
            asked = asked_names(request)
            current = {
                item_identity(table, {name: image[name] for name in names}): image for image in responses.get(table, [])
            }
            unprocessed = (answer.get("UnprocessedKeys") or {}).get(table, {}).get("Keys", [])
            skipped = {item_identity(table, key) for key in unprocessed}
            counts: dict[str, int] = {}
            shown = []
            for key in request["Keys"]:
                item_id = item_identity(table, key)
                if item_id in skipped:
                    continue
                image = current.get(item_id)
                if item_id in pending:
                    before = pending[item_id].writes[0][1]
                    old = None if before is None else projected(before, asked)
                    _tally(counts, None if image is None else projected(image, asked), old)
                    image = old
                if image is not None:
                    shown.append(projected(image, asked))
            responses[table] = shown
            self.served(table, counts)
        return {**answer, "Responses": responses}

    def query(self, client: BaseClient, operation: str, params: dict[str, Any]) -> Answer:
        table = params["TableName"]
        schema = table_schema(self.real, client, table)
        index = schema.indexes[params["IndexName"]] if "IndexName" in params else None
        if params.get("ConsistentRead") and not (index and index.is_global):
            return self.real(client, operation, params)
        if not self.has_pending(table) or params.get("Select") == "COUNT":
            answer = self.real(client, operation, params)
            with self.lock:
                self.stats.reads += 1
            if params.get("Select") == "COUNT" and self.has_pending(table):
                self.served(table, {"unmodelled": 1})
            return answer
        queried = index.keys if index else schema.keys
        key_names = list(dict.fromkeys([*queried.names, *schema.keys.names]))
        answer = self.real(client, operation, with_keys(params, key_names))
        pending = self.lagging(table)
        names = params.get("ExpressionAttributeNames", {})
        values = params.get("ExpressionAttributeValues", {})
        condition = key_condition(params["KeyConditionExpression"], names, values) if operation == "Query" else []
        order = [name for name in (queried.range, schema.keys.hash, schema.keys.range) if name and name != queried.hash]
        forward = params.get("ScanIndexForward", True)
        start, end = params.get("ExclusiveStartKey"), answer.get("LastEvaluatedKey")

        def position(image: Image) -> tuple[Any, ...]:
            return tuple(typed(image[name]) for name in order)

        def in_page(image: Image) -> bool:
            if operation == "Scan":
                return True
            here = position(image)
            after_start = start is None or (here > position(start) if forward else here < position(start))
            before_end = end is None or (here <= position(end) if forward else here >= position(end))
            return after_start and before_end

        def belongs(image: Image | None) -> bool:
            return (
                image is not None
                and all(name in image for name in queried.names)
                and holds(condition, image)
                and in_page(image)
            )

        visible = None if index is None or index.projection == "ALL" else set(key_names)
        if index is not None and index.projection == "INCLUDE":
            visible = {*(visible or ()), *index.include}
        asked = asked_names(params)
        if asked is not None:
            asked |= set(key_names)  # cut to what was asked once the page is known

        def shown(image: Image) -> Image:
            return projected(projected(image, visible), asked)

        filtered = "FilterExpression" in params
        counts: dict[str, int] = {}
        items: list[Image] = []
        seen = set()
        for image in answer["Items"]:
            item_id = item_identity(table, {name: image[name] for name in schema.keys.names})
            seen.add(item_id)
            if item_id not in pending:
                items.append(image)
                continue
            before = pending[item_id].writes[0][1]
            if filtered and before is not None:
                counts["unmodelled"] = 1  # the filter can't be evaluated on the older image
                items.append(image)
            elif belongs(before):
                assert before is not None
                _tally(counts, image, shown(before))
                items.append(shown(before))
            else:
                _tally(counts, image, None)
        limit = params.get("Limit")
        if not filtered and (operation == "Query" or not (start or end or "Segment" in params)):
            for item_id, item in pending.items():
                before = item.writes[0][1]
                if item_id in seen or not belongs(before):
                    continue
                assert before is not None
                if operation == "Scan" and limit is not None and len(items) >= limit:
                    counts["unmodelled"] = 1  # no room on the page to add back what was deleted
                    break
                _tally(counts, None, shown(before))
                items.append(shown(before))
        if operation == "Query":
            items.sort(key=position, reverse=not forward)
        answer = {**answer, "Items": items}
        if limit is not None and len(items) > limit:
            items = items[:limit]
            answer["LastEvaluatedKey"] = {name: items[-1][name] for name in key_names}
        cut = asked_names(params)
        answer.update(Items=[projected(image, cut) for image in items], Count=len(items))
        self.served(table, counts)
        return answer


def _tally(counts: dict[str, int], current: Image | None, served: Image | None) -> None:
    if current == served:
        return
    kind = "hidden" if served is None else "resurrected" if current is None else "stale"
    counts[kind] = counts.get(kind, 0) + 1


@contextmanager
def aws_read_lag_model(
    *,
    max_lag: float = LAG_SECONDS_MAX,
    min_lag: float = LAG_SECONDS_MIN,
    seed: int = 0,
    now: Callable[[], float] = time.monotonic,
) -> Iterator[LagStats]:
    """Serve GSI reads and eventually consistent reads from a view `min_lag`..`max_lag` s behind
    each write (seconds of `now`, a monotonic clock; a test of the model passes its own); yields the counts."""
    # botocore-stubs leave out this private method, the one every client call goes through.
    real: Call = wire.make_api_call
    model = _LagModel(real, lags=(min_lag, max_lag), seed=seed, now=now)
    handlers: dict[str, Callable[[BaseClient, dict[str, Any]], Answer]] = {
        "PutItem": lambda client, params: model.single_write(client, "PutItem", params),
        "UpdateItem": lambda client, params: model.single_write(client, "UpdateItem", params),
        "DeleteItem": lambda client, params: model.single_write(client, "DeleteItem", params),
        "TransactWriteItems": model.transaction,
        "BatchWriteItem": model.batch_write,
        "GetItem": model.get_item,
        "BatchGetItem": model.batch_get,
        "Query": lambda client, params: model.query(client, "Query", params),
        "Scan": lambda client, params: model.query(client, "Scan", params),
    }

    def modelled(self: BaseClient, operation_name: str, api_params: dict[str, Any]) -> Any:
        handler = handlers.get(operation_name)
        if handler is None:
            return real(self, operation_name, api_params)
        return handler(self, api_params)

    with mock.patch.object(wire, "make_api_call", modelled):
        yield model.stats
