"""The six reactions and how their counts share one sharded counter per comment.

A comment's reactions are one counter (`reaction#<comment_id>`, social/counters.py): each
reaction's name owns a range of its shard numbers (`heart`'s shard 3 is item 1003), so the
counts are exact per name, one strongly consistent Query reads all six, and the sum of every
item, which the aggregator writes into `counter_totals`, is the comment's reaction total
that the popular ranking orders by (`?kind=reactions`).
"""

from __future__ import annotations

from django.utils.translation import gettext

from project.errors import ApplicationError

# In the order buttons show them.
REACTIONS: dict[str, str] = {
    "thumbs_up": "\N{THUMBS UP SIGN}",
    "heart": "\N{HEAVY BLACK HEART}\N{VARIATION SELECTOR-16}",
    "laugh": "\N{SMILING FACE WITH OPEN MOUTH AND SMILING EYES}",
    "hooray": "\N{PARTY POPPER}",
    "confused": "\N{CONFUSED FACE}",
    "eyes": "\N{EYES}",
}
NAMES = tuple(REACTIONS)
# Far above COUNTER_SHARDS_MAX (100): a name's shards never reach the next name's range.
SHARD_SPAN = 1000


def reaction_name_check(name: str) -> str:
    """The name if it is one of the six, else a 400 on `name`."""
    if name not in REACTIONS:
        raise ApplicationError(
            gettext("Not a reaction: use one of %(join_names)s.") % {"join_names": ", ".join(NAMES)}, field="name"
        )
    return name


def reaction_shard(*, name: str, shard: int) -> int:
    """The counter item a reaction `name` adds to when its writer picked `shard` (0..shards-1)."""
    return NAMES.index(name) * SHARD_SPAN + shard


def reaction_of_shard(shard: int) -> str | None:
    """The reaction name whose range holds counter item `shard` (None: not a reaction's)."""
    index = shard // SHARD_SPAN
    return NAMES[index] if 0 <= index < len(NAMES) else None


def reactor_key(*, user_id: str, name: str) -> str:
    """The sort key of one person's reaction on a comment (`7#heart`)."""
    return f"{user_id}#{name}"
