"""The popular-comments ranking: the `ranking` index of `counter_totals`, and its reads.

The aggregator (social/aggregation.py) writes each counter's total with the two
attributes of this index: `rank_part`, `<kind>#<n>` (n from a hash of the object id,
RANKING_SHARDS partitions), so aggregations of different comments update different
partitions; and `rank_sort`, the zero-padded total and the object id. The top N
merges the partitions' descending Queries (docs/explanation/counters.md).
"""

from __future__ import annotations

import heapq
import itertools
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings

from social.counters import KINDS
from social.models import Comment, CounterTotal
from social.selectors import CommentView, comment_views

RANKING_LIMIT_MAX = 100
_TOTAL_DIGITS = 15


@dataclass(frozen=True)
class RankedComment:
    rank: int
    total: int
    aggregated_at: datetime | None
    comment: CommentView


def rank_part(kind: str, object_id: str) -> str:
    """The ranking partition of one counter (`like#4`)."""
    return f"{kind}#{zlib.crc32(object_id.encode()) % settings.RANKING_SHARDS}"


def rank_sort(total: int, object_id: str) -> str:
    """The ranking sort key of one counter's total."""
    # Zero-padded so text order is numeric order; the id after it makes ties deterministic.
    return f"{total:0{_TOTAL_DIGITS}d}#{object_id}"


def _ranked_totals(kind: str, page_size: int) -> Iterator[CounterTotal]:
    """Every ranked counter of `kind`, highest total first, merged across ranking shards."""
    shards = [
        CounterTotal.ranking_index.query(f"{kind}#{part}", scan_index_forward=False, page_size=page_size)
        for part in range(settings.RANKING_SHARDS)
    ]
    return heapq.merge(*shards, key=lambda item: item.rank_sort, reverse=True)


def ranking_top(
    *, kind: str, limit: int, viewer_id: str | None = None, include_hidden: bool = False
) -> list[RankedComment]:
    """The `limit` comments with the highest aggregated total of `kind` (likes or views).

    Ties: by comment id, descending (deterministic). Hidden and deleted comments (and
    comments that no longer exist) are skipped at read time, so hiding, showing or
    deleting a comment takes effect at once without touching the ranking.
    """
    if kind not in KINDS:
        raise ValueError(kind)
    limit = max(1, min(RANKING_LIMIT_MAX, limit))
    totals = _ranked_totals(kind, page_size=limit + 5)
    ranked: list[RankedComment] = []
    while len(ranked) < limit:
        batch = list(itertools.islice(totals, limit - len(ranked) + 5))
        if not batch:
            break
        # Consistent: hiding or deleting a comment takes it out of the ranking at once (the
        # moderator's next page shows it gone), as the ranking's own index never says so.
        found = {c.comment_id: c for c in Comment.batch_get([t.object_id for t in batch], consistent_read=True)}
        shown = [
            (total, found[total.object_id])
            for total in batch
            if total.object_id in found
            and not found[total.object_id].deleted_at
            and (include_hidden or not found[total.object_id].hidden)
        ]
        views = comment_views([comment for _, comment in shown], viewer_id=viewer_id)
        for (total, _), view in zip(shown, views, strict=True):
            if len(ranked) == limit:
                break
            aggregated_at = datetime.fromtimestamp(float(total.aggregated_at), UTC) if total.aggregated_at else None
            ranked.append(RankedComment(len(ranked) + 1, int(total.total), aggregated_at, view))
    return ranked
