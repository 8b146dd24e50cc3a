"""A worker's backlog: how much work waits for it and how old the oldest of it is.

Each polling worker has a selector that measures its own queue (`like_events_backlog`,
`counters_due_backlog`, ...) and returns a `Backlog`; the heartbeat stores it. Counting
is bounded: `backlog_of_parts` reads at most `cap` index entries in all, so a huge
backlog costs the same as a full one (and is reported as "at least cap").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from pynamodb.models import Model

from project.dynamo.clients import client

BACKLOG_CAP = 1000  # entries counted at most per measurement


@dataclass(frozen=True)
class Backlog:
    label: str  # what is counted, in the operator's words
    count: int
    capped: bool = False  # counting stopped at the cap: there are at least `count`
    oldest_at: float | None = None  # epoch seconds of the oldest waiting item, when measurable


def backlog_of_parts(
    model: type[Model],
    *,
    index: str,
    part_key: str,
    sort_key: str,
    parts: int,
    label: str,
    oldest_at: Callable[[str], float],
    sort_at_most: float | None = None,
    cap: int = BACKLOG_CAP,
) -> Backlog:
    """Count the entries of a write-sharded index's partitions `"0".."parts-1"` (with a sort
    key of at most `sort_at_most`, when given), and find the oldest.

    One Query per partition with `Limit = ceil(cap / parts)`, ascending by the sort key, so the
    first entry of each partition is its oldest; only the sort key is returned, as the raw
    value `oldest_at` turns into epoch seconds (no model is built: a full page costs about as
    much CPU as a `Select=COUNT`). Cost: at most `cap` entries read in all (a Query is billed
    by the size of what it reads, 4 KB per RCU, halved for eventually consistent reads):
    10 RCU for 1,000 keys-only entries (bench/health.py), however long the real queue;
    0.5 RCU per partition when nothing waits.
    """
    limit = max(1, math.ceil(cap / parts))
    condition = "#part = :part"
    values: dict[str, dict[str, str]] = {}
    if sort_at_most is not None:
        condition += " AND #sort <= :most"
        values[":most"] = {"N": str(sort_at_most)}
    count, capped, oldest = 0, False, None
    for part in range(parts):
        answer = client().query(
            TableName=model.Meta.table_name,
            IndexName=index,
            KeyConditionExpression=condition,
            ExpressionAttributeNames={"#part": part_key, "#sort": sort_key},
            ExpressionAttributeValues={":part": {"S": str(part)}, **values},
            ProjectionExpression="#sort",
            Limit=limit,
        )
        if answer["Items"]:
            (first,) = answer["Items"][0][sort_key].values()  # {"S": "..."} or {"N": "..."}
            at = oldest_at(first)
            oldest = at if oldest is None else min(oldest, at)
        count += answer["Count"]
        capped = capped or answer["Count"] >= limit
    return Backlog(label=label, count=count, capped=capped, oldest_at=oldest)


def backlog_due_ms(model: type[Model], *, parts: int, label: str, cap: int, now_ms: int) -> Backlog:
    """The items of a sharded queue due by `now_ms` (`backlog_of_parts`): its `by_due` index keys
    them by `shard` ("0".."parts-1") and sorts them by `due_at`, in epoch milliseconds."""
    return backlog_of_parts(
        model,
        index="by_due",
        part_key="shard",
        sort_key="due_at",
        parts=parts,
        label=label,
        oldest_at=lambda due_at: int(due_at) / 1000,
        sort_at_most=now_ms,
        cap=cap,
    )
