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

BACKLOG_CAP = 1000  # entries counted at most per measurement


@dataclass(frozen=True)
class Backlog:
    label: str  # what is counted, in the operator's words
    count: int
    capped: bool = False  # counting stopped at the cap: there are at least `count`
    oldest_at: float | None = None  # epoch seconds of the oldest waiting item, when measurable


def backlog_of_parts(
    index,
    *,
    parts: int,
    label: str,
    oldest_at: Callable[[object], float],
    range_key_condition=None,
    cap: int = BACKLOG_CAP,
) -> Backlog:
    """Count the entries of a write-sharded index's partitions `"0".."parts-1"`, oldest first.

    One Query per partition with `Limit = ceil(cap / parts)`, ascending by the index's sort
    key, so the first entry of each partition is its oldest. Cost: at most `cap` entries read
    in all (a Query is billed by the size of what it reads, 4 KB per RCU, halved for eventually
    consistent reads), e.g. 1,000 keys-only entries of ~100 bytes: about 13 RCU, whatever the
    real backlog; an empty queue costs one 0.5 RCU Query per partition.
    """
    limit = max(1, math.ceil(cap / parts))
    count, capped, oldest = 0, False, None
    for part in range(parts):
        seen = 0
        for entry in index.query(str(part), range_key_condition=range_key_condition, limit=limit):
            if seen == 0:
                at = oldest_at(entry)
                oldest = at if oldest is None else min(oldest, at)
            seen += 1
        count += seen
        capped = capped or seen >= limit
    return Backlog(label=label, count=count, capped=capped, oldest_at=oldest)
