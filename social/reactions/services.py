"""Reactions: a person's reaction row, a shard of the comment's reaction counter and the caller's
event (actions/reactions.py: the author's notification), one transaction.

Built as a like is (actions/likes.py): only items no other reactor of the comment writes at
that moment (the person's row for that reaction, one counter shard that grows when shards
collide, an event under its own key), so reactions of one popular comment do not cancel each
other on AWS; what every reactor of the comment shares (the counter's due flag, the author's
notification and badge) is written by the fold of the events (notifications/like_fold/).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.utils.translation import gettext

from project.errors import NotFound
from project.serving.pools import READS, pool
from social.account.limits import account_limit_prepare
from social.counter_writes import counter_transact
from social.counters import REACTIONS, counter_add, counter_key, counter_shard_count
from social.models import Comment, Reaction
from social.reactions.names import NAMES, reaction_name_check, reaction_shard, reactor_key
from social.reactions.selectors import Reactions, reaction_state
from social.selectors import comment_find
from social.services import comment_flag_mark, comment_get_visible

if TYPE_CHECKING:
    from project.dynamo.transactions import LabelledTransactWrite


# Adds the reaction's event to its transaction: (transaction, comment, contended) where
# `contended` says an earlier attempt of this write collided (the request then leaves the fold
# to the folder, as a like does).
EventAdd = Callable[["LabelledTransactWrite", Comment, bool], None]


def _reaction_transaction(
    transaction: LabelledTransactWrite,
    *,
    comment: Comment,
    user_id: str,
    name: str,
    adding: bool,
    shard: int,
    event: EventAdd,
    contended: bool,
) -> None:
    """The one place the reaction (or its undo) transaction is built: the row put on condition it
    is absent (deleted on condition it is there), +1 (-1) on one shard of the comment's
    reaction counter, and the event (`event`). No condition on the comment item, which every
    reactor would hold. Three actions under 1 KB: 6 write units, and 2 for the row's keys-only
    `by_user` index entry: 8, as a like."""
    comment_id = comment.comment_id
    row = Reaction(comment_id, reactor_key(user_id=user_id, name=name), user_id=user_id)
    if adding:
        transaction.save(row, condition=Reaction.reactor_key.does_not_exist())
    else:
        transaction.delete(row, condition=Reaction.reactor_key.exists())
    key = counter_key(kind=REACTIONS, object_id=comment_id)
    counter_add(transaction, key=key, delta=1 if adding else -1, shard=shard, flag=False)
    event(transaction, comment, contended)


@dataclass(frozen=True)
class ReactionWritten:
    ok: bool  # False: the row already was as asked, nothing written
    contended: bool  # an attempt collided before it committed (the fold is left to the folder)


def reaction_write(
    *, comment_id: str, user_id: str, name: str, adding: bool, event: EventAdd, erasing: bool = False
) -> ReactionWritten:
    """Run the transaction (a 400 on `name` for an unknown reaction, NotFound for a comment that is
    not visible, or with `erasing` one that does not exist).

    Reads first: the comment (consistently) while the person's like budget, which reactions
    share, is counted (RateLimited over it: nothing written), and the counter's shard count (a
    GetItem of its `counter_totals` item, kept SHARD_OVERRIDE_CACHE_SECONDS by the process).
    `erasing`: a deleted account's reaction, on any comment (hidden or deleted too), no budget.
    A comment's first reaction then records `has_reactions` on it (`comment_flag_mark`).
    """
    reaction_name_check(name)
    if erasing:
        found = comment_find(comment_id=comment_id)
        if found is None:
            raise NotFound(gettext("No such comment."))
        comment = found
    else:
        count_against_budget = account_limit_prepare(name="like", user_id=user_id)
        budget = pool(READS).submit(count_against_budget) if count_against_budget else None
        try:
            comment = comment_get_visible(comment_id=comment_id)
        finally:
            if budget is not None:
                budget.result()
    key = counter_key(kind=REACTIONS, object_id=comment_id)
    written = counter_transact(
        key=key,
        shards=counter_shard_count(key=key),
        build=lambda transaction, shard, contended: _reaction_transaction(
            transaction,
            comment=comment,
            user_id=user_id,
            name=name,
            adding=adding,
            shard=reaction_shard(name=name, shard=shard),
            event=event,
            contended=contended,
        ),
        what=f"reaction_{'add' if adding else 'remove'}",
    )
    if written.outcome.ok and adding and not erasing and not comment.has_reactions:
        # After its first reaction committed and before the answer, so list pages read the
        # reaction counts of such comments only. Once per comment ever reacted to; a failed
        # (or never made) write is made by its next reaction, and until then its counts show
        # where every count is read exactly (`GET /api/comments/<id>/`, a reaction's answer).
        comment_flag_mark(comment, Comment.has_reactions, what="comment_reacted_mark")
    return ReactionWritten(ok=written.outcome.ok, contended=written.contended)


def reactions_after_add(*, comment_id: str, user_id: str, name: str) -> Reactions:
    """The answer to a reaction: the comment's reactions read exactly right after, this one in
    them even if the same person's undo in another request landed in between (the answer
    describes the moment it committed)."""
    state = reaction_state(comment_id=comment_id, user_id=user_id)
    counts = {
        n: max(1, state.counts.get(n, 0)) if n == name else state.counts[n]
        for n in NAMES
        if n == name or n in state.counts
    }
    return Reactions(counts, tuple(n for n in NAMES if n == name or n in state.mine))


def reactions_after_remove(*, comment_id: str, user_id: str, name: str) -> Reactions:
    """The answer to an undo: the comment's reactions read exactly right after, without this one."""
    state = reaction_state(comment_id=comment_id, user_id=user_id)
    return Reactions(state.counts, tuple(mine for mine in state.mine if mine != name))
