"""Reads of reactions: a comment's counts per name and the viewer's own reactions.

No Scan: one Query of the comment's reaction counter (every name's shards at once) and one
BatchGetItem of the viewer's reaction rows, only for the names counted above 0.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from project.serving.pools import READS, pool
from social.counters import REACTIONS, counter_key
from social.models import Comment, CounterShard, Reaction
from social.reactions.names import NAMES, reaction_of_shard, reactor_key


@dataclass(frozen=True)
class Reactions:
    """A comment's reactions: the count of each name counted above 0 (in button order), and
    which of them the viewer made."""

    counts: Mapping[str, int] = field(default_factory=dict)
    mine: tuple[str, ...] = ()


NONE = Reactions()


def _counts(comment_id: str, *, consistent: bool) -> dict[str, int]:
    totals = dict.fromkeys(NAMES, 0)
    key = counter_key(kind=REACTIONS, object_id=comment_id)
    for item in CounterShard.query(key, consistent_read=consistent):
        name = reaction_of_shard(int(item.shard))
        if name is not None:
            totals[name] += int(item.count)
    # A shard can dip below zero when the shard count changed between a reaction and its
    # undo; the sum of a name's shards is still exact, and never shown below zero.
    return {name: count for name, count in totals.items() if count > 0}


def reactions_of(
    comments: Collection[Comment], *, viewer_id: str | None, fresh: Collection[str] | None = None
) -> dict[str, Reactions]:
    """The reactions of these comments and the viewer's own, as `comment_views` reads likes:
    `fresh=None`, all exact (strongly consistent); else exact for the `fresh` ones (this browser
    just reacted there) and eventually consistent for the others (half the units, up to about a
    second old). One Query per comment, concurrently, and only for comments that had a reaction
    (`has_reactions`) or are `fresh`: a list of comments nobody reacted to reads nothing. The
    viewer's rows in one BatchGetItem per consistency, only for names counted above 0 (a name
    nobody chose has no row to find)."""
    every = list(dict.fromkeys(comment.comment_id for comment in comments))
    exact = set(every if fresh is None else fresh)
    ids = [comment.comment_id for comment in comments if comment.has_reactions or comment.comment_id in exact]
    ids = list(dict.fromkeys(ids))
    if not ids:
        return dict.fromkeys(every, NONE)

    def read(comment_id: str) -> dict[str, int]:
        return _counts(comment_id, consistent=comment_id in exact)

    counts = dict(zip(ids, pool(READS).map(read, ids) if len(ids) > 1 else map(read, ids), strict=True))
    mine: dict[str, set[str]] = {comment_id: set() for comment_id in ids}
    for consistent in (True, False):
        keys = [
            (comment_id, reactor_key(user_id=viewer_id, name=name))
            for comment_id in ids
            if viewer_id and (comment_id in exact) is consistent
            for name in counts[comment_id]
        ]
        if keys:
            for row in Reaction.batch_get(keys, consistent_read=consistent):
                mine[row.comment_id].add(row.reactor_key.rpartition("#")[2])
    return {
        comment_id: Reactions(counts[comment_id], tuple(name for name in NAMES if name in mine[comment_id]))
        if comment_id in counts
        else NONE
        for comment_id in every
    }


def reaction_state(*, comment_id: str, user_id: str) -> Reactions:
    """One comment's reactions and this person's, read exactly."""
    return reactions_of([Comment(comment_id)], viewer_id=user_id)[comment_id]
